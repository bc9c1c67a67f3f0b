package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

func (s *Server) handleProfile(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	p, err := s.svc.Profile(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// Profile implements engram.ProfileReader with GET /v1/profile.
func (c *Client) Profile(ctx context.Context, s engram.Scope) (*engram.Profile, error) {
	return doNew[engram.Profile](ctx, c.conn, "GET", "/v1/profile", scopeValues(s), nil)
}

package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

// conflictsResponse is the body of GET /v1/conflicts.
type conflictsResponse struct {
	Conflicts []engram.Conflict `json:"conflicts"`
}

func (s *Server) handleListConflicts(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	out, err := s.svc.ListConflicts(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, conflictsResponse{Conflicts: nonNil(out)})
	return nil
}

func (s *Server) handleResolveConflict(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "conflict")
	if err != nil {
		return err
	}
	var req engram.ResolveConflictRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := engram.CheckID("keep", req.Keep); err != nil {
		return err
	}
	res, err := s.svc.ResolveConflict(r.Context(), sc, id, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

var _ engram.ConflictService = (*Client)(nil)

// ListConflicts implements engram.ConflictService.
func (c *Client) ListConflicts(ctx context.Context, s engram.Scope) ([]engram.Conflict, error) {
	var res conflictsResponse
	if err := c.do(ctx, "GET", "/v1/conflicts", scopeValues(s), nil, &res); err != nil {
		return nil, err
	}
	return res.Conflicts, nil
}

// ResolveConflict implements engram.ConflictService.
func (c *Client) ResolveConflict(ctx context.Context, s engram.Scope, id string, req engram.ResolveConflictRequest) (*engram.ConflictResolution, error) {
	path, err := idPath("/v1/conflicts/", id, "/resolve")
	if err != nil {
		return nil, err
	}
	return doNew[engram.ConflictResolution](ctx, c.conn, "POST", path, scopeValues(s), req)
}

package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

func (s *graphRoutes) handleListCommunities(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	l, err := s.svc.ListCommunities(r.Context(), sc)
	if err != nil {
		return err
	}
	l.Communities = nonNil(l.Communities)
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *graphRoutes) handleGetCommunity(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "community")
	if err != nil {
		return err
	}
	d, err := s.svc.GetCommunity(r.Context(), sc, id)
	if err != nil {
		return err
	}
	d.Entities = nonNil(d.Entities)
	writeJSON(w, http.StatusOK, d)
	return nil
}

// refreshRequest is the optional body of POST /v1/communities/refresh.
type refreshRequest struct {
	// Full recomputes every community of the user.
	Full bool `json:"full,omitempty"`
}

func (s *graphRoutes) handleRefreshCommunities(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	var req refreshRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return err
	}
	res, err := s.svc.RefreshCommunities(r.Context(), sc, req.Full)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

var _ engram.CommunityService = (*Client)(nil)

// ListCommunities implements engram.CommunityService with GET
// /v1/communities.
func (c *graphClient) ListCommunities(ctx context.Context, s engram.Scope) (*engram.CommunityList, error) {
	return doNew[engram.CommunityList](ctx, c.conn, "GET", "/v1/communities", scopeValues(s), nil)
}

// GetCommunity implements engram.CommunityService with GET
// /v1/communities/{id}.
func (c *graphClient) GetCommunity(ctx context.Context, s engram.Scope, id string) (*engram.CommunityDetail, error) {
	p, err := idPath("/v1/communities/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.CommunityDetail](ctx, c.conn, "GET", p, scopeValues(s), nil)
}

// RefreshCommunities implements engram.CommunityService with POST
// /v1/communities/refresh.
func (c *graphClient) RefreshCommunities(ctx context.Context, s engram.Scope, full bool) (*engram.RefreshResult, error) {
	return doNew[engram.RefreshResult](ctx, c.conn, "POST", "/v1/communities/refresh", scopeValues(s), refreshRequest{Full: full})
}

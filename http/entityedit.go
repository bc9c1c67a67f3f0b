package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

// mergeRequest is the body of POST /v1/entities/{id}/merge.
type mergeRequest struct {
	From []string `json:"from"`
}

func (s *graphRoutes) handleMergeEntities(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "entity")
	if err != nil {
		return err
	}
	var req mergeRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	ent, err := s.svc.MergeEntities(r.Context(), sc, id, req.From)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ent)
	return nil
}

func (s *graphRoutes) handleSplitEntity(w http.ResponseWriter, r *http.Request, q query) error {
	return answerIDBody(w, r, q, "entity", http.StatusOK, s.svc.SplitEntity)
}

// entityHistoryResponse is the body of GET /v1/entities/{id}/history.
type entityHistoryResponse struct {
	Versions []engram.EntityVersion `json:"versions"`
}

func (s *graphRoutes) handleEntityHistory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "entity")
	if err != nil {
		return err
	}
	vs, err := s.svc.EntityHistory(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entityHistoryResponse{Versions: nonNil(vs)})
	return nil
}

var _ engram.GraphEditor = (*Client)(nil)

// MergeEntities implements engram.GraphEditor with POST
// /v1/entities/{id}/merge.
func (c *graphClient) MergeEntities(ctx context.Context, s engram.Scope, id string, from []string) (*engram.Entity, error) {
	if err := engram.CheckID("entity", id); err != nil {
		return nil, err
	}
	return doNew[engram.Entity](ctx, c.conn, "POST", "/v1/entities/"+id+"/merge", scopeValues(s), mergeRequest{From: from})
}

// SplitEntity implements engram.GraphEditor with POST
// /v1/entities/{id}/split.
func (c *graphClient) SplitEntity(ctx context.Context, s engram.Scope, id string, r engram.SplitRequest) (*engram.Entity, error) {
	if err := engram.CheckID("entity", id); err != nil {
		return nil, err
	}
	return doNew[engram.Entity](ctx, c.conn, "POST", "/v1/entities/"+id+"/split", scopeValues(s), r)
}

// EntityHistory implements engram.GraphEditor with GET
// /v1/entities/{id}/history.
func (c *graphClient) EntityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.EntityVersion, error) {
	if err := engram.CheckID("entity", id); err != nil {
		return nil, err
	}
	var out entityHistoryResponse
	if err := c.do(ctx, "GET", "/v1/entities/"+id+"/history", scopeValues(s), nil, &out); err != nil {
		return nil, err
	}
	return out.Versions, nil
}

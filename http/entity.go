package http

import (
	"context"
	"net/http"
	"strconv"

	"github.com/engramhq/engram"
)

// The parameters of the entity graph's endpoints.
var (
	entityList  = withScope(append([]param{{name: "type"}, {name: "prefix"}}, pageParams...)...)
	graphParams = withScope(param{name: "entity"}, param{name: "hops"}, param{name: "limit"})
)

func (s *graphRoutes) handleListEntities(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	f := engram.EntityFilter{Type: q.str("type"), Prefix: q.str("prefix"), Cursor: q.str("cursor")}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	page, err := s.svc.ListEntities(r.Context(), sc, f)
	if err != nil {
		return err
	}
	page.Entities = nonNil(page.Entities)
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *graphRoutes) handleGetEntity(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "entity")
	if err != nil {
		return err
	}
	d, err := s.svc.GetEntity(r.Context(), sc, id)
	if err != nil {
		return err
	}
	d.Memories, d.Relations, d.Timeline = nonNil(d.Memories), nonNil(d.Relations), nonNil(d.Timeline)
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *graphRoutes) handleDeleteEntity(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "entity")
	if err != nil {
		return err
	}
	if err := s.svc.DeleteEntity(r.Context(), sc, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *graphRoutes) handleGraph(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	req := engram.GraphRequest{Entity: q.str("entity")}
	if req.Hops, err = q.int("hops"); err != nil {
		return err
	}
	if req.Limit, err = q.int("limit"); err != nil {
		return err
	}
	out, err := s.svc.Graph(r.Context(), sc, req)
	if err != nil {
		return err
	}
	out.Nodes, out.Edges = nonNil(out.Nodes), nonNil(out.Edges)
	writeJSON(w, http.StatusOK, out)
	return nil
}

var _ engram.GraphService = (*Client)(nil)

// ListEntities implements engram.GraphService with GET /v1/entities.
func (c *graphClient) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) (*engram.EntityPage, error) {
	q := scopeValues(s)
	setString(q, "type", f.Type)
	setString(q, "prefix", f.Prefix)
	setString(q, "cursor", f.Cursor)
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return doNew[engram.EntityPage](ctx, c.conn, "GET", "/v1/entities", q, nil)
}

// GetEntity implements engram.GraphService with GET /v1/entities/{id}.
func (c *graphClient) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.EntityDetail, error) {
	p, err := idPath("/v1/entities/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.EntityDetail](ctx, c.conn, "GET", p, scopeValues(s), nil)
}

// Graph implements engram.GraphService with GET /v1/graph.
func (c *graphClient) Graph(ctx context.Context, s engram.Scope, r engram.GraphRequest) (*engram.Graph, error) {
	q := scopeValues(s)
	setString(q, "entity", r.Entity)
	setInt(q, "hops", r.Hops)
	setInt(q, "limit", r.Limit)
	return doNew[engram.Graph](ctx, c.conn, "GET", "/v1/graph", q, nil)
}

// DeleteEntity implements engram.GraphService with DELETE
// /v1/entities/{id}.
func (c *graphClient) DeleteEntity(ctx context.Context, s engram.Scope, id string) error {
	p, err := idPath("/v1/entities/", id, "")
	if err != nil {
		return err
	}
	return c.do(ctx, "DELETE", p, scopeValues(s), nil, nil)
}

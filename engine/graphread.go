package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/engramhq/engram"
)

var _ engram.GraphService = (*Engine)(nil)

// maxEntityMemories bounds the memories and timeline an entity's detail
// lists.
const maxEntityMemories = 200

// ListEntities implements engram.GraphService. A bad filter is EINVALID
// naming the field (see engram.EntityFilter.Validate).
func (e *graphs) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) (*engram.EntityPage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	page := &engram.EntityPage{Entities: []engram.Entity{}}
	err = e.store.View(ctx, func(r engram.Reader) error {
		var err error
		if narrowed(s) {
			page.Entities, page.Next, err = listVisible(ctx, r, s, f)
		} else {
			page.Entities, page.Next, err = r.ListEntities(ctx, engram.EntityScope(s), f)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// GetEntity implements engram.GraphService. The memories and the timeline
// are those of the entity's mentions that s itself sees (a session scope
// sees its session's).
func (e *graphs) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.EntityDetail, error) {
	s, err := readTarget(s, "entity", id)
	if err != nil {
		return nil, err
	}
	d := &engram.EntityDetail{Memories: []engram.Memory{}, Relations: []engram.Relation{}, Timeline: []engram.TimelineEntry{}}
	err = e.store.View(ctx, func(r engram.Reader) error {
		es := engram.EntityScope(s)
		ent, err := r.GetEntity(ctx, es, id)
		if err != nil {
			return err
		}
		vis, err := visibleEntities(ctx, r, s, []engram.Entity{*ent})
		if err != nil || len(vis) == 0 {
			return cmp.Or(err, errNoEntity(id))
		}
		d.Entity = vis[0]
		if err := entityMemories(ctx, r, s, id, d); err != nil {
			return err
		}
		rs, err := r.Relations(ctx, es, []string{id}, engram.RelationFilter{All: true, Limit: relationFetch(s, engram.DefaultGraphLimit)})
		if err != nil {
			return err
		}
		rs, err = visibleRelations(ctx, r, s, rs)
		d.Relations = rs[:min(len(rs), engram.DefaultGraphLimit)]
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// entityMemories fills d's memories (active, newest first) and timeline
// (every status, oldest first) from the entity's mentions that s sees.
func entityMemories(ctx context.Context, r engram.Reader, s engram.Scope, id string, d *engram.EntityDetail) error {
	ms, err := r.EntityMentions(ctx, engram.EntityScope(s), []string{id}, maxEntityMemories)
	if err != nil {
		return err
	}
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].MemoryID
	}
	mems, err := r.GetMemories(ctx, s, ids)
	if err != nil {
		return err
	}
	byID := make(map[string]*engram.Memory, len(mems))
	for i := range mems {
		if mems[i].Kind != engram.KindVault {
			byID[mems[i].ID] = &mems[i]
		}
	}
	for _, mn := range ms { // newest first
		m := byID[mn.MemoryID]
		if m == nil {
			continue
		}
		if m.Status == engram.StatusActive {
			d.Memories = append(d.Memories, *m)
		}
		d.Timeline = append(d.Timeline, engram.TimelineEntry{At: mn.At, MemoryID: m.ID, Abstraction: m.Abstraction, Status: m.Status})
	}
	slices.Reverse(d.Timeline)
	return nil
}

// Graph implements engram.GraphService: around an entity, the relations
// within req.Hops of it, breadth first; else the scope's heaviest
// relations. Nodes are the ends of the edges (and the entity asked
// about). An entity asked about that s does not see (see entityVisible)
// is ENOTFOUND, as GetEntity answers.
func (e *graphs) Graph(ctx context.Context, s engram.Scope, req engram.GraphRequest) (*engram.Graph, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	limit, hops := req.Limit, max(req.Hops, 1)
	if limit == 0 {
		limit = engram.DefaultGraphLimit
	}
	out := &engram.Graph{Nodes: []engram.Entity{}, Edges: []engram.Relation{}}
	err = e.store.View(ctx, func(r engram.Reader) error {
		var err error
		es := engram.EntityScope(s)
		keep := func(rs []engram.Relation) ([]engram.Relation, error) { return visibleRelations(ctx, r, s, rs) }
		var seen []string
		if req.Entity == "" {
			out.Edges, err = r.Relations(ctx, es, nil, engram.RelationFilter{Limit: relationFetch(s, limit)})
			if err == nil {
				out.Edges, err = keep(out.Edges)
				out.Edges = out.Edges[:min(len(out.Edges), limit)]
			}
		} else {
			seen = []string{req.Entity}
			out.Edges, err = around(ctx, r, s, req.Entity, hops, limit, keep)
		}
		if err != nil {
			return err
		}
		for _, r := range out.Edges {
			for _, id := range []string{r.Source, r.Target} {
				if !slices.Contains(seen, id) {
					seen = append(seen, id)
				}
			}
		}
		if out.Nodes, err = entitiesOf(ctx, r, es, seen); err != nil {
			return err
		}
		if out.Nodes, err = visibleEntities(ctx, r, s, out.Nodes); err != nil {
			return err
		}
		return tagCommunities(ctx, r, es, out.Nodes)
	})
	if err != nil {
		return nil, err
	}
	if out.Edges == nil {
		out.Edges = []engram.Relation{}
	}
	return out, nil
}

// around returns the current relations within hops of id that keep
// keeps, at most limit, walking only those; ENOTFOUND when s does not see
// the entity id, as for one that never existed.
func around(ctx context.Context, r engram.Reader, s engram.Scope, id string, hops, limit int, keep func([]engram.Relation) ([]engram.Relation, error)) ([]engram.Relation, error) {
	es := engram.EntityScope(s)
	if _, err := r.GetEntity(ctx, es, id); err != nil {
		return nil, err
	}
	if ok, err := entityVisible(ctx, r, s, id); err != nil || !ok {
		return nil, cmp.Or(err, errNoEntity(id))
	}
	var edges []engram.Relation
	visited := []string{id}
	frontier := []string{id}
	for range hops {
		if len(frontier) == 0 || len(edges) >= limit {
			break
		}
		rs, err := r.Relations(ctx, es, frontier, engram.RelationFilter{Limit: relationFetch(s, limit-len(edges))})
		if err == nil {
			rs, err = keep(rs)
		}
		if err != nil {
			return nil, err
		}
		rs = rs[:min(len(rs), limit-len(edges))]
		var next []string
		for _, r := range rs {
			if slices.ContainsFunc(edges, func(x engram.Relation) bool { return x.ID == r.ID }) {
				continue
			}
			edges = append(edges, r)
			for _, end := range []string{r.Source, r.Target} {
				if !slices.Contains(visited, end) {
					visited = append(visited, end)
					next = append(next, end)
				}
			}
		}
		frontier = next
	}
	return edges, nil
}

// entitiesOf reads the entities with ids, skipping any that are gone.
func entitiesOf(ctx context.Context, g engram.GraphReader, es engram.Scope, ids []string) ([]engram.Entity, error) {
	out := make([]engram.Entity, 0, len(ids))
	for _, id := range ids {
		ent, err := g.GetEntity(ctx, es, id)
		if engram.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, *ent)
	}
	return out, nil
}

// DeleteEntity implements engram.GraphService. The entity's name leaves
// the store with it (the store is scrubbed afterwards, as after a hard
// delete); the memories that named it stay, and a later write of one of
// them may name it again.
func (e *graphs) DeleteEntity(ctx context.Context, s engram.Scope, id string) error {
	s, err := writeTarget(s, "entity", id)
	if err != nil {
		return err
	}
	if narrowed(s) {
		return engram.Errorf(engram.EINVALID, "an entity belongs to a user across agents and sessions: delete it with a scope that names neither")
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var owner engram.Namespace
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		ent, err := tx.GetEntity(ctx, engram.EntityScope(s), id)
		if err != nil {
			return err
		}
		owner = ent.Namespace
		if err := tx.DeleteEntity(ctx, owner, id); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, e.audit(owner, actor, "entity.delete", []string{id}, "", now))
	})
	if err == nil {
		e.afterPurge(ctx, owner, nil, false)
	}
	return err
}

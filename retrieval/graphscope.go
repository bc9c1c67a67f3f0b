package retrieval

import (
	"cmp"
	"context"
	"slices"

	"github.com/engramhq/engram"
)

// graphReads is what the graph channel and the entity expander read of
// the entity graph: a store's engram.GraphReader, or its view from a
// narrowed scope (narrowGraph).
type graphReads interface {
	FindEntities(ctx context.Context, s engram.Scope, keys []string) ([]engram.Entity, error)
	EntitiesByToken(ctx context.Context, s engram.Scope, tokens []string, limit int) ([]engram.Entity, error)
	EntityMentions(ctx context.Context, s engram.Scope, entityIDs []string, limit int) ([]engram.Mention, error)
	MemoryMentions(ctx context.Context, s engram.Scope, memoryIDs []string) ([]engram.Mention, error)
	Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error)
}

// graphOf returns the graph g's search reads through g.Reader, which
// must be set. An entity belongs to a user across agents and sessions, so
// for a scope naming an agent or a session the store's graph is narrowed
// to what the scope's own memories make of it (see narrowGraph): a search
// there must neither start from, nor walk through, what only other
// memories say.
func graphOf(g *Gathering) graphReads {
	if g.Scope.AllAgents() && g.Scope.Session == "" {
		return g.Reader
	}
	return &narrowGraph{gr: g.Reader, r: g.Reader, scope: g.Scope, reads: map[string]bool{}, mentions: map[string][]engram.Mention{}}
}

// narrowGraph is the graph as a scope narrowed to an agent or a session
// sees it: the mentions of memories the scope reads, the entities with
// such a mention (their Mentions counting only those), and the relations
// between such entities that such a memory supports (with only that
// evidence, and its weight). It reads for one search and remembers what
// it read; every method fails with the store's error.
type narrowGraph struct {
	gr       engram.GraphReader
	r        engram.Reader
	scope    engram.Scope
	reads    map[string]bool             // memory id: the scope reads it
	mentions map[string][]engram.Mention // entity id: its mentions the scope reads, newest first
}

// readable returns which of ids the scope reads.
func (n *narrowGraph) readable(ctx context.Context, ids []string) (map[string]bool, error) {
	var ask []string
	for _, id := range ids {
		if _, ok := n.reads[id]; !ok && !slices.Contains(ask, id) {
			ask = append(ask, id)
		}
	}
	for len(ask) > 0 {
		k := min(len(ask), engram.MaxEntityLimit)
		ms, err := n.r.GetMemories(ctx, n.scope, ask[:k])
		if err != nil {
			return nil, err
		}
		for _, id := range ask[:k] {
			n.reads[id] = false
		}
		for i := range ms {
			n.reads[ms[i].ID] = true
		}
		ask = ask[k:]
	}
	return n.reads, nil
}

// entityMentions returns the mentions of the entity id that the scope
// reads, newest first.
func (n *narrowGraph) entityMentions(ctx context.Context, es engram.Scope, id string) ([]engram.Mention, error) {
	if ms, ok := n.mentions[id]; ok {
		return ms, nil
	}
	all, err := n.gr.EntityMentions(ctx, es, []string{id}, 0)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(all))
	for i := range all {
		ids[i] = all[i].MemoryID
	}
	reads, err := n.readable(ctx, ids)
	if err != nil {
		return nil, err
	}
	ms := slices.DeleteFunc(all, func(m engram.Mention) bool { return !reads[m.MemoryID] })
	n.mentions[id] = ms
	return ms, nil
}

// visible returns those of es with a mention the scope reads, their
// Mentions counting only those.
func (n *narrowGraph) visible(ctx context.Context, s engram.Scope, es []engram.Entity) ([]engram.Entity, error) {
	out := es[:0]
	for _, e := range es {
		ms, err := n.entityMentions(ctx, s, e.ID)
		if err != nil {
			return nil, err
		}
		if len(ms) > 0 {
			e.Mentions = len(ms)
			out = append(out, e)
		}
	}
	return out, nil
}

// FindEntities is engram.GraphReader's, narrowed.
func (n *narrowGraph) FindEntities(ctx context.Context, s engram.Scope, keys []string) ([]engram.Entity, error) {
	es, err := n.gr.FindEntities(ctx, s, keys)
	if err != nil {
		return nil, err
	}
	return n.visible(ctx, s, es)
}

// EntitiesByToken is engram.GraphReader's, narrowed.
func (n *narrowGraph) EntitiesByToken(ctx context.Context, s engram.Scope, tokens []string, limit int) ([]engram.Entity, error) {
	es, err := n.gr.EntitiesByToken(ctx, s, tokens, limit)
	if err != nil {
		return nil, err
	}
	return n.visible(ctx, s, es)
}

// EntityMentions is engram.GraphReader's, narrowed.
func (n *narrowGraph) EntityMentions(ctx context.Context, s engram.Scope, entityIDs []string, limit int) ([]engram.Mention, error) {
	var out []engram.Mention
	for _, id := range entityIDs {
		ms, err := n.entityMentions(ctx, s, id)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	slices.SortStableFunc(out, func(a, b engram.Mention) int { return b.At.Compare(a.At) })
	if limit > 0 {
		out = out[:min(len(out), limit)]
	}
	return out, nil
}

// MemoryMentions is engram.GraphReader's, narrowed.
func (n *narrowGraph) MemoryMentions(ctx context.Context, s engram.Scope, memoryIDs []string) ([]engram.Mention, error) {
	reads, err := n.readable(ctx, memoryIDs)
	if err != nil {
		return nil, err
	}
	mine := slices.DeleteFunc(slices.Clone(memoryIDs), func(id string) bool { return !reads[id] })
	if len(mine) == 0 {
		return nil, nil
	}
	return n.gr.MemoryMentions(ctx, s, mine)
}

// Relations is engram.GraphReader's, narrowed: it reads as many relations
// as a graph read may hold, so that those other memories support do not
// crowd out the scope's, and returns the heaviest f.Limit of what is left.
func (n *narrowGraph) Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error) {
	limit, err := engram.RelationLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	wide := f
	wide.NoEvidence, wide.Limit = false, engram.MaxGraphLimit
	rs, err := n.gr.Relations(ctx, s, entityIDs, wide)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rs {
		for _, ev := range r.Evidence {
			ids = append(ids, ev.MemoryID)
		}
	}
	reads, err := n.readable(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := rs[:0]
	for _, r := range rs {
		ok, err := n.bothSeen(ctx, s, r)
		if err != nil {
			return nil, err
		}
		if ok && r.KeepEvidence(reads) {
			if f.NoEvidence {
				r.Evidence = nil
			}
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b engram.Relation) int { return cmp.Compare(b.Weight, a.Weight) })
	return out[:min(len(out), limit)], nil
}

// bothSeen reports whether the scope reads a mention of each end of r.
func (n *narrowGraph) bothSeen(ctx context.Context, s engram.Scope, r engram.Relation) (bool, error) {
	for _, id := range []string{r.Source, r.Target} {
		ms, err := n.entityMentions(ctx, s, id)
		if err != nil || len(ms) == 0 {
			return false, err
		}
	}
	return true, nil
}

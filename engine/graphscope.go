package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/engramhq/engram"
)

// Entities belong to a user, but a scope narrowed to an agent or a session
// must not learn names, counts or memories of elsewhere: it sees an entity
// only when one of the memories it can read mentions it, counts only
// those mentions, and sees a relation only between entities it sees and
// only as far as its own memories support it (the evidence of other
// memories, and their weight, left out).

func narrowed(s engram.Scope) bool { return !s.AllAgents() || s.Session != "" }

// visibleMentions returns how many of the first maxEntityMemories
// mentions of the entity id are of memories s reads. It fails with the
// store's error.
func visibleMentions(ctx context.Context, r engram.Reader, s engram.Scope, id string) (int, error) {
	ms, err := r.EntityMentions(ctx, engram.EntityScope(s), []string{id}, maxEntityMemories)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].MemoryID
	}
	mems, err := r.GetMemories(ctx, s, ids)
	return len(mems), err
}

// entityVisible reports whether s sees the entity id: always in a scope
// that is not narrowed, else when one of its first maxEntityMemories
// mentions is of a memory s reads. It fails with the store's error.
func entityVisible(ctx context.Context, r engram.Reader, s engram.Scope, id string) (bool, error) {
	if !narrowed(s) {
		return true, nil
	}
	n, err := visibleMentions(ctx, r, s, id)
	return n > 0, err
}

// errNoEntity is the error of an entity the scope does not hold, the same
// as the store's for an id that never existed.
func errNoEntity(id string) error { return engram.Errorf(engram.ENOTFOUND, "entity %s not found", id) }

// visibleEntities returns the entities of es that s sees, never nil; in a
// narrowed scope their Mentions count only the memories s reads. It fails
// with the store's error.
func visibleEntities(ctx context.Context, r engram.Reader, s engram.Scope, es []engram.Entity) ([]engram.Entity, error) {
	out := make([]engram.Entity, 0, len(es))
	for _, en := range es {
		if narrowed(s) {
			n, err := visibleMentions(ctx, r, s, en.ID)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				continue
			}
			en.Mentions = n
		}
		out = append(out, en)
	}
	return out, nil
}

// relationFetch is how many relations a read asks the store for to return
// up to limit that s sees: in a narrowed scope as many as a graph read
// may hold, so that what other memories support does not crowd out what
// s sees.
func relationFetch(s engram.Scope, limit int) int {
	if narrowed(s) {
		return engram.MaxGraphLimit
	}
	return limit
}

// visibleRelations returns the relations of rs that s sees, never nil: in
// a scope that is not narrowed all of them; in a narrowed one those both
// of whose ends s sees and that a memory s reads supports, each with only
// that evidence and its weight, heaviest first. It fails with the store's
// error.
func visibleRelations(ctx context.Context, r engram.Reader, s engram.Scope, rs []engram.Relation) ([]engram.Relation, error) {
	if !narrowed(s) {
		return append(make([]engram.Relation, 0, len(rs)), rs...), nil
	}
	reads, err := readableEvidence(ctx, r, s, rs)
	if err != nil {
		return nil, err
	}
	out := make([]engram.Relation, 0, len(rs))
	seen := map[string]bool{}
	for _, rel := range rs {
		keep := true
		for _, id := range []string{rel.Source, rel.Target} {
			ok, done := seen[id]
			if !done {
				if ok, err = entityVisible(ctx, r, s, id); err != nil {
					return nil, err
				}
				seen[id] = ok
			}
			keep = keep && ok
		}
		if keep && rel.KeepEvidence(reads) {
			out = append(out, rel)
		}
	}
	slices.SortStableFunc(out, func(a, b engram.Relation) int { return cmp.Compare(b.Weight, a.Weight) })
	return out, nil
}

// readableEvidence returns the set of the memories behind rs's evidence
// that s reads. It fails with the store's error.
func readableEvidence(ctx context.Context, r engram.Reader, s engram.Scope, rs []engram.Relation) (map[string]bool, error) {
	var ids []string
	for _, rel := range rs {
		for _, ev := range rel.Evidence {
			ids = append(ids, ev.MemoryID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	reads := make(map[string]bool, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), engram.MaxEntityLimit)
		mems, err := r.GetMemories(ctx, s, ids[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range mems {
			reads[m.ID] = true
		}
		ids = ids[n:]
	}
	return reads, nil
}

// listVisible returns the first entities after f.Cursor that s sees, at
// most f.Limit (or the default), and the cursor of the next page: the
// store's cursor just after the last one returned, "" when s sees no more.
// Pages of the store are read until the page is full, so that neither the
// cursor nor the page's length tells anything of the entities s does not
// see. It fails with the store's error, EINVALID for a bad filter.
func listVisible(ctx context.Context, r engram.Reader, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error) {
	es, limit := engram.EntityScope(s), cmp.Or(f.Limit, engram.DefaultEntityLimit)
	out := []engram.Entity{}
	var lastFrom string // the store cursor of the page holding out's last
	var lastAt int      // its place on that page
	for {
		page, next, err := r.ListEntities(ctx, es, f)
		if err != nil {
			return nil, "", err
		}
		vis, err := visibleEntities(ctx, r, s, page)
		if err != nil {
			return nil, "", err
		}
		for _, en := range vis {
			if len(out) == limit { // s sees one more: the next page starts after out's last
				f.Cursor, f.Limit = lastFrom, lastAt+1
				_, after, err := r.ListEntities(ctx, es, f)
				return out, after, err
			}
			out = append(out, en)
			lastFrom, lastAt = f.Cursor, slices.IndexFunc(page, func(x engram.Entity) bool { return x.ID == en.ID })
		}
		if next == "" {
			return out, "", nil
		}
		f.Cursor = next
	}
}

package engine

import (
	"context"
	"slices"
	"time"

	"github.com/engramhq/engram"
)

var _ engram.GraphEditor = (*Engine)(nil)

// editGraph runs fn in one write transaction with the entity scope of s,
// for the owner-scoped edits of an entity (merge, split): EINVALID for a
// scope narrowed to an agent or session, else fn's or the store's error.
func (e *graphs) editGraph(ctx context.Context, s engram.Scope, id string, fn func(tx engram.Tx, es engram.Scope) error) error {
	if narrowed(s) {
		return engram.Errorf(engram.EINVALID, "an entity belongs to a user across agents and sessions: edit it with a scope that names neither")
	}
	return e.store.Update(ctx, func(tx engram.Tx) error {
		return fn(tx, engram.EntityScope(s))
	})
}

// MergeEntities implements engram.GraphEditor. The merged entities' names
// and aliases become the target's aliases (up to engram.MaxAliases); a
// relation that would join the target to itself is dropped; two current
// relations with the same ends and label become one with the union of
// their evidence.
func (e *graphs) MergeEntities(ctx context.Context, s engram.Scope, id string, from []string) (*engram.Entity, error) {
	s, err := writeScope(s)
	if err != nil {
		return nil, err
	}
	if err := engram.CheckMerge(id, from); err != nil {
		return nil, err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var out *engram.Entity
	err = e.editGraph(ctx, s, id, func(tx engram.Tx, es engram.Scope) error {
		target, err := tx.GetEntity(ctx, es, id)
		if err != nil {
			return err
		}
		merged := make([]*engram.Entity, len(from))
		for i, fid := range from {
			if merged[i], err = tx.GetEntity(ctx, es, fid); err != nil {
				return err
			}
		}
		if err := moveMentions(ctx, tx, es, target, from); err != nil {
			return err
		}
		if err := repointRelations(ctx, tx, es, target.ID, from); err != nil {
			return err
		}
		absorbNames(target, merged)
		target.UpdatedAt = now
		mctx := engram.WithEntityChange(ctx, engram.EntityChange{Op: engram.EntityMerge, Related: from})
		if err := tx.PutEntity(mctx, target); err != nil {
			return err
		}
		for _, fid := range from {
			dctx := engram.WithEntityChange(ctx, engram.EntityChange{Op: engram.EntityMerged, Related: []string{target.ID}, At: now})
			if err := tx.DeleteEntity(dctx, target.Namespace, fid); err != nil {
				return err
			}
		}
		if out, err = tx.GetEntity(ctx, es, id); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, e.audit(target.Namespace, actor, "entity.merge", append([]string{id}, from...), "", now))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// moveMentions links the target to every memory that mentions one of
// from, keeping the earliest time of a memory it already mentions.
func moveMentions(ctx context.Context, tx engram.Tx, es engram.Scope, target *engram.Entity, from []string) error {
	ms, err := tx.EntityMentions(ctx, es, from, 0)
	if err != nil {
		return err
	}
	has, err := tx.EntityMentions(ctx, es, []string{target.ID}, 0)
	if err != nil {
		return err
	}
	at := make(map[string]time.Time, len(has))
	for _, m := range has {
		at[m.MemoryID] = m.At
	}
	for _, m := range ms {
		if t, ok := at[m.MemoryID]; ok && !m.At.Before(t) {
			continue
		}
		at[m.MemoryID] = m.At
		if err := tx.PutMention(ctx, engram.Mention{EntityID: target.ID, MemoryID: m.MemoryID, Namespace: target.Namespace, At: m.At}); err != nil {
			return err
		}
	}
	return nil
}

// relationKey identifies the relations that are one after a merge: the
// same ends (either way round for a co-occurrence, which has no
// direction) and label, both current.
func relationKey(r *engram.Relation) [3]string {
	a, b := r.Source, r.Target
	if r.Label == engram.RelationCoOccurs && a > b {
		a, b = b, a
	}
	return [3]string{a, b, r.Label}
}

// repointRelations moves every relation with an end among from to target:
// one between two of them (or one of them and target) is dropped, and one
// that duplicates a current relation of the target joins its evidence.
func repointRelations(ctx context.Context, tx engram.Tx, es engram.Scope, target string, from []string) error {
	all := engram.RelationFilter{All: true, Limit: engram.MaxEntityLimit}
	moving, err := tx.Relations(ctx, es, from, all)
	if err != nil {
		return err
	}
	kept, err := tx.Relations(ctx, es, []string{target}, all)
	if err != nil {
		return err
	}
	if len(moving) == engram.MaxEntityLimit || len(kept) == engram.MaxEntityLimit {
		return engram.Errorf(engram.EINVALID, "from: the entities have more than %d relations, too many to merge at once", engram.MaxEntityLimit-1)
	}
	current := map[[3]string]*engram.Relation{}
	for i := range kept {
		if kept[i].Current() {
			current[relationKey(&kept[i])] = &kept[i]
		}
	}
	to := func(id string) string {
		if slices.Contains(from, id) {
			return target
		}
		return id
	}
	for i := range moving {
		r := &moving[i]
		r.Source, r.Target = to(r.Source), to(r.Target)
		if r.Source == r.Target {
			continue // a self-loop: it goes with the merged entity
		}
		if d := current[relationKey(r)]; d != nil && r.Current() {
			joinRelation(d, r)
			if err := tx.PutRelation(ctx, d); err != nil {
				return err
			}
			continue // r goes with the merged entity
		}
		if err := tx.PutRelation(ctx, r); err != nil {
			return err
		}
		if r.Current() {
			current[relationKey(r)] = r
		}
	}
	return nil
}

// joinRelation adds r's evidence to d (the heavier weight of a memory
// both list, up to engram.MaxSources memories) and widens d's event time
// to r's.
func joinRelation(d, r *engram.Relation) {
	for _, ev := range r.Evidence {
		if i := slices.IndexFunc(d.Evidence, func(x engram.Evidence) bool { return x.MemoryID == ev.MemoryID }); i >= 0 {
			d.Evidence[i].Weight = max(d.Evidence[i].Weight, ev.Weight)
		} else if len(d.Evidence) < engram.MaxSources {
			d.Evidence = append(d.Evidence, ev)
		}
	}
	if r.ValidAt != nil && (d.ValidAt == nil || r.ValidAt.Before(*d.ValidAt)) {
		d.ValidAt = r.ValidAt
	}
}

// absorbNames adds the names and aliases of merged to target's aliases,
// and takes the first known type and summary when target has none.
func absorbNames(target *engram.Entity, merged []*engram.Entity) {
	keys := target.Keys()
	add := func(name string) {
		k := engram.NormalizeName(name)
		if k == "" || slices.Contains(keys, k) || len(target.Aliases) >= engram.MaxAliases {
			return
		}
		keys = append(keys, k)
		target.Aliases = append(target.Aliases, name)
	}
	for _, m := range merged {
		add(m.Name)
		for _, a := range m.Aliases {
			add(a)
		}
		if (target.Type == "" || target.Type == engram.EntityThing) && m.Type != "" && m.Type != engram.EntityThing {
			target.Type = m.Type
		}
		if target.Summary == "" {
			target.Summary = m.Summary
		}
	}
}

// SplitEntity implements engram.GraphEditor. Each relation of the entity
// that a moved memory supports is divided: the moved memories' evidence
// goes to a relation of the new entity with the same other end and label,
// the rest stays; a relation left with no evidence of its own moves whole.
// A split may not take every mention (rename or merge instead), nor
// divide an entity with MaxEntityLimit relations or more (EINVALID).
func (e *graphs) SplitEntity(ctx context.Context, s engram.Scope, id string, req engram.SplitRequest) (*engram.Entity, error) {
	s, err := writeTarget(s, "entity", id)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var out *engram.Entity
	err = e.editGraph(ctx, s, id, func(tx engram.Tx, es engram.Scope) error {
		src, err := tx.GetEntity(ctx, es, id)
		if err != nil {
			return err
		}
		ms, err := tx.EntityMentions(ctx, es, []string{id}, 0)
		if err != nil {
			return err
		}
		moved, err := splitMentions(id, ms, req.Memories)
		if err != nil {
			return err
		}
		ent := &engram.Entity{
			ID: engram.NewID(), Namespace: src.Namespace, Name: req.Name, Norm: engram.NormalizeName(req.Name),
			Type: req.Type, Status: engram.EntityActive, CreatedAt: now, UpdatedAt: now,
		}
		if ent.Type == "" {
			ent.Type = src.Type
		}
		if err := ent.Validate(); err != nil {
			return err
		}
		if err := tx.PutEntity(engram.WithEntityChange(ctx, engram.EntityChange{Op: engram.EntitySplit, Related: []string{id}}), ent); err != nil {
			return err
		}
		for _, m := range moved {
			if err := tx.PutMention(ctx, engram.Mention{EntityID: ent.ID, MemoryID: m.MemoryID, Namespace: ent.Namespace, At: m.At}); err != nil {
				return err
			}
			if err := tx.DeleteMention(ctx, src.Namespace, id, m.MemoryID); err != nil {
				return err
			}
		}
		if err := divideRelations(ctx, tx, es, id, ent, req.Memories, now); err != nil {
			return err
		}
		src.UpdatedAt = now
		if err := tx.PutEntity(engram.WithEntityChange(ctx, engram.EntityChange{Op: engram.EntitySplit, Related: []string{ent.ID}}), src); err != nil {
			return err
		}
		if out, err = tx.GetEntity(ctx, es, ent.ID); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, e.audit(src.Namespace, actor, "entity.split", []string{id, ent.ID}, "", now))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// splitMentions returns the mentions of ms of the memories ids: EINVALID
// naming memories when one does not mention the entity or when they are
// all of its mentions.
func splitMentions(id string, ms []engram.Mention, ids []string) ([]engram.Mention, error) {
	var moved []engram.Mention
	for _, mid := range ids {
		i := slices.IndexFunc(ms, func(m engram.Mention) bool { return m.MemoryID == mid })
		if i < 0 {
			return nil, engram.Errorf(engram.EINVALID, "memories: memory %s does not mention entity %s", mid, id)
		}
		moved = append(moved, ms[i])
	}
	if len(moved) == len(ms) {
		return nil, engram.Errorf(engram.EINVALID, "memories: lists every memory that mentions entity %s; a split must leave it some", id)
	}
	return moved, nil
}

// divideRelations gives ent the evidence that the memories ids lend the
// relations of the entity id. EINVALID when the entity has more relations
// than one read returns: the rest would keep the moved memories'
// evidence.
func divideRelations(ctx context.Context, tx engram.Tx, es engram.Scope, id string, ent *engram.Entity, ids []string, now time.Time) error {
	rs, err := tx.Relations(ctx, es, []string{id}, engram.RelationFilter{All: true, Limit: engram.MaxEntityLimit})
	if err != nil {
		return err
	}
	if len(rs) == engram.MaxEntityLimit {
		return engram.Errorf(engram.EINVALID, "entity %s has more than %d relations, too many to split at once", id, engram.MaxEntityLimit-1)
	}
	made := map[[3]string]*engram.Relation{}
	for i := range rs {
		r := &rs[i]
		var mine, rest []engram.Evidence
		for _, ev := range r.Evidence {
			if slices.Contains(ids, ev.MemoryID) {
				mine = append(mine, ev)
			} else {
				rest = append(rest, ev)
			}
		}
		if len(mine) == 0 {
			continue
		}
		swap := func(x string) string {
			if x == id {
				return ent.ID
			}
			return x
		}
		if len(rest) == 0 { // every memory behind it moved: so does it
			r.Source, r.Target = swap(r.Source), swap(r.Target)
			if err := tx.PutRelation(ctx, r); err != nil {
				return err
			}
			continue
		}
		r.Evidence = rest
		if err := tx.PutRelation(ctx, r); err != nil {
			return err
		}
		n := &engram.Relation{
			ID: engram.NewID(), Namespace: r.Namespace, Source: swap(r.Source), Target: swap(r.Target), Label: r.Label,
			ValidAt: r.ValidAt, InvalidAt: r.InvalidAt, ExpiredAt: r.ExpiredAt, CreatedAt: now, Evidence: mine,
		}
		if d := made[relationKey(n)]; d != nil && n.Current() {
			joinRelation(d, n)
			n = d
		} else if n.Current() {
			made[relationKey(n)] = n
		}
		if err := tx.PutRelation(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// EntityHistory implements engram.GraphEditor. A merged or deleted
// entity's history is read by its id; an entity written before history
// was kept has none.
func (e *graphs) EntityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.EntityVersion, error) {
	s, err := readTarget(s, "entity", id)
	if err != nil {
		return nil, err
	}
	var out []engram.EntityVersion
	err = e.store.View(ctx, func(r engram.Reader) error {
		var err error
		es := engram.EntityScope(s)
		if out, err = r.EntityHistory(ctx, es, id); err != nil {
			return err
		}
		_, gerr := r.GetEntity(ctx, es, id)
		switch {
		case gerr != nil && !engram.IsNotFound(gerr):
			return gerr
		case gerr != nil && len(out) == 0:
			return gerr
		case gerr == nil:
			ok, err := entityVisible(ctx, r, s, id)
			if err != nil || !ok {
				return cmpOr(err, engram.Errorf(engram.ENOTFOUND, "entity %s not found", id))
			}
		case narrowed(s): // gone: a narrowed scope cannot tell whose memories named it
			return engram.Errorf(engram.ENOTFOUND, "entity %s not found", id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

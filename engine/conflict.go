package engine

import (
	"context"
	"maps"
	"time"

	"github.com/engramhq/engram"
)

var _ engram.ConflictService = (*Engine)(nil)

// ListConflicts implements engram.ConflictService: the active memories of
// the scope marked as an open conflict, grouped by conflict, newest first.
func (e *memories) ListConflicts(ctx context.Context, s engram.Scope) ([]engram.Conflict, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	var out []engram.Conflict
	err = e.store.View(ctx, func(r engram.Reader) error {
		ms, err := openConflictMembers(ctx, r, s, "")
		if err != nil {
			return err
		}
		at := map[string]int{}
		for _, m := range ms {
			id, _ := m.Metadata[engram.MetaConflict].(string)
			i, ok := at[id]
			if !ok {
				i, at[id] = len(out), len(out)
				out = append(out, engram.Conflict{ID: id})
			}
			out[i].Memories = append(out[i].Memories, m)
		}
		return nil
	})
	return out, err
}

// openConflictMembers lists the active memories of s in an open conflict,
// only those of conflict id unless id is "".
func openConflictMembers(ctx context.Context, r engram.Reader, s engram.Scope, id string) ([]engram.Memory, error) {
	md := map[string]any{engram.MetaConflictState: engram.ConflictOpen}
	if id != "" {
		md[engram.MetaConflict] = id
	}
	f := engram.MemoryFilter{Metadata: md, Limit: engram.MaxLimit}
	var out []engram.Memory
	for {
		page, next, err := r.ListMemories(ctx, s, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		f.Cursor = next
	}
}

// ResolveConflict implements engram.ConflictService.
func (e *memories) ResolveConflict(ctx context.Context, s engram.Scope, id string, req engram.ResolveConflictRequest) (*engram.ConflictResolution, error) {
	s, err := writeTarget(s, "conflict", id)
	if err != nil {
		return nil, err
	}
	if err := checkReason(req.Reason); err != nil {
		return nil, err
	}
	if req.Action == "" {
		req.Action = engram.ResolveSupersede
	}
	if req.Action != engram.ResolveSupersede && req.Action != engram.ResolveDelete {
		return nil, engram.Errorf(engram.EINVALID, "action %q is not one of supersede, delete", req.Action)
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var out *engram.ConflictResolution
	vb := e.vec.Batch()
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		var err error
		out, err = e.resolve(ctx, tx, vb, s, id, req, actor, now)
		return err
	})
	return out, vb.Done(err)
}

// resolve closes conflict id in tx: req.Keep stays, the other member is
// superseded by it or deleted, both are marked resolved.
func (e *memories) resolve(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, id string, req engram.ResolveConflictRequest, actor string, now time.Time) (*engram.ConflictResolution, error) {
	ms, err := openConflictMembers(ctx, tx, s, id)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "conflict %s is not open in this scope", id)
	}
	var keep, other *engram.Memory
	for i := range ms {
		if ms[i].ID == req.Keep {
			keep = &ms[i]
		} else {
			other = &ms[i]
		}
	}
	if keep == nil {
		return nil, engram.Errorf(engram.EINVALID, "keep: %q is not an open member of conflict %s", req.Keep, id)
	}
	k := resolved(keep, now)
	if err := e.writeVersion(ctx, tx, vb, keep, k, engram.OpUpdate, actor, req.Reason, now); err != nil {
		return nil, err
	}
	res := &engram.ConflictResolution{Kept: *k}
	if other == nil { // the other side was deleted or superseded meanwhile
		return res, nil
	}
	o, op := resolved(other, now), engram.OpDelete
	o.ExpiredAt = &now
	if req.Action == engram.ResolveDelete {
		o.Status = engram.StatusDeleted
	} else {
		op, o.Status, o.SupersededBy = engram.OpSupersede, engram.StatusSuperseded, k.ID
		o.ValidTo = closeAt(other, keep, now)
	}
	if err := e.writeVersion(ctx, tx, vb, other, o, op, actor, req.Reason, now); err != nil {
		return nil, err
	}
	res.Other = *o
	return res, nil
}

// resolved returns the next version of m with its conflict marked resolved.
func resolved(m *engram.Memory, now time.Time) *engram.Memory {
	c := clone(m)
	c.Metadata = maps.Clone(c.Metadata)
	c.Metadata[engram.MetaConflictState] = engram.ConflictResolved
	c.Version, c.UpdatedAt = m.Version+1, now
	return c
}

// closeAt is when a superseded side stops holding: when the kept side
// starts, if that lies after the superseded side's start, else now.
func closeAt(old, keep *engram.Memory, now time.Time) *time.Time {
	if keep.ValidFrom != nil && (old.ValidFrom == nil || keep.ValidFrom.After(*old.ValidFrom)) {
		t := *keep.ValidFrom
		return &t
	}
	if old.ValidFrom != nil && now.Before(*old.ValidFrom) {
		t := *old.ValidFrom
		return &t
	}
	return &now
}

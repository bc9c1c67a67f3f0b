package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/engramhq/engram"
)

// UpdateMemory implements engram.Service. A patch that changes the value
// or the abstraction re-derives what it leaves unset from the new text
// (see rederive).
func (e *memories) UpdateMemory(ctx context.Context, s engram.Scope, id string, p engram.MemoryPatch) (*engram.Memory, error) {
	s, err := writeTarget(s, "memory", id)
	if err != nil {
		return nil, err
	}
	p, sc, err := e.treatPatch(ctx, s.Namespace(), id, p)
	if err != nil {
		return nil, err
	}
	var out *engram.Memory
	vb := e.vec.Batch()
	e.prepareUpdate(ctx, vb, s, id, p)
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		p := p
		if old, err := visible(ctx, tx, s, id); err == nil {
			p = rederive(old, p)
		}
		var err error
		actor, now := engram.ActorFrom(ctx), e.clock()
		if out, err = e.update(ctx, tx, vb, s, id, p, engram.OpUpdate, actor, now); err != nil {
			return err
		}
		return e.storeSeals(ctx, tx, vb, out.Namespace, sc, actor, now)
	})
	err = vb.Done(err)
	e.reportOne(ctx, s.Namespace(), engram.OpUpdate, id, err)
	return out, err
}

// prepareUpdate embeds, before the write transaction, the texts patch p
// gives memory id as read now, so that the store's writer does not wait
// on the encoder. The transaction embeds what this left out: the memory
// changed meanwhile, or the read, the patch or the embedder failed here,
// which the transaction then reports as it would have.
func (e *memories) prepareUpdate(ctx context.Context, vb *vecBatch, s engram.Scope, id string, p engram.MemoryPatch) {
	if vb == nil {
		return
	}
	var m *engram.Memory
	err := e.store.View(ctx, func(r engram.Reader) error {
		old, err := visible(ctx, r, s, id)
		if err == nil && old.Kind != engram.KindVault && old.Status == engram.StatusActive {
			m = clone(old)
			applyPatch(m, rederive(old, p))
		}
		return err
	})
	if err != nil || m == nil || m.Kind == engram.KindVault || m.Validate() != nil {
		return
	}
	_ = vb.Prepare(ctx, []engram.Memory{*m})
}

// getActive reads a memory for a change of content and insists it is
// active and not a vault memory.
func getActive(ctx context.Context, tx engram.Tx, s engram.Scope, id string, what string) (*engram.Memory, error) {
	if err := engram.CheckID("memory", id); err != nil {
		return nil, err
	}
	m, err := visible(ctx, tx, s, id)
	if err != nil {
		return nil, err
	}
	if err := notVault(m, what); err != nil {
		return nil, err
	}
	if m.Status != engram.StatusActive {
		return nil, engram.Errorf(engram.ECONFLICT, "memory %s is %s, not active", id, m.Status)
	}
	return m, nil
}

// update applies p to the active memory id as a version recording op
// (UPDATE or MERGE); a patch that changes nothing writes nothing.
func (e *writer) update(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, id string, p engram.MemoryPatch, op engram.Op, actor string, now time.Time) (*engram.Memory, error) {
	old, err := getActive(ctx, tx, s, id, "an update")
	if err != nil {
		return nil, err
	}
	if err := checkReason(p.Reason); err != nil {
		return nil, err
	}
	if p.Kind != nil && *p.Kind == engram.KindVault {
		return nil, engram.Errorf(engram.EINVALID, "kind: memory %s cannot become a vault memory in place; add a new vault memory and delete this one", id)
	}
	m := clone(old)
	applyPatch(m, p)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if sameContent(old, m) {
		return old, nil
	}
	m.Version = old.Version + 1
	m.UpdatedAt = now
	if err := e.writeVersion(ctx, tx, vb, old, m, op, actor, p.Reason, now); err != nil {
		return nil, err
	}
	return m, nil
}

// writeVersion replaces old by m in the store and appends the version and
// the audit entry for the change.
func (e *writer) writeVersion(ctx context.Context, tx engram.Tx, vb *vecBatch, old, m *engram.Memory, op engram.Op, actor, reason string, now time.Time) error {
	if err := tx.ReplaceMemory(ctx, m); err != nil {
		return err
	}
	if err := vb.Stage(ctx, tx, m); err != nil {
		return err
	}
	if !holdsGraph(vb, m) {
		if err := e.stageGraph(ctx, tx, old, m, now); err != nil {
			return err
		}
	}
	nm := *m
	if err := tx.InsertVersion(ctx, &engram.Version{
		MemoryID: m.ID, Namespace: m.Namespace, Version: m.Version, Op: op,
		Old: old, New: &nm, Actor: actor, Reason: reason, At: now,
	}); err != nil {
		return err
	}
	return tx.InsertAudit(ctx, e.audit(m.Namespace, actor, "memory."+opName(op), []string{m.ID}, reason, now))
}

func opName(op engram.Op) string {
	switch op {
	case engram.OpAdd:
		return "add"
	case engram.OpUpdate:
		return "update"
	case engram.OpSupersede:
		return "supersede"
	case engram.OpDelete:
		return "delete"
	case engram.OpRestore:
		return "restore"
	case engram.OpMerge:
		return "merge"
	case engram.OpConflict:
		return "conflict"
	}
	return string(op)
}

func checkReason(r string) error {
	if len(r) > engram.MaxShortBytes {
		return engram.Errorf(engram.EINVALID, "reason is %d bytes, longer than the limit of %d", len(r), engram.MaxShortBytes)
	}
	return nil
}

func applyPatch(m *engram.Memory, p engram.MemoryPatch) {
	if p.Kind != nil {
		m.Kind = *p.Kind
	}
	if p.Abstraction != nil {
		m.Abstraction = *p.Abstraction
	}
	if p.Cues != nil {
		m.Cues = cleanCues(*p.Cues)
	}
	if p.Value != nil {
		m.Value = *p.Value
	}
	if p.Language != nil {
		m.Language = *p.Language
	}
	if p.Confidence != nil {
		m.Confidence = *p.Confidence
	}
	if p.Importance != nil {
		m.Importance = *p.Importance
	}
	if p.ValidFrom != nil {
		m.ValidFrom = normPtr(p.ValidFrom)
	}
	if p.ValidTo != nil {
		m.ValidTo = normPtr(p.ValidTo)
	}
	if p.ExpiresAt != nil {
		m.ExpiresAt = normPtr(p.ExpiresAt)
	}
	for _, id := range p.Sources {
		if !slices.Contains(m.Sources, id) {
			m.Sources = append(m.Sources, id)
		}
	}
	if p.Metadata != nil {
		m.Metadata = p.Metadata
	}
}

// contentPatch turns the non-zero content fields of m into a patch, for
// formers that express an update as a whole memory.
func contentPatch(m engram.Memory, reason string) engram.MemoryPatch {
	p := engram.MemoryPatch{Reason: reason, Metadata: m.Metadata}
	if m.Kind != "" {
		p.Kind = &m.Kind
	}
	if m.Abstraction != "" {
		p.Abstraction = &m.Abstraction
	}
	if m.Cues != nil {
		p.Cues = &m.Cues
	}
	if m.Value != "" {
		p.Value = &m.Value
	}
	if m.Language != "" {
		p.Language = &m.Language
	}
	if m.Confidence != 0 {
		p.Confidence = &m.Confidence
	}
	if m.Importance != 0 {
		p.Importance = &m.Importance
	}
	p.ValidFrom, p.ValidTo, p.ExpiresAt = m.ValidFrom, m.ValidTo, m.ExpiresAt
	p.Sources = m.Sources
	return p
}

// clone returns a deep copy of m, so edits never alias the stored old state.
func clone(m *engram.Memory) *engram.Memory {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("clone memory: %v", err)) // a Memory always marshals
	}
	var c engram.Memory
	if err := unmarshal(b, &c); err != nil {
		panic(fmt.Sprintf("clone memory: %v", err))
	}
	return &c
}

func sameContent(a, b *engram.Memory) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// SupersedeMemory implements engram.Service.
func (e *memories) SupersedeMemory(ctx context.Context, s engram.Scope, id string, req engram.SupersedeRequest) (*engram.SupersedeResult, error) {
	s, err := writeTarget(s, "memory", id)
	if err != nil {
		return nil, err
	}
	ops := []engram.MemoryOp{{Op: engram.OpSupersede, Memory: req.New}}
	sc, err := e.treatMemories(ctx, s.Namespace(), ops)
	if err != nil {
		return nil, err
	}
	req.New = ops[0].Memory
	var out *engram.SupersedeResult
	vb := e.vec.Batch()
	if err := vb.Prepare(ctx, []engram.Memory{req.New}); err != nil {
		return nil, err
	}
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		var err error
		actor, now := engram.ActorFrom(ctx), e.clock()
		if out, err = e.supersede(ctx, tx, vb, s, id, req, actor, now); err != nil {
			return err
		}
		return e.storeSeals(ctx, tx, vb, out.New.Namespace, sc, actor, now)
	})
	err = vb.Done(err)
	e.reportOne(ctx, s.Namespace(), engram.OpSupersede, id, err)
	return out, err
}

// supersede replaces the active memory id of s by req.New, stored in the
// old memory's namespace (see replace).
func (e *writer) supersede(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, id string, req engram.SupersedeRequest, actor string, now time.Time) (*engram.SupersedeResult, error) {
	if err := checkReason(req.Reason); err != nil {
		return nil, err
	}
	old, err := getActive(ctx, tx, s, id, "a supersede")
	if err != nil {
		return nil, err
	}
	return e.replace(ctx, tx, vb, old, old.Namespace, req, actor, now)
}

// replace stores req.New in namespace home and marks old, an active
// memory, superseded by it from req.At (now when nil). It fails with
// EINVALID for a vault memory, a time before old's valid_from or a new
// memory that does not validate.
func (e *writer) replace(ctx context.Context, tx engram.Tx, vb *vecBatch, old *engram.Memory, home engram.Namespace, req engram.SupersedeRequest, actor string, now time.Time) (*engram.SupersedeResult, error) {
	if err := checkReason(req.Reason); err != nil {
		return nil, err
	}
	if req.New.Kind == engram.KindVault {
		return nil, engram.Errorf(engram.EINVALID, "new memory: kind vault cannot supersede a memory; add the vault memory and delete this one")
	}
	at := now
	if req.At != nil {
		at = norm(*req.At)
	}
	if old.ValidFrom != nil && at.Before(*old.ValidFrom) {
		return nil, engram.Errorf(engram.EINVALID, "supersede time %s is before the old memory's valid_from %s",
			at.Format(time.RFC3339), old.ValidFrom.Format(time.RFC3339))
	}
	nm := req.New
	nm.Namespace = home
	if nm.Kind == "" {
		nm.Kind = old.Kind
	}
	nm.ValidFrom, nm.ValidTo = &at, nil
	if err := prepareNew(&nm, now); err != nil {
		return nil, prefixed("new memory", err)
	}
	if nm.ID == old.ID {
		return nil, engram.Errorf(engram.EINVALID, "a memory cannot supersede itself")
	}
	reason := req.Reason
	if reason == "" {
		reason = "superseded by " + nm.ID
	}
	if err := e.insertNew(ctx, tx, vb, &nm, actor, "supersedes "+old.ID, now); err != nil {
		return nil, prefixed("new memory", err)
	}
	m := clone(old)
	m.ValidTo = &at
	m.Status = engram.StatusSuperseded
	m.ExpiredAt = &now
	m.SupersededBy = nm.ID
	m.Version = old.Version + 1
	m.UpdatedAt = now
	if err := e.writeVersion(ctx, tx, vb, old, m, engram.OpSupersede, actor, reason, now); err != nil {
		return nil, err
	}
	return &engram.SupersedeResult{Old: *m, New: nm}, nil
}

// DeleteMemory implements engram.Service. A soft delete of an already
// deleted memory succeeds without a new version.
func (e *memories) DeleteMemory(ctx context.Context, s engram.Scope, id string, o engram.DeleteOptions) error {
	s, err := writeTarget(s, "memory", id)
	if err != nil {
		return err
	}
	if err := checkReason(o.Reason); err != nil {
		return err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	vb := e.vec.Batch()
	var purged engram.Namespace
	var texts []string
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		if !o.Hard {
			_, err := e.softDelete(ctx, tx, vb, s, id, o.Reason, actor, now)
			return err
		}
		m, err := visible(ctx, tx, s, id)
		if err != nil {
			return err
		}
		if texts, err = historyTexts(ctx, tx, s, m); err != nil {
			return err
		}
		if err := tx.PurgeMemory(ctx, m.Namespace, id); err != nil {
			return err
		}
		vb.Purged(m.Namespace, id)
		purged = m.Namespace
		return tx.InsertAudit(ctx, e.audit(m.Namespace, actor, "memory.purge", []string{id}, o.Reason, now))
	})
	if err = vb.Done(err); err == nil && o.Hard {
		e.afterPurge(ctx, purged, texts, false)
	}
	e.reportOne(ctx, s.Namespace(), engram.OpDelete, id, err)
	return err
}

func (e *writer) softDelete(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, id, reason, actor string, now time.Time) (*engram.Memory, error) {
	if err := engram.CheckID("memory", id); err != nil {
		return nil, err
	}
	old, err := visible(ctx, tx, s, id)
	if err != nil {
		return nil, err
	}
	if old.Status == engram.StatusDeleted {
		return old, nil
	}
	m := clone(old)
	m.Status = engram.StatusDeleted
	m.ExpiredAt = &now
	m.Version = old.Version + 1
	m.UpdatedAt = now
	return m, e.writeVersion(ctx, tx, vb, old, m, engram.OpDelete, actor, reason, now)
}

// RestoreMemory implements engram.Service.
func (e *memories) RestoreMemory(ctx context.Context, s engram.Scope, id, reason string) (*engram.Memory, error) {
	s, err := writeTarget(s, "memory", id)
	if err != nil {
		return nil, err
	}
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var out *engram.Memory
	vb := e.vec.Batch()
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		old, err := visible(ctx, tx, s, id)
		if err != nil {
			return err
		}
		if old.Status != engram.StatusDeleted {
			return engram.Errorf(engram.ECONFLICT, "memory %s is %s; only a deleted memory can be restored", id, old.Status)
		}
		m := clone(old)
		m.Status = engram.StatusActive
		m.ExpiredAt = nil
		m.Version = old.Version + 1
		m.UpdatedAt = now
		out = m
		return e.writeVersion(ctx, tx, vb, old, m, engram.OpRestore, actor, reason, now)
	})
	if err := vb.Done(err); err != nil {
		return nil, err
	}
	return out, e.reveal(ctx, s, "restore", out)
}

// Rollback implements engram.Service: the memory's content becomes what
// version v left it with, recorded as a new UPDATE version. A superseded
// memory cannot be rolled back (its replacement is the current fact); a
// deleted one is restored by the rollback.
func (e *memories) Rollback(ctx context.Context, s engram.Scope, id string, v int, reason string) (*engram.Memory, error) {
	s, err := writeTarget(s, "memory", id)
	if err != nil {
		return nil, err
	}
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	if v < 1 {
		return nil, engram.Errorf(engram.EINVALID, "version %d is not a version number (they start at 1)", v)
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var out *engram.Memory
	vb := e.vec.Batch()
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		cur, err := visible(ctx, tx, s, id)
		if err != nil {
			return err
		}
		if err := notVault(cur, "a rollback"); err != nil {
			return err
		}
		if cur.Status == engram.StatusSuperseded {
			return engram.Errorf(engram.ECONFLICT, "memory %s was superseded by %s; roll back that memory instead", id, cur.SupersededBy)
		}
		vs, err := tx.Versions(ctx, s, id)
		if err != nil {
			return err
		}
		var target *engram.Memory
		for i := range vs {
			if vs[i].Version == v {
				target = vs[i].New
			}
		}
		if target == nil {
			return engram.Errorf(engram.ENOTFOUND, "memory %s has no version %d", id, v)
		}
		m := clone(cur)
		m.Kind, m.Abstraction, m.Cues, m.Value, m.Language = target.Kind, target.Abstraction, target.Cues, target.Value, target.Language
		m.Confidence, m.Importance, m.Metadata = target.Confidence, target.Importance, target.Metadata
		m.ValidFrom, m.ValidTo, m.ExpiresAt = target.ValidFrom, target.ValidTo, target.ExpiresAt
		m.Status, m.ExpiredAt = engram.StatusActive, nil
		m.Version = cur.Version + 1
		m.UpdatedAt = now
		if reason == "" {
			reason = fmt.Sprintf("rollback to version %d", v)
		}
		out = m
		return e.writeVersion(ctx, tx, vb, cur, m, engram.OpUpdate, actor, reason, now)
	})
	return out, vb.Done(err)
}

// DeleteScope implements engram.Service.
func (e *admin) DeleteScope(ctx context.Context, s engram.Scope) (*engram.PurgeCounts, error) {
	s, err := writeScope(s)
	if err != nil {
		return nil, err
	}
	if s.User == "" && s.Agent == "" && s.Session == "" {
		return nil, engram.Errorf(engram.EINVALID, "refusing to delete a whole project: name a user, an agent or a session")
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	var counts engram.PurgeCounts
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		var err error
		if counts, err = tx.PurgeScope(ctx, s); err != nil {
			return err
		}
		detail := fmt.Sprintf("purged %d episodes, %d memories, %d versions", counts.Episodes, counts.Memories, counts.Versions)
		return tx.InsertAudit(ctx, e.audit(s.Namespace(), actor, "scope.delete", nil, detail, now))
	})
	if err != nil {
		return nil, err
	}
	e.vec.Forget(s)
	e.afterPurge(ctx, s.Namespace(), nil, true)
	return &counts, nil
}

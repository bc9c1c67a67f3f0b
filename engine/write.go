package engine

import (
	"context"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// AddMemories implements engram.Service.
func (e *ingest) AddMemories(ctx context.Context, req engram.AddMemoriesRequest) ([]engram.Memory, error) {
	if err := req.Namespace.Validate(); err != nil {
		return nil, err
	}
	if err := checkBatch("memories", len(req.Memories)); err != nil {
		return nil, err
	}
	now := e.clock()
	ops := make([]engram.MemoryOp, len(req.Memories))
	for i, m := range req.Memories {
		m.Namespace = req.Namespace
		if m.Kind == "" {
			m.Kind = engram.KindSemantic
		}
		if m.Status != "" && m.Status != engram.StatusActive {
			return nil, engram.Errorf(engram.EINVALID, "memories[%d]: a new memory must be active, not %s", i, m.Status)
		}
		ops[i] = engram.MemoryOp{Op: engram.OpAdd, Memory: m}
	}
	sc, err := e.treatMemories(ctx, req.Namespace, ops)
	if err != nil {
		return nil, err
	}
	if err := e.prepareVault(ctx, req.Namespace, opMemories(ops)); err != nil {
		return nil, err
	}
	vb := e.vec.Batch()
	if err := vb.Prepare(ctx, opMemories(ops)); err != nil {
		return nil, err
	}
	var out []engram.Memory
	actor := engram.ActorFrom(ctx)
	ctx, trail := e.withTrail(ctx, TriggerAPI)
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		var err error
		if out, err = e.applyOps(ctx, tx, vb, inNamespace(req.Namespace), ops, actor, now); err != nil {
			return err
		}
		return e.storeSeals(ctx, tx, vb, req.Namespace, sc, actor, now)
	})
	e.report(ctx, trail, err)
	if err != nil {
		return nil, err
	}
	vb.Commit()
	e.coverage.note(req.Namespace, opMemories(ops))
	return out, nil
}

// opMemories returns the memories that ADD, SUPERSEDE and CONFLICT
// operations carry, whose texts are embedded before the transaction.
func opMemories(ops []engram.MemoryOp) []engram.Memory {
	var ms []engram.Memory
	for _, op := range ops {
		if op.Op == engram.OpAdd || op.Op == engram.OpSupersede || op.Op == engram.OpConflict {
			ms = append(ms, op.Memory)
		}
	}
	return ms
}

func checkBatch(what string, n int) error {
	if n == 0 {
		return engram.Errorf(engram.EINVALID, "no %s given", what)
	}
	if n > engram.MaxBatch {
		return engram.Errorf(engram.ETOOLARGE, "%d %s in one request, more than the limit of %d", n, what, engram.MaxBatch)
	}
	return nil
}

// prepareNew fills the defaults of a new memory and validates it.
func prepareNew(m *engram.Memory, now time.Time) error {
	if m.ID == "" {
		m.ID = engram.NewID()
	}
	if m.Kind == "" {
		m.Kind = engram.KindSemantic
	}
	m.Status = engram.StatusActive
	if m.Confidence == 0 {
		m.Confidence = 1
	}
	if m.Importance == 0 {
		m.Importance = 0.5
	}
	m.Cues = cleanCues(m.Cues)
	if m.Language == "" {
		// Set without an LLM, by script and frequent words; the text
		// itself stays in the language it was said in.
		m.Language = lang.Detect(m.Value)
	}
	m.ValidFrom, m.ValidTo, m.ExpiresAt = normPtr(m.ValidFrom), normPtr(m.ValidTo), normPtr(m.ExpiresAt)
	m.CreatedAt, m.UpdatedAt = now, now
	m.ExpiredAt, m.LastAccessed, m.SupersededBy = nil, nil, ""
	m.Version, m.AccessCount = 1, 0
	return m.Validate()
}

// insertNew stores the new memory m, sealed when it is a vault memory (m
// itself stays as given), with its first version.
func (e *writer) insertNew(ctx context.Context, tx engram.Tx, vb *vecBatch, m *engram.Memory, actor, reason string, now time.Time) error {
	st, err := e.sealed(ctx, m)
	if err != nil {
		return err
	}
	if err := tx.InsertMemory(ctx, st); err != nil {
		return err
	}
	if err := vb.Stage(ctx, tx, st); err != nil {
		return err
	}
	if !holdsGraph(vb, st) {
		if err := e.stageGraph(ctx, tx, nil, m, now); err != nil {
			return err
		}
	}
	nm := *st
	return tx.InsertVersion(ctx, &engram.Version{
		MemoryID: m.ID, Namespace: m.Namespace, Version: 1, Op: engram.OpAdd,
		New: &nm, Actor: actor, Reason: reason, At: now,
	})
}

// cleanCues trims cues, drops empty ones and repeats (case-insensitively).
func cleanCues(cues []string) []string {
	if len(cues) == 0 {
		return nil
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(cues))
	for _, c := range cues {
		c = strings.TrimSpace(c)
		k := strings.ToLower(c)
		if c == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (e *core) audit(n engram.Namespace, actor, op string, ids []string, detail string, at time.Time) *engram.AuditEntry {
	return &engram.AuditEntry{ID: engram.NewID(), Namespace: n, Actor: actor, Op: op, IDs: ids, Detail: detail, At: at}
}

package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram"
)

// Embedding later. An engine with an embedder, workers and a job queue
// answers an add of episodes once its episodes and memories are stored,
// and so found by full text (read-your-writes), and leaves the encoder's
// work to an embed job (engram.JobEmbed) enqueued in the add's own
// transaction: the memories it added and the memory of the turn before
// whose abstraction it changed. The job embeds the texts each memory has
// when it runs, so a memory changed twice before it runs is embedded once
// (and texts embedded before come from the embedding cache), and stores
// the vectors only if the memory is still that version: a later change
// has a job of its own. Until then the dense channel does not find a new
// memory, and finds a changed one by the vectors of its earlier text.
// A crash loses nothing: the job is as durable as the add.

// holdsGraph reports whether b leaves the graph of m (its names resolved
// to entities, its mentions and relations) to the embed job: a batch that
// embeds later does so for every active memory it listed for the job,
// since that was a third of an add's writes. The job stages it as m is
// when it runs (stageGraphOf). A memory no longer active has its part
// removed at once: the job leaves such memories alone.
func holdsGraph(b *vecBatch, m *engram.Memory) bool {
	return b != nil && b.Later != nil && m.Status == engram.StatusActive && b.Later.Listed(m.ID)
}

// holdUpdate returns ops without formation's update of prev, the memory
// of the turn before the add, which a batch that embeds later leaves to
// its embed job with prev's id: it changes only context (the abstraction
// gains the new turn, and the link to it), and updating a stored memory's
// full-text entry costs the add more than the rest of its writes.
func holdUpdate(b *vecBatch, ops []engram.MemoryOp, prev *engram.Memory) []engram.MemoryOp {
	if b == nil || b.Later == nil || prev == nil {
		return ops
	}
	kept := ops[:0:0]
	for _, op := range ops {
		if op.Op == engram.OpUpdate && op.TargetID == prev.ID {
			b.Later.Ops = append(b.Later.Ops, op)
			b.Later.Add(prev.ID)
			continue
		}
		kept = append(kept, op)
	}
	return kept
}

// enqueueEmbed enqueues in tx the embed job of the memories vb left for
// later, in namespace ns, and returns it; nil when there are none.
func enqueueEmbed(ctx context.Context, tx engram.Tx, vb *vecBatch, ns engram.Namespace, now time.Time) (*engram.Job, error) {
	if vb == nil || vb.Later == nil || len(vb.Later.IDs) == 0 {
		return nil, nil
	}
	j := &engram.Job{ID: engram.NewID(), Namespace: ns, Kind: engram.JobEmbed, Memories: vb.Later.IDs, Ops: vb.Later.Ops,
		State: engram.JobQueued, RunAfter: now, CreatedAt: now, UpdatedAt: now}
	return j, tx.EnqueueJob(ctx, j)
}

// wake tells an idle worker that a job was enqueued.
func (e *ingest) wake() {
	select {
	case e.jobs.kick <- struct{}{}:
	default:
	}
}

// embedJob runs a claimed embed job: it embeds the texts of the job's
// memories and of the updates it holds, then in one transaction applies
// each update whose target is still the version the add read (else drops
// it, as the add would have), stores the vectors of the memories still at
// the version embedded, and marks the job done. A memory gone, no longer
// active or changed since is skipped: a change has its own job, or needs
// no vectors. It fails with the embedder's or the store's error, which
// the job's retries answer; a retry finds an update it applied stale.
func (e *ingest) embedJob(ctx context.Context, owner string, j *engram.Job) error {
	if e.vec == nil {
		return engram.Errorf(engram.EUNAVAILABLE, "embed job %s: the engine has no embedder", j.ID)
	}
	ctx = engram.WithActor(ctx, "job:"+j.ID)
	// Memories of the user's profile lie outside a session's scope: read
	// in the whole user's.
	s := engram.Scope{Org: j.Namespace.Org, Project: j.Namespace.Project, User: j.Namespace.User}
	var ms []engram.Memory
	err := e.store.View(ctx, func(r engram.Reader) (err error) {
		ms, err = activeMemories(ctx, r, s, j.Memories)
		return err
	})
	if err != nil {
		return err
	}
	texts := make([]engram.Memory, 0, len(j.Ops)+len(ms))
	for _, op := range j.Ops {
		texts = append(texts, op.Memory)
	}
	vb := e.vec.Batch()
	if err := vb.Prepare(ctx, append(texts, ms...)); err != nil {
		return err
	}
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		if err := e.stageGraphOf(ctx, tx, s, j.Memories); err != nil {
			return err
		}
		updated, err := e.applyHeld(ctx, tx, vb, j)
		if err != nil {
			return err
		}
		for i := range ms {
			if updated[ms[i].ID] {
				continue // staged with its update
			}
			if err := stageCurrent(ctx, tx, vb, s, &ms[i]); err != nil {
				return err
			}
		}
		if err := tx.CompleteJob(ctx, j.Namespace, j.ID, owner, e.clock()); err != nil {
			return fmt.Errorf("%w: %w", err, errLeaseLost)
		}
		return nil
	})
	return vb.Done(err)
}

// stageGraphOf makes the graph hold, in tx, what the memories ids name
// say as they are now, in their order (the add's): a change since the
// add may have staged some of it, so what is there is read first. A
// memory gone or no longer active is left: its change removed its part.
func (e *ingest) stageGraphOf(ctx context.Context, tx engram.Tx, s engram.Scope, ids []string) error {
	ms, err := activeMemories(ctx, tx, s, ids)
	if err != nil {
		return err
	}
	for i := range ms {
		if err := e.reconcileGraph(ctx, tx, &ms[i], false, e.clock()); err != nil {
			return err
		}
	}
	return nil
}

// applyHeld applies in tx, in the job's namespace, the updates j holds
// whose targets are still the version read at the add and active, and
// returns the ids of the memories it updated.
func (e *ingest) applyHeld(ctx context.Context, tx engram.Tx, vb *vecBatch, j *engram.Job) (map[string]bool, error) {
	s := engram.ScopeOf(j.Namespace)
	ops := j.Ops
	for i := range j.Ops {
		var err error
		if ops, err = dropStale(ctx, tx, s, ops, &j.Ops[i].Memory); err != nil {
			return nil, err
		}
	}
	if len(ops) == 0 {
		return nil, nil
	}
	ms, err := e.applyOps(ctx, tx, vb, formScope(j.Namespace), ops, formerActor(e.former, engram.ActorFrom(ctx)), e.clock())
	updated := map[string]bool{}
	for _, m := range ms {
		updated[m.ID] = true
	}
	return updated, err
}

// activeMemories reads through r the active memories among ids in s,
// leaving out those gone or no longer active and vault memories, which
// are never embedded nor held for a job.
func activeMemories(ctx context.Context, r engram.Reader, s engram.Scope, ids []string) ([]engram.Memory, error) {
	var ms []engram.Memory
	for _, id := range ids {
		m, err := r.GetMemory(ctx, s, id)
		switch {
		case engram.ErrorCode(err) == engram.ENOTFOUND:
			continue
		case err != nil:
			return nil, err
		}
		if m.Status == engram.StatusActive && m.Kind != engram.KindVault {
			ms = append(ms, *m)
		}
	}
	return ms, nil
}

// stageCurrent stages read's vectors in tx when the memory is still the
// version read and active.
func stageCurrent(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, read *engram.Memory) error {
	cur, err := tx.GetMemory(ctx, s, read.ID)
	switch {
	case engram.ErrorCode(err) == engram.ENOTFOUND:
		return nil
	case err != nil:
		return err
	case cur.Version != read.Version || cur.Status != engram.StatusActive:
		return nil
	}
	return vb.Stage(ctx, tx, cur)
}

package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine/index"
)

// An add of episodes runs as a search does (search.go): the request is
// checked, its plan settled once (formed in the request, by a background
// job or not at all; embedded now or by an embed job), and then named
// stages follow: form, stage (vault keys and vectors, before the
// transaction), commit (one transaction) and after (indexes, queued jobs,
// counts). No stage decides the mode again: each reads the plan.

// addMode is how an add forms its memories.
type addMode int

const (
	// addInline forms with the engine's former in the request.
	addInline addMode = iota
	// addJob stores the episodes with a form job that forms them in the
	// background; a provisional former, if the engine has one, forms
	// them at once within the batch alone (see provisional.go).
	addJob
	// addUnformed stores the episodes without forming (Form false).
	addUnformed
)

// addPlan is how one add runs, settled before anything is formed.
type addPlan struct {
	mode addMode
	// former forms at once: the engine's former (addInline), the
	// provisional former (addJob; nil when the engine has none), nil
	// (addUnformed).
	former engram.Former
	// later leaves embedding to an embed job (see embedjob.go).
	later bool
}

// add is one add of episodes on its way through its stages.
type add struct {
	ns      engram.Namespace
	now     time.Time
	eps     []engram.Episode
	sc      *treated // the secrets and personal data found in eps, treated
	plan    addPlan
	f       formed            // what formed at once, less what waits for the embed job
	decided []engram.MemoryOp // what the engine's former decided, for Decisions
	vb      *vecBatch
	job     *engram.Job // the form job of an addJob
	embed   *engram.Job // the embed job, when one was enqueued
	mems    []engram.Memory
}

// AddEpisodes implements engram.Service. The operations formation
// decides are reported to the engine's Observer once written.
func (e *ingest) AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	ctx, trail := e.withTrail(ctx, TriggerFormer)
	res, err := e.addEpisodes(ctx, req)
	e.report(ctx, trail, err)
	return res, err
}

// addEpisodes is AddEpisodes as its stages. It fails with EINVALID naming
// the field at fault (nothing stored), or with the former's or the
// store's error (nothing stored either: the episodes, their memories and
// their jobs are written in one transaction).
func (e *ingest) addEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	a, err := e.checkAdd(ctx, req)
	if err != nil {
		return nil, err
	}
	if a.plan, err = e.planAdd(req, a.eps); err != nil {
		return nil, err
	}
	if err := e.formAdd(ctx, a); err != nil {
		return nil, err
	}
	if err := e.stageAdd(ctx, a); err != nil {
		return nil, err
	}
	if err := e.commitAdd(ctx, a); err != nil {
		return nil, err
	}
	e.afterAdd(a)
	return e.addResult(a), nil
}

// checkAdd checks the request and makes its episodes, received now, with
// the secrets and personal data in them treated as the tenant's policy
// says. It fails with EINVALID or ETOOLARGE naming the field at fault, or
// with the policy's error.
func (e *ingest) checkAdd(ctx context.Context, req engram.AddEpisodesRequest) (*add, error) {
	if err := req.Namespace.Validate(); err != nil {
		return nil, err
	}
	if err := checkBatch("episodes", len(req.Episodes)); err != nil {
		return nil, err
	}
	a := &add{ns: req.Namespace, now: e.clock()}
	var err error
	if a.eps, err = newEpisodes(req, a.now); err != nil {
		return nil, err
	}
	if a.sc, err = e.treatEpisodes(ctx, a.ns, a.eps); err != nil {
		return nil, err
	}
	return a, nil
}

// planAdd settles how an add forms its memories: not at all when the
// request says form: false; in a background job when the request asks
// (async), or leaves it to the engine's default (Options.AsyncByDefault),
// or when a medium of eps needs a caption or transcript from the model
// (which is asked in the job, never in the request); else in the request.
// It refuses async with form false, which leaves nothing to run, with
// EINVALID naming async.
func (e *ingest) planAdd(req engram.AddEpisodesRequest, eps []engram.Episode) (addPlan, error) {
	form := req.Form == nil || *req.Form
	async := req.Async != nil && *req.Async
	p := addPlan{mode: addUnformed, later: e.embedLater}
	switch {
	case async && !form:
		return p, engram.Errorf(engram.EINVALID, "async: an asynchronous add forms memories in the background, which form: false turns off; leave one of them out")
	case !form:
	case async, req.Async == nil && e.jobs.async, e.describer != nil && len(undescribed(eps)) > 0:
		p.mode, p.former = addJob, e.provisional
	default:
		p.mode, p.former = addInline, e.former
	}
	return p, nil
}

// formAdd forms what the plan forms at once: the engine's former's
// operations inline, the form job and the provisional memories for a
// background add. It fails with the former's or the store's error.
func (e *ingest) formAdd(ctx context.Context, a *add) error {
	var err error
	switch a.plan.mode {
	case addInline:
		a.f, err = e.form(ctx, a.plan.former, a.ns, a.eps, nil)
		a.decided = a.f.ops
	case addJob:
		a.job = newFormJob(a.ns, a.eps, a.now)
		a.f, err = formProvisional(ctx, a.plan.former, a.eps)
	}
	return err
}

// stageAdd prepares, before the transaction, what the formed memories
// need: the tenant's vault key for vault memories, and their vectors, or,
// when the plan embeds later, the list of what the embed job will embed
// (which also holds back formation's update of the turn before). It fails
// with the vault's or the embedder's error.
func (e *ingest) stageAdd(ctx context.Context, a *add) error {
	if err := e.prepareVault(ctx, a.ns, opMemories(a.f.ops)); err != nil {
		return err
	}
	a.vb = e.vec.Batch()
	if a.vb != nil && a.plan.later {
		a.vb.Later = &index.Later{}
	}
	a.f.ops = holdUpdate(a.vb, a.f.ops, a.f.prevMem)
	return a.vb.Prepare(ctx, opMemories(a.f.ops))
}

// commitAdd writes, in one transaction, the episodes with their audit
// entry and seals, the formed memories, and the jobs: the embed job
// first, as jobs of a namespace run in order, then the form job. It fails
// with the store's error, and then nothing is stored.
func (e *ingest) commitAdd(ctx context.Context, a *add) error {
	return e.store.Update(ctx, func(tx engram.Tx) error {
		var err error
		if a.mems, err = e.storeEpisodes(ctx, tx, a); err != nil {
			return err
		}
		if a.embed, err = enqueueEmbed(ctx, tx, a.vb, a.ns, a.now); err != nil {
			return err
		}
		if a.job == nil {
			return nil
		}
		return tx.EnqueueJob(ctx, a.job)
	})
}

// afterAdd makes a committed add visible: the vectors enter the index,
// the queued jobs are counted and a worker woken, and the languages of
// what formed inline are counted (a form job counts what it forms).
func (e *ingest) afterAdd(a *add) {
	a.vb.Commit()
	if a.job != nil {
		e.obs.Job(engram.JobForm, JobStateQueued)
	}
	if a.embed != nil {
		e.obs.Job(engram.JobEmbed, JobStateQueued)
	}
	if a.job != nil || a.embed != nil {
		e.wake()
	}
	if a.plan.mode != addJob {
		e.coverage.note(a.ns, opMemories(a.f.ops))
	}
}

// addResult reports a committed add.
func (e *ingest) addResult(a *add) *engram.AddEpisodesResult {
	res := &engram.AddEpisodesResult{Episodes: a.eps, Memories: append([]engram.Memory{}, a.mems...),
		Decisions: decisions(a.decided), Job: a.job, EmbedJob: a.embed, Sensitive: a.sc.report()}
	if a.plan.mode != addUnformed {
		res.Unformed = e.unformedNotes(a.eps)
	}
	return res
}

// decisions counts ops by operation, nil when there are none.
func decisions(ops []engram.MemoryOp) map[engram.Op]int {
	if len(ops) == 0 {
		return nil
	}
	n := map[engram.Op]int{}
	for _, op := range ops {
		if op.Op == "" {
			n[engram.OpNoop]++
		} else {
			n[op.Op]++
		}
	}
	return n
}

// newEpisodes makes the episodes a request describes, received at now,
// checked. It fails with EINVALID naming the episode at fault, or its
// role when that is not one of engram.Roles.
func newEpisodes(req engram.AddEpisodesRequest, now time.Time) ([]engram.Episode, error) {
	eps := make([]engram.Episode, len(req.Episodes))
	seen := make(map[string]int, len(req.Episodes))
	for i, in := range req.Episodes {
		ep := engram.Episode{
			ID: in.ID, Namespace: req.Namespace, Role: in.Role, Speaker: in.Speaker,
			Content: in.Content, Modality: in.Modality, OccurredAt: now, ReceivedAt: now,
			Metadata: in.Metadata, Media: in.Media,
		}
		if ep.ID == "" {
			ep.ID = engram.NewID()
		}
		if ep.Modality == "" {
			ep.Modality = engram.ModalityText
		}
		if in.OccurredAt != nil {
			ep.OccurredAt = norm(*in.OccurredAt)
		}
		if err := ep.Validate(); err != nil {
			return nil, prefixed(fmt.Sprintf("episodes[%d]", i), err)
		}
		if err := engram.CheckRole(fmt.Sprintf("episodes[%d].role", i), ep.Role); err != nil {
			return nil, err
		}
		if j, dup := seen[ep.ID]; dup {
			return nil, engram.Errorf(engram.EINVALID, "episodes[%d]: id %s repeats episodes[%d]", i, ep.ID, j)
		}
		seen[ep.ID] = i
		eps[i] = ep
	}
	return eps, nil
}

// newFormJob is the job that forms eps in the background.
func newFormJob(ns engram.Namespace, eps []engram.Episode, now time.Time) *engram.Job {
	ids := make([]string, len(eps))
	for i := range eps {
		ids[i] = eps[i].ID
	}
	return &engram.Job{ID: engram.NewID(), Namespace: ns, Kind: engram.JobForm, Episodes: ids, State: engram.JobQueued,
		RunAfter: now, CreatedAt: now, UpdatedAt: now}
}

// formProvisional forms eps with the provisional former fm, within the
// batch alone (no read view, no turn before: it reads and changes no
// stored memory), and returns its new memories marked provisional;
// nothing when fm is nil. It fails with the former's error.
func formProvisional(ctx context.Context, fm engram.Former, eps []engram.Episode) (formed, error) {
	if fm == nil {
		return formed{}, nil
	}
	ops, err := fm.Form(ctx, engram.FormRequest{Episodes: eps})
	if err != nil {
		return formed{}, fmt.Errorf("form provisional memories: %w", err)
	}
	f := formed{by: fm}
	for _, op := range ops {
		if op.Op != engram.OpAdd {
			continue // a change within the batch is left to the job's former
		}
		op.Memory.Metadata = maps.Clone(op.Memory.Metadata)
		if op.Memory.Metadata == nil {
			op.Memory.Metadata = map[string]any{}
		}
		op.Memory.Metadata[engram.MetaProvisional] = true
		f.ops = append(f.ops, op)
	}
	return f, nil
}

// storeEpisodes writes a's episodes, their audit entry, the spans a.sc
// sealed and the memories formed from them in tx, and returns the
// memories. An update of the turn before is dropped when that memory
// changed since it was read. It fails with EINVALID naming a media item
// whose resource is not in its episode's scope, or with the store's error.
func (e *ingest) storeEpisodes(ctx context.Context, tx engram.Tx, a *add) ([]engram.Memory, error) {
	if err := checkMediaResources(ctx, tx, a.eps); err != nil {
		return nil, err
	}
	ids := make([]string, len(a.eps))
	for i := range a.eps {
		if err := tx.InsertEpisode(ctx, &a.eps[i]); err != nil {
			return nil, prefixed(fmt.Sprintf("episodes[%d]", i), err)
		}
		ids[i] = a.eps[i].ID
	}
	actor := engram.ActorFrom(ctx)
	if err := tx.InsertAudit(ctx, e.audit(a.ns, actor, "episode.add", ids, "", a.now)); err != nil {
		return nil, err
	}
	if err := e.storeSeals(ctx, tx, a.vb, a.ns, a.sc, actor, a.now); err != nil {
		return nil, err
	}
	apply, err := dropStale(ctx, tx, engram.ScopeOf(a.ns), a.f.ops, a.f.prevMem)
	if err != nil {
		return nil, err
	}
	by := a.f.by
	if by == nil {
		by = e.former
	}
	return e.applyOps(ctx, tx, a.vb, formScope(a.ns), apply, formerActor(by, actor), a.now)
}

// dropStale returns ops without those on read's memory when that memory
// changed (another version, no longer active, or purged) since it was read
// before the transaction: formation's update of the turn before is a
// courtesy that must neither fail the add nor overwrite a newer edit.
// With read nil it returns ops. It fails only when the store does.
func dropStale(ctx context.Context, tx engram.Tx, s engram.Scope, ops []engram.MemoryOp, read *engram.Memory) ([]engram.MemoryOp, error) {
	if read == nil {
		return ops, nil
	}
	cur, err := tx.GetMemory(ctx, s, read.ID)
	switch {
	case engram.ErrorCode(err) == engram.ENOTFOUND:
	case err != nil:
		return nil, err
	case cur.Version == read.Version && cur.Status == engram.StatusActive:
		return ops, nil
	}
	return slices.DeleteFunc(slices.Clone(ops), func(op engram.MemoryOp) bool { return op.TargetID == read.ID }), nil
}

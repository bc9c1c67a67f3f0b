package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// AddEpisodes implements engram.Service. The operations formation
// decides are reported to the engine's Observer once written.
func (e *ingest) AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	ctx, trail := e.withTrail(ctx, TriggerFormer)
	res, err := e.addEpisodes(ctx, req)
	e.report(ctx, trail, err)
	return res, err
}

// addEpisodes is AddEpisodes.
func (e *ingest) addEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	if err := req.Namespace.Validate(); err != nil {
		return nil, err
	}
	if err := checkBatch("episodes", len(req.Episodes)); err != nil {
		return nil, err
	}
	now := e.clock()
	eps, err := newEpisodes(req, now)
	if err != nil {
		return nil, err
	}
	sc, err := e.treatEpisodes(ctx, req.Namespace, eps)
	if err != nil {
		return nil, err
	}
	async, err := e.isAsync(req)
	if err != nil {
		return nil, err
	}
	form := req.Form == nil || *req.Form
	if form && e.describer != nil && len(undescribed(eps)) > 0 {
		async = true // the model is asked in the background job, never in the request
	}
	if async {
		res, err := e.addAsync(ctx, req.Namespace, eps, sc, now)
		if res != nil {
			res.Unformed = e.unformedNotes(eps)
			res.Sensitive = sc.report()
		}
		return res, err
	}
	var f formed
	if form {
		if f, err = e.form(ctx, req.Namespace, eps, nil); err != nil {
			return nil, err
		}
	}
	if err := e.prepareVault(ctx, req.Namespace, opMemories(f.ops)); err != nil {
		return nil, err
	}
	vb := e.laterBatch()
	decided := f.ops
	f.ops = vb.holdUpdate(f.ops, f.prevMem)
	if err := vb.prepare(ctx, opMemories(f.ops)); err != nil {
		return nil, err
	}
	res := &engram.AddEpisodesResult{Episodes: eps, Memories: []engram.Memory{}}
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		mems, err := e.storeEpisodes(ctx, tx, vb, req.Namespace, eps, f, sc, now)
		if err != nil {
			return err
		}
		res.Memories = append(res.Memories, mems...)
		res.EmbedJob, err = enqueueEmbed(ctx, tx, vb, req.Namespace, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	vb.commit()
	if res.EmbedJob != nil {
		e.obs.Job(engram.JobEmbed, JobStateQueued)
		e.wake()
	}
	e.coverage.note(req.Namespace, opMemories(f.ops))
	res.Decisions = decisions(decided)
	res.Sensitive = sc.report()
	if form {
		res.Unformed = e.unformedNotes(eps)
	}
	return res, nil
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

// formed is what the former made of a batch of episodes.
type formed struct {
	ops     []engram.MemoryOp
	prevMem *engram.Memory // the memory of the turn before, as read, when the former continued it
	by      engram.Former  // who formed ops, when not the engine's former
}

// form runs the former over eps with what its FormNeeds ask for (the
// turn stored just before them, a read view of the namespace's scope);
// then over the captions and transcripts of their media (formMedia; gen
// names those the model made). It fails with the former's or the store's
// error.
func (e *ingest) form(ctx context.Context, ns engram.Namespace, eps []engram.Episode, gen map[mediaKey]bool) (formed, error) {
	needs := e.former.Needs()
	req := engram.FormRequest{Episodes: eps}
	var err error
	if req.Prev, req.PrevMemory, err = e.earlier(ctx, ns, eps, needs.ContinueWithin); err != nil {
		return formed{}, fmt.Errorf("find the turn before: %w", err)
	}
	if needs.ReadsScope {
		req.View = e.formView(ns)
	}
	f := formed{prevMem: req.PrevMemory}
	if f.ops, err = e.former.Form(ctx, req); err != nil {
		return f, fmt.Errorf("form memories: %w", err)
	}
	media, err := e.formMedia(ctx, eps, gen)
	f.ops = append(f.ops, media...)
	return f, err
}

// formView is a former's view of what turns said in ns may change
// (formScope): vault memories left out, and each read in its own short
// read transaction, so a former that takes seconds between reads (a
// model call) holds no store connection or snapshot meanwhile.
func (e *ingest) formView(ns engram.Namespace) engram.ScopeReader {
	return withoutVault{viewScope{e.store, formScope(ns)}}
}

// viewScope is an engram.ScopeReader over a store whose
// every call runs in a read transaction of its own and returns only what
// o holds. The store reads o.reach(), which admits exactly what o holds
// (an agent-less namespace's reach admits no agent's memories), so a read
// with a limit is filled; what is read is checked against o once more.
type viewScope struct {
	st engram.Store
	o  opScope
}

func (v viewScope) Scope() engram.Scope { return v.o.reach() }

// GetMemory fails with ENOTFOUND for a memory the view does not hold.
func (v viewScope) GetMemory(ctx context.Context, id string) (m *engram.Memory, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		m, err = r.GetMemory(ctx, v.o.reach(), id)
		return err
	})
	if err == nil && !v.o.holds(m.Namespace) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	return m, err
}

func (v viewScope) ListMemories(ctx context.Context, f engram.MemoryFilter) (ms []engram.Memory, next string, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		ms, next, err = r.ListMemories(ctx, v.o.reach(), f)
		return err
	})
	return v.o.keep(ms), next, err
}

func (v viewScope) SearchText(ctx context.Context, query string, f engram.MemoryFilter, limit int) (hs []engram.TextHit, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		hs, err = r.SearchText(ctx, v.o.reach(), query, f, limit)
		return err
	})
	return slices.DeleteFunc(hs, func(h engram.TextHit) bool { return !v.o.holds(h.Memory.Namespace) }), err
}

// CurrentProfile implements engram.ProfileFinder: the profile of the
// view's user, read in its own transaction.
func (v viewScope) CurrentProfile(ctx context.Context) (m *engram.Memory, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		m, err = userProfile(ctx, r, engram.ScopeOf(v.o.home))
		return err
	})
	return m, err
}

func (v viewScope) ListEpisodes(ctx context.Context, f engram.EpisodeFilter) (eps []engram.Episode, next string, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		eps, next, err = r.ListEpisodes(ctx, v.o.reach(), f)
		return err
	})
	return slices.DeleteFunc(eps, func(ep engram.Episode) bool { return !v.o.holds(ep.Namespace) }), next, err
}

// storeEpisodes writes the episodes, their audit entry, the spans sc
// sealed and the memories formed from them in tx, and returns the
// memories. An update of the turn before is dropped when that memory
// changed since it was read.
func (e *ingest) storeEpisodes(ctx context.Context, tx engram.Tx, vb *vecBatch, ns engram.Namespace, eps []engram.Episode, f formed, sc *treated, now time.Time) ([]engram.Memory, error) {
	if err := checkMediaResources(ctx, tx, eps); err != nil {
		return nil, err
	}
	ids := make([]string, len(eps))
	for i := range eps {
		if err := tx.InsertEpisode(ctx, &eps[i]); err != nil {
			return nil, prefixed(fmt.Sprintf("episodes[%d]", i), err)
		}
		ids[i] = eps[i].ID
	}
	actor := engram.ActorFrom(ctx)
	if err := tx.InsertAudit(ctx, e.audit(ns, actor, "episode.add", ids, "", now)); err != nil {
		return nil, err
	}
	if err := e.storeSeals(ctx, tx, vb, ns, sc, actor, now); err != nil {
		return nil, err
	}
	apply := f.ops
	if f.prevMem != nil {
		var err error
		if apply, err = dropStale(ctx, tx, engram.ScopeOf(ns), f.ops, f.prevMem); err != nil {
			return nil, err
		}
	}
	by := f.by
	if by == nil {
		by = e.former
	}
	return e.applyOps(ctx, tx, vb, formScope(ns), apply, formerActor(by, actor), now)
}

// dropStale returns ops without those on read's memory when that memory
// changed (another version, no longer active, or purged) since it was read
// before the transaction: formation's update of the turn before is a
// courtesy that must neither fail the add nor overwrite a newer edit. It
// fails only when the store does.
func dropStale(ctx context.Context, tx engram.Tx, s engram.Scope, ops []engram.MemoryOp, read *engram.Memory) ([]engram.MemoryOp, error) {
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
	vb := e.vec.batch()
	if err := vb.prepare(ctx, opMemories(ops)); err != nil {
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
	vb.commit()
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
	if err := vb.stage(ctx, tx, st); err != nil {
		return err
	}
	if !vb.holdsGraph(st) {
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

// earlier returns the latest episode stored in exactly namespace n (not
// in one of its sessions or agents) that occurred within d before the
// first of eps, and the active memory formed from that episode alone (nil
// if none), so that a conversation added a turn at a time is formed as if
// it had come in one batch. It returns nil, nil when there is no such
// episode; an error only when the store fails.
func (e *writer) earlier(ctx context.Context, n engram.Namespace, eps []engram.Episode, d time.Duration) (*engram.Episode, *engram.Memory, error) {
	if len(eps) == 0 || d <= 0 {
		return nil, nil, nil
	}
	first := eps[0].OccurredAt
	for i := range eps {
		if eps[i].OccurredAt.Before(first) {
			first = eps[i].OccurredAt
		}
	}
	s := engram.ScopeOf(n)
	var prev *engram.Episode
	var mem *engram.Memory
	err := e.store.View(ctx, func(r engram.Reader) error {
		// Episodes list oldest first, so the look back widens in steps
		// rather than reading a whole busy conversation every turn.
		for _, w := range []time.Duration{min(d, time.Minute), min(d, 15*time.Minute), d} {
			from := first.Add(-w)
			f := engram.EpisodeFilter{OccurredAfter: &from, OccurredBefore: &first, Limit: engram.MaxLimit}
			for {
				page, next, err := r.ListEpisodes(ctx, s, f)
				if err != nil {
					return err
				}
				for i := range page {
					if page[i].Namespace == n {
						prev = &page[i]
					}
				}
				if next == "" {
					break
				}
				f.Cursor = next
			}
			if prev != nil || w == d {
				break
			}
		}
		if prev == nil {
			return nil
		}
		ms, _, err := r.ListMemories(ctx, s, engram.MemoryFilter{Sources: []string{prev.ID}, Kinds: []engram.Kind{engram.KindEpisodic}})
		if err != nil {
			return err
		}
		for i := range ms {
			if len(ms[i].Sources) == 1 && ms[i].Namespace == n {
				mem = &ms[i]
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return prev, mem, nil
}

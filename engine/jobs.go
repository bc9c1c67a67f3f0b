package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/engramhq/engram"
)

// Defaults of the job options.
const (
	defaultJobLease    = time.Minute
	defaultJobBackoff  = 2 * time.Second
	defaultJobAttempts = 5
	defaultJobPoll     = 500 * time.Millisecond
	maxBackoffSteps    = 6 // the backoff doubles at most this often
)

// jobRunner holds the job settings of an engine and its worker pool.
type jobRunner struct {
	lease, backoff, poll time.Duration
	attempts             int
	perTenant            int    // the most jobs of one tenant this engine runs at once; 0: no cap
	async                bool   // AsyncByDefault
	owner                string // this engine's name in leases; workers add their number

	kick   chan struct{} // wakes a worker when this engine enqueued a job
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex     // held by a claim, so the cap holds between workers
	running map[string]int // jobs running per tenant
}

func newJobRunner(o Options) *jobRunner {
	r := &jobRunner{lease: o.JobLease, backoff: o.JobBackoff, poll: o.JobPoll, attempts: o.JobAttempts,
		perTenant: o.JobsPerTenant, async: o.AsyncByDefault, owner: "engine-" + engram.NewID(),
		kick: make(chan struct{}, 1), running: map[string]int{}}
	if r.perTenant == 0 && o.Workers > 1 {
		r.perTenant = o.Workers - 1
	}
	if r.lease <= 0 {
		r.lease = defaultJobLease
	}
	if r.backoff <= 0 {
		r.backoff = defaultJobBackoff
	}
	if r.poll <= 0 {
		r.poll = defaultJobPoll
	}
	if r.attempts <= 0 {
		r.attempts = defaultJobAttempts
	}
	return r
}

// retryAt returns when a job that failed its attempt-th try runs again, or
// nil when it has had all its tries.
func (r *jobRunner) retryAt(attempt int, now time.Time) *time.Time {
	if attempt >= r.attempts {
		return nil
	}
	t := now.Add(r.backoff << min(max(attempt-1, 0), maxBackoffSteps))
	return &t
}

// startWorkers runs n workers until stopWorkers.
func (e *ingest) startWorkers(n int) {
	ctx, cancel := context.WithCancel(context.Background())
	e.jobs.cancel = cancel
	for i := range n {
		owner := e.jobs.owner + "/" + strconv.Itoa(i)
		e.jobs.wg.Add(1)
		go e.work(ctx, owner)
	}
}

// stopWorkers stops the workers and waits for them: a job interrupted
// midway is queued again at once.
func (e *ingest) stopWorkers() {
	if e.jobs.cancel != nil {
		e.jobs.cancel()
		e.jobs.wg.Wait()
	}
}

// work runs jobs whenever there are any, looking every poll interval and
// when this engine enqueues one, until ctx ends.
func (e *ingest) work(ctx context.Context, owner string) {
	defer e.jobs.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.jobs.kick:
		}
		if _, err := e.runJobs(ctx, owner); err != nil && ctx.Err() == nil {
			e.log.Warn("run background jobs", "err", err)
		}
		t.Reset(e.jobs.poll)
	}
}

// RunJobs runs, one after another, every background job that may run now
// (in any tenant), and says how many it ran; a job that fails is queued
// again or marked failed and counts too. It returns the store's error.
// Engines with Options.Workers run jobs on their own; RunJobs is for the
// others (tests, a one-shot maintenance run).
func (e *ingest) RunJobs(ctx context.Context) (int, error) {
	return e.runJobs(ctx, e.jobs.owner+"/run")
}

func (e *ingest) runJobs(ctx context.Context, owner string) (int, error) {
	for n := 0; ; n++ {
		j, done, err := e.claim(ctx, owner)
		if err != nil || j == nil {
			return n, err
		}
		err = e.runJob(ctx, owner, j)
		done()
		if err != nil {
			return n + 1, err
		}
	}
}

// claim takes the next job for owner outside the tenants that have as
// many jobs running here as the cap allows, or nil when none may run now.
// A claimed job counts as running in its tenant until done releases it.
func (e *ingest) claim(ctx context.Context, owner string) (j *engram.Job, done func(), err error) {
	r := e.jobs
	r.mu.Lock()
	defer r.mu.Unlock()
	var full []string
	for tenant, n := range r.running {
		if r.perTenant > 0 && n >= r.perTenant {
			full = append(full, tenant)
		}
	}
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		j, err = tx.ClaimJob(ctx, owner, e.clock(), r.lease, full...)
		return err
	})
	if err != nil || j == nil {
		return nil, nil, err
	}
	tenant := j.Namespace.Tenant()
	r.running[tenant]++
	return j, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.running[tenant]--; r.running[tenant] <= 0 {
			delete(r.running, tenant)
		}
	}, nil
}

// runJob runs a claimed job (forms its memories, or embeds them) and
// records the outcome. A failure of the former, the embedder or the store
// is the job's (it is retried or failed); runJob itself fails only when
// the outcome cannot be recorded.
func (e *ingest) runJob(ctx context.Context, owner string, j *engram.Job) error {
	jctx, cancel := context.WithTimeout(ctx, e.jobs.lease)
	defer cancel()
	var err error
	kind := engram.JobForm
	jctx, trail := e.withTrail(jctx, TriggerJob)
	if j.Kind == engram.JobEmbed {
		kind = engram.JobEmbed
		err = e.embedJob(jctx, owner, j)
	} else {
		err = e.formJob(jctx, owner, j)
	}
	e.report(jctx, trail, err)
	switch {
	case err == nil:
		e.obs.Job(kind, JobStateDone)
		return nil
	case engram.ErrorCode(err) == engram.ECONFLICT && errors.Is(err, errLeaseLost):
		e.obs.Job(kind, JobStateLost)
		e.log.Warn("background job taken over by another worker", "job", j.ID, "tenant", j.Namespace.Tenant())
		return nil
	}
	now := e.clock()
	retry := e.jobs.retryAt(j.Attempts, now)
	reason := err.Error()
	var held heldOff
	deferred := errors.As(err, &held)
	switch {
	case ctx.Err() != nil:
		// The engine is stopping: give the job back at once.
		reason, retry = "interrupted: the worker stopped: "+reason, &now
	case deferred:
		at := now.Add(held.RetryIn())
		retry = &at
		e.log.Info("background job put off: the model is held off", "job", j.ID, "tenant", j.Namespace.Tenant(), "until", at)
	default:
		e.log.Warn("background job failed", "job", j.ID, "tenant", j.Namespace.Tenant(), "attempt", j.Attempts, "retry", retry != nil, "err", err)
	}
	switch {
	case deferred && ctx.Err() == nil:
		e.obs.Job(kind, JobStateDeferred)
	case retry != nil:
		e.obs.Job(kind, JobStateRetrying)
	default:
		e.obs.Job(kind, JobStateFailed)
	}
	return e.settleFailed(ctx, owner, j, reason, retry, deferred && ctx.Err() == nil, now)
}

// heldOff is the error of a former whose model is held off (a circuit
// breaker is open, see llmformer.HeldOffError): the job is put off for
// RetryIn without counting its attempt.
type heldOff interface {
	error
	RetryIn() time.Duration
}

// settleFailed records the failed run of j: put off to retry with its
// attempt given back (deferred), retrying at retry, or failed for good
// when retry is nil. A job another worker has taken over is left to it.
func (e *ingest) settleFailed(ctx context.Context, owner string, j *engram.Job, reason string, retry *time.Time, deferred bool, now time.Time) error {
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer scancel()
	return e.store.Update(sctx, func(tx engram.Tx) error {
		var err error
		if deferred {
			err = tx.DeferJob(sctx, j.Namespace, j.ID, owner, reason, *retry, now)
		} else {
			err = tx.FailJob(sctx, j.Namespace, j.ID, owner, reason, retry, now)
		}
		if engram.ErrorCode(err) == engram.ECONFLICT {
			return nil // another worker has it now; its outcome counts
		}
		return err
	})
}

// errLeaseLost marks the conflict of a job completed by a worker whose
// lease another worker took over.
var errLeaseLost = errors.New("lease lost")

// formJob forms the memories of j's episodes and, in one transaction,
// applies them and marks j done. When a memory already cites one of the
// episodes (an earlier run applied its operations but the job was not
// marked done, which the single transaction rules out unless the episodes
// were formed some other way) it marks j done without forming again, so a
// job run twice adds nothing twice.
func (e *ingest) formJob(ctx context.Context, owner string, j *engram.Job) error {
	ns, s := j.Namespace, engram.ScopeOf(j.Namespace)
	ctx = engram.WithActor(ctx, "job:"+j.ID)
	eps, err := e.jobEpisodes(ctx, j)
	if err != nil {
		return err
	}
	var f formed
	if len(eps) > 0 {
		gen, err := e.describeMedia(ctx, eps)
		if err != nil {
			return err
		}
		if f, err = e.form(ctx, e.former, ns, eps, gen); err != nil {
			return err
		}
	}
	if err := e.prepareVault(ctx, ns, opMemories(f.ops)); err != nil {
		return err
	}
	vb := e.vec.Batch()
	if err := vb.Prepare(ctx, opMemories(f.ops)); err != nil {
		return err
	}
	now := e.clock()
	var applied []engram.Memory
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		if applied, err = e.applyJob(ctx, tx, vb, s, j, f, now); err != nil {
			return err
		}
		if err := tx.CompleteJob(ctx, ns, j.ID, owner, now); err != nil {
			return fmt.Errorf("%w: %w", err, errLeaseLost)
		}
		return nil
	})
	if err != nil {
		return err
	}
	vb.Commit()
	e.coverage.note(ns, applied)
	return nil
}

// applyJob applies f's operations in tx unless a memory other than a
// provisional one already cites one of j's episodes, then retires the
// provisional memories of j's episodes, and returns the memories it added
// or changed.
func (e *ingest) applyJob(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, j *engram.Job, f formed, now time.Time) ([]engram.Memory, error) {
	formed, err := formedBefore(ctx, tx, s, j.Episodes)
	if err != nil || formed {
		return nil, err
	}
	apply, err := dropStale(ctx, tx, s, f.ops, f.prevMem)
	if err != nil {
		return nil, err
	}
	actor := formerActor(e.former, engram.ActorFrom(ctx))
	if _, err := e.applyOps(ctx, tx, vb, formScope(j.Namespace), apply, actor, now); err != nil {
		return nil, err
	}
	if err := e.retireProvisional(ctx, tx, vb, s, j.Episodes, actor, now); err != nil {
		return nil, err
	}
	return opMemories(apply), nil
}

// jobEpisodes reads j's episodes, leaving out any deleted since.
func (e *ingest) jobEpisodes(ctx context.Context, j *engram.Job) ([]engram.Episode, error) {
	var eps []engram.Episode
	err := e.store.View(ctx, func(r engram.Reader) error {
		for _, id := range j.Episodes {
			ep, err := r.GetEpisode(ctx, engram.ScopeOf(j.Namespace), id)
			switch {
			case engram.ErrorCode(err) == engram.ENOTFOUND:
				continue
			case err != nil:
				return err
			}
			eps = append(eps, *ep)
		}
		return nil
	})
	return eps, err
}

// GetJob implements engram.Service.
func (e *ingest) GetJob(ctx context.Context, s engram.Scope, id string) (*engram.Job, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	var j *engram.Job
	err = e.store.View(ctx, func(r engram.Reader) error {
		j, err = r.GetJob(ctx, s, id)
		return err
	})
	return j, err
}

// ListJobs implements engram.Service.
func (e *ingest) ListJobs(ctx context.Context, s engram.Scope, f engram.JobFilter) (*engram.JobPage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	page := &engram.JobPage{Jobs: []engram.Job{}}
	err = e.store.View(ctx, func(r engram.Reader) error {
		jobs, next, err := r.ListJobs(ctx, s, f)
		page.Jobs, page.Next = append(page.Jobs, jobs...), next
		return err
	})
	if err != nil {
		return nil, err
	}
	// Optional on the former: llmformer's model calls go through a
	// breaker; the rules former (formation) calls no model, has none, and
	// the page then reports no breaker.
	if b, ok := e.former.(engram.BreakerReporter); ok {
		st := b.BreakerStatus()
		page.Breaker = &st
	}
	return page, nil
}

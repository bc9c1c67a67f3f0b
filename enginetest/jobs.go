package enginetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// addAsync adds texts to ns as one asynchronous batch and returns the result.
func addAsync(t *testing.T, e *engine.Engine, ns engram.Namespace, texts ...string) *engram.AddEpisodesResult {
	t.Helper()
	in := make([]engram.EpisodeInput, len(texts))
	for i, s := range texts {
		at := t0.Add(time.Duration(i) * time.Minute)
		in[i] = engram.EpisodeInput{Role: "user", Speaker: "Alice", Content: s, OccurredAt: &at}
	}
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: in, Async: ptr(true)})
	if err != nil {
		t.Fatalf("add episodes async: %v", err)
	}
	if res.Job == nil {
		t.Fatal("an asynchronous add returned no job")
	}
	return res
}

func mustJob(t *testing.T, e *engine.Engine, s engram.Scope, id string) *engram.Job {
	t.Helper()
	j, err := e.GetJob(ctx, s, id)
	if err != nil {
		t.Fatalf("get job %s: %v", id, err)
	}
	return j
}

func runJobs(t *testing.T, e *engine.Engine) int {
	t.Helper()
	n, err := e.RunJobs(ctx)
	if err != nil {
		t.Fatalf("run jobs: %v", err)
	}
	return n
}

// testAsyncAdd: an asynchronous add stores the episodes and a queued job
// at once, forms nothing, and the job, when run, forms the memories and
// is done. The job is visible in its own scope only.
func testAsyncAdd(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	res := addAsync(t, e, nsA, "Alice adopted a dog named Bruno.", "Alice hat einen Hund namens Bruno adoptiert.", "爱丽丝领养了一只叫布鲁诺的狗。")
	if len(res.Memories) != 0 || len(res.Episodes) != 3 {
		t.Fatalf("async add returned %d memories and %d episodes, want 0 and 3", len(res.Memories), len(res.Episodes))
	}
	j := mustJob(t, e, scA, res.Job.ID)
	if j.State != engram.JobQueued || j.Attempts != 0 || len(j.Episodes) != 3 || j.Namespace != nsA {
		t.Fatalf("new job = %+v, want queued, 0 attempts, 3 episodes in %v", j, nsA)
	}
	if n := countEpisodes(t, e, scA); n != 3 {
		t.Errorf("%d episodes stored before the job ran, want 3", n)
	}
	if n := countMemories(t, e, scA); n != 0 {
		t.Errorf("%d memories before the job ran, want 0", n)
	}
	if _, err := e.GetJob(ctx, scB, res.Job.ID); code(err) != engram.ENOTFOUND {
		t.Errorf("another user's GetJob: %v, want ENOTFOUND", err)
	}
	if p, err := e.ListJobs(ctx, scB, engram.JobFilter{}); err != nil || len(p.Jobs) != 0 {
		t.Errorf("another user's ListJobs = %v, %v; want none", p, err)
	}
	if n := runJobs(t, e); n != 1 {
		t.Fatalf("RunJobs ran %d jobs, want 1", n)
	}
	j = mustJob(t, e, scA, res.Job.ID)
	if j.State != engram.JobDone || j.Attempts != 1 || j.LastError != "" || j.LeaseOwner != "" {
		t.Errorf("job after its run = %+v, want done after 1 attempt", j)
	}
	if n := countMemories(t, e, scA); n != 3 {
		t.Errorf("%d memories after the job, want 3", n)
	}
	for _, q := range []string{"Bruno dog", "Hund", "布鲁诺"} {
		if ids := searchIDs(t, e, scA, q); len(ids) == 0 {
			t.Errorf("search %q finds nothing after the job", q)
		}
	}
	if n := runJobs(t, e); n != 0 {
		t.Errorf("a second RunJobs ran %d jobs, want 0", n)
	}
	p, err := e.ListJobs(ctx, scA, engram.JobFilter{States: []engram.JobState{engram.JobDone}})
	if err != nil || len(p.Jobs) != 1 || p.Jobs[0].ID != res.Job.ID {
		t.Errorf("ListJobs(done) = %+v, %v; want the one job", p, err)
	}
	if p, err := e.ListJobs(ctx, scA, engram.JobFilter{States: []engram.JobState{engram.JobQueued}}); err != nil || len(p.Jobs) != 0 {
		t.Errorf("ListJobs(queued) = %+v, %v; want none", p, err)
	}
	if _, err := e.ListJobs(ctx, scA, engram.JobFilter{States: []engram.JobState{"sleeping"}}); code(err) != engram.EINVALID {
		t.Errorf("ListJobs with a bad state: %v, want EINVALID", err)
	}
	// Purging the scope takes its jobs, and no one else's.
	other := addAsync(t, e, nsB, "Bob keeps bees.")
	addAsync(t, e, nsA, "Alice bakes bread.")
	if _, err := e.DeleteScope(ctx, scA); err != nil {
		t.Fatal(err)
	}
	if p, err := e.ListJobs(ctx, scA, engram.JobFilter{}); err != nil || len(p.Jobs) != 0 {
		t.Errorf("jobs after purging the scope: %+v, %v; want none", p, err)
	}
	if j := mustJob(t, e, scB, other.Job.ID); j.State != engram.JobQueued {
		t.Errorf("another user's job after the purge = %+v, want still queued", j)
	}
}

// testAsyncDefault: AsyncByDefault makes an add that does not say
// asynchronous; async false and form false keep it synchronous, and async
// true with form false is refused with nothing stored.
func testAsyncDefault(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{AsyncByDefault: true})
	res := mustAddEpisodes(t, e, nsA, "Alice runs on Sundays.")
	if res.Job == nil || len(res.Memories) != 0 {
		t.Fatalf("AsyncByDefault: job %v, %d memories; want a job and none", res.Job, len(res.Memories))
	}
	in := []engram.EpisodeInput{{Content: "Alice swims on Mondays."}}
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: in, Async: ptr(false)})
	if err != nil || res.Job != nil || len(res.Memories) != 1 {
		t.Fatalf("async false: %+v, %v; want one memory and no job", res, err)
	}
	_, err = e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: "x"}}, Async: ptr(true), Form: ptr(false)})
	if code(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "async") {
		t.Errorf("async with form false: %v, want EINVALID naming async", err)
	}
	if n := countEpisodes(t, e, scA); n != 2 {
		t.Errorf("%d episodes, want 2 (the refused add stores nothing)", n)
	}
}

// flakyFormer fails while fail is above zero, counting down, and forms
// one memory per episode after that.
type flakyFormer struct {
	mu   sync.Mutex
	fail int
	runs int
}

func (f *flakyFormer) Needs() engram.FormNeeds { return engram.FormNeeds{} }

func (f *flakyFormer) Form(_ context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	eps := req.Episodes
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs++
	if f.fail > 0 {
		f.fail--
		return nil, fmt.Errorf("model unreachable (run %d)", f.runs)
	}
	ops := make([]engram.MemoryOp, len(eps))
	for i, ep := range eps {
		ops[i] = engram.MemoryOp{Op: engram.OpAdd, Memory: engram.Memory{Kind: engram.KindEpisodic, Value: ep.Content, Sources: []string{ep.ID}}}
	}
	return ops, nil
}

func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// testJobRetries: a failing former fails the job's attempts, each retried
// after a doubling backoff, until the last marks it failed with the
// former's error; the episode stays stored, a later job of the namespace
// waits for the failing one, then succeeds.
func testJobRetries(t *testing.T, open Open) {
	f := &flakyFormer{fail: 3}
	c := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Former: f, Now: c.now, JobAttempts: 3, JobBackoff: time.Minute})
	first := addAsync(t, e, nsA, "Alice ist Vegetarierin.")
	second := addAsync(t, e, nsA, "Alice vive en Madrid.")
	for attempt, wait := 1, time.Minute; attempt <= 3; attempt, wait = attempt+1, wait*2 {
		// The later job waits while the first may still be retried, and
		// runs once the first has failed for good.
		if n, want := runJobs(t, e), 1+attempt/3; n != want {
			t.Fatalf("attempt %d: RunJobs ran %d jobs, want %d", attempt, n, want)
		}
		j := mustJob(t, e, scA, first.Job.ID)
		if j.Attempts != attempt || !strings.Contains(j.LastError, "model unreachable") {
			t.Fatalf("attempt %d: job = %+v, want that many attempts and the former's error", attempt, j)
		}
		if attempt < 3 {
			if j.State != engram.JobRetrying || !j.RunAfter.Equal(c.now().Add(wait)) {
				t.Fatalf("attempt %d: state %s, run after %v; want retrying, after %v", attempt, j.State, j.RunAfter, c.now().Add(wait))
			}
			if n := runJobs(t, e); n != 0 {
				t.Fatalf("attempt %d: RunJobs ran %d jobs before the backoff passed", attempt, n)
			}
			c.add(wait)
		} else if j.State != engram.JobFailed {
			t.Fatalf("after the last attempt: state %s, want failed", j.State)
		}
	}
	if _, err := e.GetEpisode(ctx, scA, first.Episodes[0].ID); err != nil {
		t.Errorf("the failed job's episode is gone: %v", err)
	}
	if j := mustJob(t, e, scA, second.Job.ID); j.State != engram.JobDone {
		t.Errorf("the later job = %+v, want done", j)
	}
	if n := countMemories(t, e, scA); n != 1 {
		t.Errorf("%d memories, want 1 (from the later job only)", n)
	}
}

// testJobIdempotent: a job run again, or a second job over the same
// episodes, and a job taken over after its worker's lease lapsed, add no
// memory twice; the worker that lost its lease cannot complete the job.
func testJobIdempotent(t *testing.T, open Open) {
	c := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Now: c.now, JobLease: time.Minute})
	res := addAsync(t, e, nsA, "Alice plays the cello.", "Alice practises every evening.")
	runJobs(t, e)
	if n := countMemories(t, e, scA); n == 0 {
		t.Fatal("no memories after the job")
	}
	before := countMemories(t, e, scA, engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted)
	again := &engram.Job{ID: engram.NewID(), Namespace: nsA, Episodes: res.Job.Episodes, State: engram.JobQueued,
		RunAfter: c.now(), CreatedAt: c.now(), UpdatedAt: c.now()}
	err := e.Store().Update(ctx, func(tx engram.Tx) error {
		if err := tx.EnqueueJob(ctx, again); err != nil {
			return err
		}
		// A worker that claims it and dies.
		j, err := tx.ClaimJob(ctx, "dead-worker", c.now(), time.Minute)
		if err == nil && (j == nil || j.ID != again.ID) {
			err = fmt.Errorf("claimed %v, want job %s", j, again.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := runJobs(t, e); n != 0 {
		t.Fatalf("RunJobs ran %d jobs while a live lease holds the only one", n)
	}
	c.add(time.Minute)
	if n := runJobs(t, e); n != 1 {
		t.Fatalf("RunJobs ran %d jobs after the lease lapsed, want 1", n)
	}
	j := mustJob(t, e, scA, again.ID)
	if j.State != engram.JobDone || j.Attempts != 2 {
		t.Errorf("taken-over job = %+v, want done after 2 attempts", j)
	}
	if after := countMemories(t, e, scA, engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted); after != before {
		t.Errorf("%d memories after running the episodes' job again, want %d", after, before)
	}
	err = e.Store().Update(ctx, func(tx engram.Tx) error {
		return tx.CompleteJob(ctx, nsA, again.ID, "dead-worker", c.now())
	})
	if code(err) != engram.ECONFLICT {
		t.Errorf("the dead worker completes the job: %v, want ECONFLICT", err)
	}
}

// orderFormer records the order in which it forms episodes per namespace
// and the most formations of one namespace it saw at once.
type orderFormer struct {
	mu      sync.Mutex
	seen    map[engram.Namespace][]string
	running map[engram.Namespace]int
	most    int
}

func (f *orderFormer) Needs() engram.FormNeeds { return engram.FormNeeds{} }

func (f *orderFormer) Form(_ context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	eps := req.Episodes
	ns := eps[0].Namespace
	f.mu.Lock()
	f.running[ns]++
	f.most = max(f.most, f.running[ns])
	f.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // let another worker try the namespace meanwhile
	f.mu.Lock()
	f.running[ns]--
	for _, ep := range eps {
		f.seen[ns] = append(f.seen[ns], ep.Content)
	}
	f.mu.Unlock()
	return nil, nil
}

// testJobOrder: with several workers, the jobs of one namespace run one at
// a time, in the order they were enqueued.
func testJobOrder(t *testing.T, open Open) {
	f := &orderFormer{seen: map[engram.Namespace][]string{}, running: map[engram.Namespace]int{}}
	e := newEngine(t, open, engine.Options{Former: f, Workers: 4, JobPoll: 5 * time.Millisecond})
	var want []string
	var ids []string
	for i := range 6 {
		for _, ns := range []engram.Namespace{nsA, nsB} {
			text := fmt.Sprintf("turn %d of %s", i, ns.User)
			ids = append(ids, addAsync(t, e, ns, text).Job.ID)
			if ns == nsA {
				want = append(want, text)
			}
		}
	}
	waitJobs(t, e, []engram.Scope{scA, scB}, len(ids))
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.seen[nsA]; !slices.Equal(got, want) {
		t.Errorf("namespace A formed in the order %q, want %q", got, want)
	}
	if f.most != 1 {
		t.Errorf("up to %d jobs of one namespace ran at once, want 1", f.most)
	}
}

// waitJobs waits until n jobs of the scopes are done, failing the test
// after ten seconds or when one fails.
func waitJobs(t *testing.T, e *engine.Engine, scopes []engram.Scope, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		done := 0
		for _, s := range scopes {
			p, err := e.ListJobs(ctx, s, engram.JobFilter{Limit: engram.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range p.Jobs {
				switch j.State {
				case engram.JobDone:
					done++
				case engram.JobFailed:
					t.Fatalf("job %s failed: %s", j.ID, j.LastError)
				}
			}
		}
		if done == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs done after 10s", done, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// namedFormer is flakyFormer that names itself, as the LLM former does.
type namedFormer struct{ flakyFormer }

func (*namedFormer) Needs() engram.FormNeeds { return engram.FormNeeds{Actor: "former:test"} }

// testJobActor: a background job records its memories under the former's
// own name, as a synchronous add does, not under the job.
func testJobActor(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Former: &namedFormer{}})
	addAsync(t, e, nsA, "Alice collects stamps.")
	if n := runJobs(t, e); n != 1 {
		t.Fatalf("RunJobs ran %d jobs, want 1", n)
	}
	page, err := e.ListMemories(ctx, scA, engram.MemoryFilter{})
	if err != nil || len(page.Memories) != 1 {
		t.Fatalf("memories after the job: %v, %v", page, err)
	}
	vs, err := e.History(ctx, scA, page.Memories[0].ID)
	if err != nil || len(vs) == 0 {
		t.Fatalf("history: %v, %v", vs, err)
	}
	if vs[0].Actor != "former:test" {
		t.Errorf("the job's memory was added by %q, want the former's own name former:test", vs[0].Actor)
	}
}

package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/postgres"
)

// sharedFormer watches formations across engines: how often each episode
// was formed, and the most formations of one namespace at once.
type sharedFormer struct {
	mu      sync.Mutex
	formed  map[string]int
	running map[engram.Namespace]int
	most    int
	by      map[string]int // formations per engine, by the engine's tag in the episode
	both    chan struct{}  // closed once both servers run: until then formations wait
}

func (f *sharedFormer) Needs() engram.FormNeeds { return engram.FormNeeds{} }

func (f *sharedFormer) Form(_ context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	eps := req.Episodes
	ns := eps[0].Namespace
	<-f.both // else the first server may finish every job before the second starts
	f.mu.Lock()
	f.running[ns]++
	f.most = max(f.most, f.running[ns])
	f.mu.Unlock()
	time.Sleep(3 * time.Millisecond) // give the other server's workers a chance to collide
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[ns]--
	ops := make([]engram.MemoryOp, len(eps))
	for i, ep := range eps {
		f.formed[ep.ID]++
		ops[i] = engram.MemoryOp{Op: engram.OpAdd, Memory: engram.Memory{Kind: engram.KindEpisodic, Value: ep.Content, Sources: []string{ep.ID}}}
	}
	return ops, nil
}

// taggedFormer tells which engine formed an episode.
type taggedFormer struct {
	*sharedFormer
	tag string
}

func (f taggedFormer) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	f.mu.Lock()
	f.by[f.tag]++
	f.mu.Unlock()
	return f.sharedFormer.Form(ctx, req)
}

// TestJobsTwoServers runs the job queue of one database with two engines,
// each on its own connection pool as two servers would be: they share the
// jobs (both run some), run none twice and never two of one namespace at
// once, and take over a job whose worker died holding its lease.
func TestJobsTwoServers(t *testing.T) {
	url := emptiedURL(t)
	f := &sharedFormer{formed: map[string]int{}, running: map[engram.Namespace]int{}, by: map[string]int{}, both: make(chan struct{})}
	open := func(tag string, workers int) *engine.Engine {
		db := openAt(t, url, postgres.Options{})
		e, err := engine.New(ctx, db, engine.Options{Former: taggedFormer{f, tag}, Logger: quiet,
			Workers: workers, JobPoll: 5 * time.Millisecond, JobLease: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	// The dead worker's lease, taken before the servers start.
	feeder := open("feeder", 0)
	nsDead := engram.Namespace{Org: "acme", Project: "p", User: "dead"}
	dead, err := feeder.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsDead, Async: ptrTo(true),
		Episodes: []engram.EpisodeInput{{Content: "claimed by a worker that was killed"}}})
	if err != nil {
		t.Fatal(err)
	}
	err = feeder.Store().Update(ctx, func(tx engram.Tx) error {
		j, err := tx.ClaimJob(ctx, "killed-worker", time.Now(), 300*time.Millisecond)
		if err == nil && (j == nil || j.ID != dead.Job.ID) {
			err = fmt.Errorf("claimed %v, want %s", j, dead.Job.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	var jobs []string
	for i := range 40 {
		ns := engram.Namespace{Org: "acme", Project: "p", User: fmt.Sprintf("u%d", i%5)}
		res, err := feeder.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Async: ptrTo(true),
			Episodes: []engram.EpisodeInput{{Content: fmt.Sprintf("turn %d", i)}}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, res.Job.ID)
	}
	open("a", 3)
	open("b", 3)
	close(f.both)

	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := feeder.ListJobs(ctx, engram.ScopeOf(nsDead), engram.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		done := p.Jobs[0].State == engram.JobDone
		for u := range 5 {
			p, err := feeder.ListJobs(ctx, engram.Scope{Org: "acme", Project: "p", User: fmt.Sprintf("u%d", u)},
				engram.JobFilter{States: []engram.JobState{engram.JobQueued, engram.JobRunning, engram.JobFailed}})
			if err != nil {
				t.Fatal(err)
			}
			done = done && len(p.Jobs) == 0
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("jobs not all done after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.formed) != 41 {
		t.Errorf("%d episodes formed, want 41", len(f.formed))
	}
	for id, n := range f.formed {
		if n != 1 {
			t.Errorf("episode %s formed %d times, want once", id, n)
		}
	}
	if f.most != 1 {
		t.Errorf("up to %d jobs of one namespace ran at once, want 1", f.most)
	}
	if f.by["a"] == 0 || f.by["b"] == 0 || f.by["feeder"] != 0 {
		t.Errorf("formations per engine %v: want both servers to share the work, the feeder none", f.by)
	}
	j, err := feeder.GetJob(ctx, engram.ScopeOf(nsDead), dead.Job.ID)
	if err != nil || j.State != engram.JobDone || j.Attempts != 2 {
		t.Errorf("the dead worker's job = %+v, %v; want done on the 2nd attempt", j, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

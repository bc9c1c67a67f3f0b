package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// jobIDOf returns the job id of "engram add --async" output.
func jobIDOf(t *testing.T, out string) string {
	t.Helper()
	for _, l := range lines(out) {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "job" {
			return f[1]
		}
	}
	t.Fatalf("no job line in %q", out)
	return ""
}

// TestJobsCLI: add --async queues a job that jobs list and jobs get show
// in the data directory; a server started over it runs the job, and the
// same commands in --server mode see it done.
func TestJobsCLI(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	local := localCLI(t, dir)
	id := jobIDOf(t, local.ok("add", "--user", "ann", "--async", "Ich ziehe nächsten Monat nach Hamburg."))
	var page engram.JobPage
	local.json(&page, "jobs", "list", "--user", "ann", "--state", "queued")
	if len(page.Jobs) != 1 || page.Jobs[0].ID != id {
		t.Fatalf("jobs list --state queued = %+v, want job %s", page, id)
	}
	if out := local.ok("jobs", "list", "--user", "ann"); !strings.Contains(out, id) || !strings.Contains(out, "queued") {
		t.Errorf("jobs list prints %q, want the queued job", out)
	}
	if out := local.fail(2, "jobs", "list", "--user", "ann", "--state", "sleeping"); !strings.Contains(out, "sleeping") {
		t.Errorf("a bad --state says %q, want it named", out)
	}
	if r := local.run("jobs", "get", id, "--user", "bob"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("another user's jobs get: exit %d, %q; want not found", r.code, r.stderr)
	}
	local.fail(2, "jobs", "pause")

	env := baseEnv(t)
	srv := startServer(t, dir, env)
	remote := &cli{t: t, env: env, extra: []string{"--server", srv.url}}
	var j engram.Job
	for deadline := time.Now().Add(20 * time.Second); j.State != engram.JobDone; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %q after 20s", id, j.State)
		}
		remote.json(&j, "jobs", "get", id, "--user", "ann")
	}
	if out := remote.ok("jobs", "get", id, "--user", "ann"); !strings.Contains(out, "done") || !strings.Contains(out, "attempts    1") {
		t.Errorf("jobs get prints %q, want done after 1 attempt", out)
	}
	var mems engram.MemoryPage
	remote.json(&mems, "list", "--user", "ann", "--kind", "episodic")
	if len(mems.Memories) != 1 || !strings.Contains(mems.Memories[0].Value, "Hamburg") {
		t.Errorf("episodic memories after the job: %+v, want the one turn", mems.Memories)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM, want 0\n%s", code, srv.logs.String())
	}
}

// TestJobsSurviveKill9 kills a server with kill -9 while clients add
// episodes asynchronously and its worker forms them; a server started over
// the same data directory finishes every acknowledged job, and each
// acknowledged episode ends up cited by exactly one memory.
func TestJobsSurviveKill9(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	env := baseEnv(t)
	srv := startServer(t, dir, env, "--workers", "1", "--job-lease", "1s", "--rate-limit", "0")
	c := engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	type ack struct{ user, episode, job string }
	acks := killAfter(t, srv, 120, func(ns engram.Namespace, i int) (ack, error) {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
		res, err := c.AddEpisodes(context.Background(), engram.AddEpisodesRequest{Namespace: ns, Async: ptrTo(true),
			Episodes: []engram.EpisodeInput{{Role: "user", Content: fmt.Sprintf("note %d of %s", i, ns.User), OccurredAt: &at}}})
		if err != nil {
			return ack{}, err
		}
		return ack{ns.User, res.Episodes[0].ID, res.Job.ID}, nil
	})
	wantOpenJobs(t, dir, env, len(acks))

	srv = startServer(t, dir, env, "--workers", "2", "--job-lease", "1s", "--rate-limit", "0")
	c = engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	for _, a := range acks {
		s := engram.Scope{Org: "default", Project: "default", User: a.user}
		waitDone(t, c, s, a.job, 30*time.Second)
		p, err := c.ListMemories(context.Background(), s, engram.MemoryFilter{Sources: []string{a.episode},
			Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Memories) != 1 {
			t.Errorf("episode %s is cited by %d memories, want 1", a.episode, len(p.Memories))
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM\n%s", code, srv.logs.String())
	}
}

// killAfter has four writers, each its own user u0..u3, call add with
// their namespace and a counter until n adds were acknowledged, then kills
// srv with SIGKILL (no shutdown at all) and returns the acknowledgements.
// It fails the test when fewer than n came in a minute, or an add failed
// before the kill.
func killAfter[A any](t *testing.T, srv *server, n int, add func(ns engram.Namespace, i int) (A, error)) []A {
	t.Helper()
	var (
		mu     sync.Mutex
		acks   []A
		failed []error // before the kill
		killed atomic.Bool
		wg     sync.WaitGroup
	)
	for u := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := engram.Namespace{Org: "default", Project: "default", User: fmt.Sprintf("u%d", u)}
			for i := 0; ; i++ {
				a, err := add(ns, i)
				mu.Lock()
				switch {
				case err != nil && killed.Load():
					mu.Unlock()
					return // the server is gone
				case err != nil:
					failed = append(failed, err)
				default:
					acks = append(acks, a)
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acks) }
	for deadline := time.Now().Add(60 * time.Second); count() < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	killed.Store(true)
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	<-srv.done
	if len(acks) < n {
		t.Fatalf("only %d adds acknowledged in 60s; errors: %v", len(acks), failed)
	}
	if len(failed) > 0 {
		t.Errorf("%d adds failed before the kill, the first: %v", len(failed), failed[0])
	}
	return acks
}

// wantOpenJobs fails the test unless the writers of killAfter left jobs
// queued, running or retrying in dir (read with the CLI, no server), so
// that the kill came while work was pending.
func wantOpenJobs(t *testing.T, dir string, env []string, acked int) {
	t.Helper()
	open := 0
	local := localCLI(t, dir)
	local.env = env
	for u := range 4 {
		var p engram.JobPage
		local.json(&p, "jobs", "list", "--user", fmt.Sprintf("u%d", u), "--state", "queued", "--state", "running", "--state", "retrying", "--all")
		open += len(p.Jobs)
	}
	if open == 0 {
		t.Fatal("every job was done before the kill; the test needs some left open")
	}
	t.Logf("%d acknowledged adds, %d jobs open at the kill", acked, open)
}

// waitDone waits up to within for the job id in s to be done, failing the
// test if it fails or takes longer.
func waitDone(t *testing.T, c *engramhttp.Client, s engram.Scope, id string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		j, err := c.GetJob(context.Background(), s, id)
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if j.State == engram.JobDone {
			return
		}
		if j.State == engram.JobFailed || time.Now().After(deadline) {
			t.Fatalf("job %s after the restart: %+v", id, j)
		}
	}
}

// TestEmbedJobsSurviveKill9 kills a server with kill -9 while clients add
// turns that it answers before embedding (its default with workers and an
// embedder) and its worker embeds them; a server started over the same
// data directory finishes every acknowledged embed job, and each
// acknowledged turn is then found by the dense channel alone.
func TestEmbedJobsSurviveKill9(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	env := append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite")
	srv := startServer(t, dir, env, "--workers", "1", "--job-lease", "1s", "--rate-limit", "0")
	c := engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	// English topics: the embedder's language, which the dense channel
	// weighs fully.
	topics := []string{"baked a cherry cake", "fixed the bicycle chain", "violin lesson", "painted the garden fence", "paella for eight friends"}
	type ack struct{ user, memory, job, text string }
	acks := killAfter(t, srv, 40, func(ns engram.Namespace, i int) (ack, error) {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
		text := fmt.Sprintf("Entry %d of %s: %s, day %d.", i, ns.User, topics[(i+len(ns.User))%len(topics)], i*7)
		res, err := c.AddEpisodes(context.Background(), engram.AddEpisodesRequest{Namespace: ns,
			Episodes: []engram.EpisodeInput{{Role: "user", Content: text, OccurredAt: &at}}})
		switch {
		case err != nil:
			return ack{}, err
		case res.EmbedJob == nil || len(res.Memories) == 0:
			return ack{}, fmt.Errorf("add answered without an embed job or a memory: %+v", res)
		}
		return ack{ns.User, res.Memories[0].ID, res.EmbedJob.ID, text}, nil
	})
	wantOpenJobs(t, dir, env, len(acks))

	srv = startServer(t, dir, env, "--workers", "2", "--job-lease", "1s", "--rate-limit", "0")
	c = engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	for _, a := range acks {
		s := engram.Scope{Org: "default", Project: "default", User: a.user}
		waitDone(t, c, s, a.job, 2*time.Minute)
		res, err := c.Search(context.Background(), engram.SearchRequest{Scope: s, Query: a.text, K: 5, Channels: []string{"dense"}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range res.Hits {
			found = found || h.Memory.ID == a.memory
		}
		if !found {
			t.Errorf("the turn %q (memory %s) is not found by the dense channel after its embed job", a.text, a.memory)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM\n%s", code, srv.logs.String())
	}
}

func ptrTo[T any](v T) *T { return &v }

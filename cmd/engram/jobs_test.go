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
	ctx := context.Background()

	type ack struct {
		user, episode, job string
	}
	var (
		mu     sync.Mutex
		acks   []ack
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
				at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
				res, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Async: ptrTo(true),
					Episodes: []engram.EpisodeInput{{Role: "user", Content: fmt.Sprintf("note %d of user %d", i, u), OccurredAt: &at}}})
				if err != nil && killed.Load() {
					return // the server is gone
				} else if err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					continue
				}
				mu.Lock()
				acks = append(acks, ack{ns.User, res.Episodes[0].ID, res.Job.ID})
				mu.Unlock()
			}
		}()
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 120 {
			break
		}
		if time.Now().After(deadline) {
			killed.Store(true)
			_ = srv.cmd.Process.Kill()
			wg.Wait()
			t.Fatalf("only %d adds acknowledged in 60s; errors: %v", n, failed)
		}
	}
	killed.Store(true)
	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	wg.Wait()
	<-srv.done

	open := 0
	local := localCLI(t, dir)
	for u := range 4 {
		var p engram.JobPage
		local.json(&p, "jobs", "list", "--user", fmt.Sprintf("u%d", u), "--state", "queued", "--state", "running", "--all")
		open += len(p.Jobs)
	}
	if open == 0 {
		t.Fatal("every job was done before the kill; the test needs some left queued or running")
	}
	if len(failed) > 0 {
		t.Errorf("%d adds failed before the kill, the first: %v", len(failed), failed[0])
	}
	t.Logf("%d acknowledged adds, %d jobs open at the kill", len(acks), open)

	srv = startServer(t, dir, env, "--workers", "2", "--job-lease", "1s", "--rate-limit", "0")
	c = engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	for _, a := range acks {
		s := engram.Scope{Org: "default", Project: "default", User: a.user}
		var j *engram.Job
		for deadline := time.Now().Add(30 * time.Second); j == nil || j.State != engram.JobDone; time.Sleep(20 * time.Millisecond) {
			var err error
			if j, err = c.GetJob(ctx, s, a.job); err != nil {
				t.Fatalf("job %s: %v", a.job, err)
			}
			if j.State == engram.JobFailed || time.Now().After(deadline) {
				t.Fatalf("job %s after the restart: %+v", a.job, j)
			}
		}
		p, err := c.ListMemories(ctx, s, engram.MemoryFilter{Sources: []string{a.episode},
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

func ptrTo[T any](v T) *T { return &v }

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
	ctx := context.Background()

	type ack struct {
		user, memory, job, text string
	}
	var (
		mu     sync.Mutex
		acks   []ack
		failed []error // before the kill
		killed atomic.Bool
		wg     sync.WaitGroup
	)
	// English topics: the embedder's language, which the dense channel
	// weighs fully.
	topics := []string{"baked a cherry cake", "fixed the bicycle chain", "violin lesson", "painted the garden fence", "paella for eight friends"}
	for u := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := engram.Namespace{Org: "default", Project: "default", User: fmt.Sprintf("u%d", u)}
			for i := 0; ; i++ {
				at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
				text := fmt.Sprintf("Entry %d of writer %d: %s, day %d.", i, u, topics[(i+u)%len(topics)], i*7+u)
				res, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
					Episodes: []engram.EpisodeInput{{Role: "user", Content: text, OccurredAt: &at}}})
				if err != nil && killed.Load() {
					return // the server is gone
				} else if err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
					continue
				}
				if res.EmbedJob == nil || len(res.Memories) == 0 {
					mu.Lock()
					failed = append(failed, fmt.Errorf("add answered without an embed job or a memory: %+v", res))
					mu.Unlock()
					continue
				}
				mu.Lock()
				acks = append(acks, ack{ns.User, res.Memories[0].ID, res.EmbedJob.ID, text})
				mu.Unlock()
			}
		}()
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 40 {
			break
		}
		if time.Now().After(deadline) {
			killed.Store(true)
			_ = srv.cmd.Process.Kill()
			wg.Wait()
			t.Fatalf("only %d adds acknowledged in 60s; errors: %v", n, failed)
		}
	}
	killed.Store(true)
	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	wg.Wait()
	<-srv.done

	open := 0
	local := localCLI(t, dir)
	local.env = env
	for u := range 4 {
		var p engram.JobPage
		local.json(&p, "jobs", "list", "--user", fmt.Sprintf("u%d", u), "--state", "queued", "--state", "running", "--state", "retrying", "--all")
		open += len(p.Jobs)
	}
	if open == 0 {
		t.Fatal("every embed job was done before the kill; the test needs some left open")
	}
	if len(failed) > 0 {
		t.Errorf("%d adds failed before the kill, the first: %v", len(failed), failed[0])
	}
	t.Logf("%d acknowledged adds, %d jobs open at the kill", len(acks), open)

	srv = startServer(t, dir, env, "--workers", "2", "--job-lease", "1s", "--rate-limit", "0")
	c = engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	for _, a := range acks {
		s := engram.Scope{Org: "default", Project: "default", User: a.user}
		var j *engram.Job
		for deadline := time.Now().Add(2 * time.Minute); j == nil || j.State != engram.JobDone; time.Sleep(20 * time.Millisecond) {
			var err error
			if j, err = c.GetJob(ctx, s, a.job); err != nil {
				t.Fatalf("job %s: %v", a.job, err)
			}
			if j.State == engram.JobFailed || time.Now().After(deadline) {
				t.Fatalf("embed job %s after the restart: %+v", a.job, j)
			}
		}
		res, err := c.Search(ctx, engram.SearchRequest{Scope: s, Query: a.text, K: 5, Channels: []string{"dense"}})
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

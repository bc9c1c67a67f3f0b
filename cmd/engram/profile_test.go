package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestProfileCommand: the profile of a scope lists its core memories, the
// profile memory's traits and states, and nothing of another user.
func TestProfileCommand(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	c.ok("add", "--memory", "--user", "ann", "--kind", "core", "Ann is a pilot")
	var empty engram.Profile
	c.json(&empty, "profile", "--user", "bob")
	if empty.Traits == nil || len(empty.Memories) != 0 {
		t.Errorf("bob's profile = %+v, want empty lists", empty)
	}
	c.ok("add", "--memory", "--user", "ann", "--kind", "core", "--meta", "profile=true", "--meta", `traits=["Flies planes"]`, "--meta", `states=["On leave"]`, "profile")
	out := c.ok("profile", "--user", "ann")
	if !strings.Contains(out, "trait: Flies planes") || !strings.Contains(out, "state: On leave") || !strings.Contains(out, ": Ann is a pilot") {
		t.Errorf("profile output %q", out)
	}
	if out := c.ok("profile", "--user", "bob"); strings.TrimSpace(out) != "" {
		t.Errorf("bob's profile shows %q", out)
	}
	// Without traits or states it says why on stderr (exit 0); with them,
	// nothing.
	if r := c.run("profile", "--user", "bob"); r.code != 0 || !strings.Contains(r.stderr, "--llm-url") || !strings.Contains(r.stderr, "no traits or states") {
		t.Errorf("bob's profile: exit %d, stderr %q; want 0 and a sentence naming --llm-url", r.code, r.stderr)
	}
	if r := c.run("profile", "--user", "ann"); r.code != 0 || r.stderr != "" {
		t.Errorf("ann's profile: exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}
}

func TestServeLLMFlags(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_LLM_URL=http://127.0.0.1:1/v1")}
	stderr := c.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	if !strings.Contains(stderr, "--llm-url needs --llm-model") {
		t.Errorf("stderr = %q", stderr)
	}
	stderr = c.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--llm-url", "ftp://x", "--llm-model", "m")
	if !strings.Contains(stderr, "BaseURL") {
		t.Errorf("stderr = %q", stderr)
	}
	for _, bad := range []string{"soon", "0s", "-5s"} {
		stderr = c.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--llm-model", "m", "--llm-timeout", bad)
		if !strings.Contains(stderr, "--llm-timeout (env ENGRAM_LLM_TIMEOUT)") {
			t.Errorf("--llm-timeout %s: stderr = %q", bad, stderr)
		}
	}
	stderr = c.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--jobs-per-tenant", "-1")
	if !strings.Contains(stderr, "--jobs-per-tenant") {
		t.Errorf("--jobs-per-tenant -1: stderr = %q", stderr)
	}
}

// TestServeLLMAsyncByDefault: with an LLM configured, an add without
// "async" answers 202 with a job and the episode is stored, even when the
// model cannot be reached; the job records the failure and is retried.
func TestServeLLMAsyncByDefault(t *testing.T) {
	t.Parallel()
	env := append(baseEnv(t), "ENGRAM_LLM_URL=http://127.0.0.1:1/v1", "ENGRAM_LLM_MODEL=m")
	srv := startServer(t, filepath.Join(t.TempDir(), "data"), env, "--rate-limit", "0")
	c := engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "default", Project: "default", User: "ann"}
	res, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
		Episodes: []engram.EpisodeInput{{Role: "user", Content: "Ich wohne jetzt in Leipzig."}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Job == nil || len(res.Episodes) != 1 {
		t.Fatalf("add with an LLM configured: job %v, %d episodes; want a job and the episode", res.Job, len(res.Episodes))
	}
	if _, err := c.GetEpisode(ctx, engram.ScopeOf(ns), res.Episodes[0].ID); err != nil {
		t.Fatalf("the episode of a job whose model is unreachable: %v", err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		j, err := c.GetJob(ctx, engram.ScopeOf(ns), res.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Attempts >= 1 && j.LastError != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %+v: no failed attempt recorded after 20s", j)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM, want 0\n%s", code, srv.logs.String())
	}
}

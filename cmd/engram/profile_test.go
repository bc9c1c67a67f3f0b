package main_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
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
}

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/openai/openaitest"
)

// TestExportTraining: export --format sft|dpo writes the user's training
// data, the same bytes twice, the current fact only as current, nothing of
// another user; over a server a key bound to one user exports that user
// only; a bad format or a missing --user is a usage error.
func TestExportTraining(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := localCLI(t, dir)
	tenant := []string{"--org", "acme", "--project", "app"}
	add := func(user, at, text string) {
		c.ok(append([]string{"add", "--user", user, "--role", "user", "--occurred-at", at, text}, tenant...)...)
	}
	add("ann", "2026-03-01T09:00:00Z", "I live in Berlin.")
	add("ann", "2026-03-05T09:00:00Z", "I moved to Munich.")
	add("ann", "2026-03-06T09:00:00Z", "Ich arbeite bei Siemens.")
	add("bob", "2026-03-01T09:00:00Z", "I live in Paris.")

	sft := c.ok(append([]string{"export", "--format", "sft", "--user", "ann"}, tenant...)...)
	if again := c.ok(append([]string{"export", "--format", "sft", "--user", "ann"}, tenant...)...); again != sft {
		t.Errorf("two sft exports differ:\n%s\n---\n%s", sft, again)
	}
	for _, want := range []string{`{"role":"user","content":"Where do you live?"},{"role":"assistant","content":"I live in Munich."}`,
		`{"role":"user","content":"Wo arbeitest du?"},{"role":"assistant","content":"Ich arbeite bei Siemens."}`} {
		if !strings.Contains(sft, want) {
			t.Errorf("sft export lacks %s:\n%s", want, sft)
		}
	}
	if strings.Contains(sft, "Berlin") || strings.Contains(sft, "Paris") {
		t.Errorf("sft export holds a replaced fact or bob's:\n%s", sft)
	}

	out := filepath.Join(t.TempDir(), "dpo.jsonl")
	stderr := c.run(append([]string{"export", "--format", "dpo", "--user", "ann", "--out", out}, tenant...)...).stderr
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"prompt":[{"role":"system","content":"You are ann. Answer as yourself, in the first person."},{"role":"user","content":"Where do you live?"}],"chosen":[{"role":"assistant","content":"I live in Munich."}],"rejected":[{"role":"assistant","content":"I live in Berlin."}]}` + "\n"
	if string(b) != want || !strings.Contains(stderr, "exported 1 training records") {
		t.Errorf("dpo file:\n%s\nwant\n%s\nstderr: %s", b, want, stderr)
	}

	if s := c.fail(2, "export", "--format", "csv", "--user", "ann"); !strings.Contains(s, `--format "csv" is not one of records, sft, dpo`) {
		t.Errorf("bad format: %s", s)
	}
	if s := c.fail(2, "export", "--format", "sft"); !strings.Contains(s, "--user") {
		t.Errorf("no user: %s", s)
	}

	annKey := strings.TrimSpace(c.ok("keys", "create", "--org", "acme", "--project", "app", "--user", "ann", "--role", "read"))
	srv := startServer(t, dir, baseEnv(t), "--no-auth=false")
	remote := &cli{t: t, env: baseEnv(t), extra: []string{"--server", srv.url, "--key", annKey}}
	if got := remote.ok(append([]string{"export", "--format", "sft", "--user", "ann"}, tenant...)...); got != sft {
		t.Errorf("sft over the server differs from the local one:\n%s\n---\n%s", got, sft)
	}
	remote.fail(1, append([]string{"export", "--format", "sft", "--user", "bob"}, tenant...)...)
}

// TestExportTrainingLLM: with --llm-url the model writes the sft pairs; a
// malformed reply falls back to the templates and is counted; an
// --llm-url without --llm-model is a usage error.
func TestExportTrainingLLM(t *testing.T) {
	t.Parallel()
	c := localCLI(t, t.TempDir())
	c.ok("add", "--user", "ann", "--role", "user", "--occurred-at", "2026-03-01T09:00:00Z", "I live in Munich.")
	c.ok("add", "--user", "ann", "--role", "user", "--occurred-at", "2026-03-02T09:00:00Z", "Ich arbeite bei Siemens.")
	llm := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "Siemens") {
			return "Sorry, I cannot help with that."
		}
		return `{"pairs":[{"question":"Which city is home?","answer":"Munich is home."}]}`
	}})
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	c.ok("export", "--format", "sft", "--user", "ann", "--out", out, "--llm-url", llm.URL(), "--llm-model", "m")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"role":"user","content":"Which city is home?"},{"role":"assistant","content":"Munich is home."}`) ||
		!strings.Contains(string(b), `{"role":"user","content":"Wo arbeitest du?"},{"role":"assistant","content":"Ich arbeite bei Siemens."}`) {
		t.Errorf("sft with a model:\n%s", b)
	}
	r := c.run("export", "--format", "sft", "--user", "ann", "--out", out, "--llm-url", llm.URL(), "--llm-model", "m")
	if !strings.Contains(r.stderr, "(1 from templates after an unusable model reply)") {
		t.Errorf("stderr does not count the fallback: %s", r.stderr)
	}
	if s := c.fail(2, "export", "--format", "sft", "--user", "ann", "--llm-url", llm.URL()); !strings.Contains(s, "--llm-model") {
		t.Errorf("--llm-url without a model: %s", s)
	}
}

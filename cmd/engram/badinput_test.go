package main_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBadInput runs each bad command line locally and against a server: the
// exit code and the sentence on stderr must be what the case says and the
// same in both modes, and nothing may be stored.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	env := baseEnv(t)
	localDir, serverDir := filepath.Join(tmp, "local"), filepath.Join(tmp, "server")
	srv := startServer(t, serverDir, env)
	modes := []*cli{
		{t: t, env: env, extra: []string{"--data", localDir}},
		{t: t, env: env, extra: []string{"--server", srv.url}},
	}

	badLine := writeFile(t, filepath.Join(tmp, "bad.jsonl"), `{"content":"fine"}`+"\n"+`{"content": nope}`+"\n")
	unknownField := writeFile(t, filepath.Join(tmp, "unknown.jsonl"), `{"content":"fine"}`+"\n"+`{"contnt":"typo"}`+"\n")
	emptyContent := writeFile(t, filepath.Join(tmp, "empty.jsonl"), `{"content":"fine"}`+"\n"+`{"role":"user"}`+"\n")
	outside := writeFile(t, filepath.Join(tmp, "outside.jsonl"),
		`{"type":"episode","episode":{"id":"`+engram.NewID()+`","namespace":{"org":"default","project":"default","user":"u"},"content":"in scope","occurred_at":"2024-01-01T00:00:00Z","received_at":"2024-01-01T00:00:00Z"}}`+"\n"+
			`{"type":"episode","episode":{"id":"`+engram.NewID()+`","namespace":{"org":"default","project":"default","user":"other"},"content":"outside","occurred_at":"2024-01-01T00:00:00Z","received_at":"2024-01-01T00:00:00Z"}}`+"\n")
	mismatched := writeFile(t, filepath.Join(tmp, "mismatched.jsonl"), `{"type":"memory","episode":{"content":"x"}}`+"\n")
	id := engram.NewID()

	tests := []struct {
		name string
		args []string
		code int
		want string // the stderr's first line must contain this
	}{
		// Refused by the service: exit 1, the service's sentence.
		{"confidence out of range", []string{"add", "--memory", "--user", "u", "--confidence", "2", "a value"}, 1, "confidence 2 is outside 0..1"},
		{"unknown kind", []string{"add", "--memory", "--user", "u", "--kind", "bogus", "a value"}, 1, `kind "bogus" is not one of`},
		{"empty org", []string{"add", "--user", "u", "--org", "", "text"}, 1, "org is required"},
		{"slash in user", []string{"add", "--user", "a/b", "text"}, 1, "may not contain '/'"},
		{"one empty episode in a batch", []string{"add", "--user", "u", "good text", ""}, 1, "content is required"},
		{"empty episode in a file", []string{"add", "--user", "u", "--file", emptyContent}, 1, "content is required"},
		{"malformed id", []string{"get", "--user", "u", "not-an-id"}, 1, "not-an-id"},
		{"limit too high", []string{"list", "--user", "u", "--limit", "5000"}, 1, "limit 5000 is above the maximum of 1000"},
		{"update of a missing memory", []string{"update", "--user", "u", id, "--value", "v"}, 1, "not found"},
		{"import outside the scope", []string{"import", "--user", "u", outside}, 1, "outside the import scope"},

		// Refused by the CLI before any request: the line of the file.
		{"malformed JSONL line", []string{"add", "--user", "u", "--file", badLine}, 1, "bad.jsonl line 2: invalid character"},
		{"unknown field in JSONL", []string{"add", "--user", "u", "--file", unknownField}, 1, `unknown.jsonl line 2: json: unknown field "contnt"`},
		{"record type mismatch", []string{"import", "--user", "u", mismatched}, 1, `record 1: record: type "memory" does not match its payload`},
		{"missing file", []string{"import", "--user", "u", filepath.Join(tmp, "nope.jsonl")}, 1, "no such file"},

		// Usage errors: exit 2.
		{"nothing to add", []string{"add", "--user", "u"}, 2, "nothing to add"},
		{"unknown flag", []string{"add", "--bogus", "x"}, 2, "flag provided but not defined: -bogus"},
		{"bad time", []string{"add", "--user", "u", "--occurred-at", "yesterday", "x"}, 2, `invalid value "yesterday" for flag -occurred-at`},
		{"memory flag on episodes", []string{"add", "--user", "u", "--kind", "semantic", "x"}, 2, "--kind applies to --memory"},
		{"episode flag on memories", []string{"add", "--memory", "--user", "u", "--role", "user", "x"}, 2, "--role applies to episodes, not --memory"},
		{"bad meta", []string{"add", "--user", "u", "--meta", "novalue", "x"}, 2, `"novalue" is not key=value`},
		{"rollback without version", []string{"rollback", "--user", "u", id}, 2, "rollback needs --version N"},
		{"get without id", []string{"get", "--user", "u"}, 2, "get needs an ID"},
		{"update without fields", []string{"update", "--user", "u", id}, 2, "nothing to update"},
		{"scope purge unconfirmed", []string{"delete", "--scope", "--user", "u"}, 2, "add --yes to confirm"},
		{"stray argument", []string{"list", "--user", "u", "extra"}, 2, `list takes no arguments, got "extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var first string
			for i, c := range modes {
				c := *c
				c.t = t
				stderr := c.fail(tc.code, tc.args...)
				line := strings.SplitN(stderr, "\n", 2)[0]
				if !strings.HasPrefix(line, "engram: ") || !strings.Contains(line, tc.want) {
					t.Errorf("mode %d: stderr %q, want \"engram: ...%s...\"", i, stderr, tc.want)
				}
				if i == 0 {
					first = stderr
				} else if stderr != first {
					t.Errorf("stderr differs between modes:\nlocal:  %q\nserver: %q", first, stderr)
				}
			}
		})
	}

	// Both flags at once is a usage error, whichever the mode.
	c := &cli{t: t, env: env}
	c.fail(2, "list", "--data", localDir, "--server", srv.url)

	// Nothing of any case was stored, in either mode.
	for i, c := range modes {
		for _, user := range []string{"u", "other", ""} {
			var mp engram.MemoryPage
			c.json(&mp, "list", "--user", user, "--status", "active", "--status", "deleted")
			var ep engram.EpisodePage
			c.json(&ep, "list", "--episodes", "--user", user)
			if len(mp.Memories) != 0 || len(ep.Episodes) != 0 {
				t.Errorf("mode %d user %q: %d memories and %d episodes stored by failed commands", i, user, len(mp.Memories), len(ep.Episodes))
			}
		}
	}
}

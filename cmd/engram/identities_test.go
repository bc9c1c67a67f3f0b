package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// observationsFile writes JSON lines of observations: three faces near
// one axis, tied to episode ep, and two near another.
func observationsFile(t *testing.T, ep string) string {
	t.Helper()
	var b strings.Builder
	for k, axis := range []int{0, 0, 0, 4, 4} {
		v := make([]float32, 8)
		v[axis], v[(axis+1+k)%8] = 1, 0.1
		o := engram.ObservationInput{Modality: "face", Embedding: v}
		if axis == 0 {
			o.EpisodeID = ep
		}
		line, _ := json.Marshal(o)
		b.Write(append(line, '\n'))
	}
	p := filepath.Join(t.TempDir(), "faces.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIdentitiesCLI: observe faces from a JSON lines file locally, link
// one identity to a name, find the observed episode by an alias with
// search, then over a server merge, print the history, and refuse a
// face of another width naming the field; another user sees nothing.
func TestIdentitiesCLI(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	local := localCLI(t, dir)
	var added engram.AddEpisodesResult
	local.json(&added, "add", "--user", "ann", "--role", "user", "Der Drachen ist im Baum hängen geblieben.")
	ep := added.Episodes[0].ID
	out := local.ok("identities", "observe", "--user", "ann", observationsFile(t, ep))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("observe printed %q", out)
	}
	a, b := strings.Fields(lines[0])[3], strings.Fields(lines[3])[3]
	if a == b || strings.Fields(lines[2])[3] != a {
		t.Fatalf("observe put the faces in %q", out)
	}
	var p engram.Person
	local.json(&p, "identities", "link", "--user", "ann", "--name", "Lukas", a)
	local.ok("identities", "link", "--user", "ann", "--person", p.ID, "--name", "Luki")
	if out := local.ok("search", "--user", "ann", "Was hat Luki gemacht?"); !strings.Contains(out, "Drachen") {
		t.Errorf("search by the alias prints %q, want the observed episode's memory", out)
	}

	env := baseEnv(t)
	srv := startServer(t, dir, env)
	remote := &cli{t: t, env: env, extra: []string{"--server", srv.url}}
	if out := remote.ok("identities", "list", "--user", "ann", "--modality", "face"); !strings.Contains(out, a) || !strings.Contains(out, b) {
		t.Errorf("identities list prints %q", out)
	}
	var merged engram.Identity
	remote.json(&merged, "identities", "merge", "--user", "ann", a, b)
	if merged.Count != 5 {
		t.Errorf("merge = %+v", merged)
	}
	if out := remote.ok("identities", "history", "--user", "ann", a); !strings.Contains(out, "merge") || !strings.Contains(out, "link") {
		t.Errorf("history prints %q", out)
	}
	if out := remote.ok("identities", "persons", "--user", "ann"); !strings.Contains(out, "Lukas") || !strings.Contains(out, "Luki") {
		t.Errorf("persons prints %q", out)
	}
	if out := remote.ok("identities", "list", "--user", "bob"); strings.TrimSpace(out) != "" {
		t.Errorf("bob lists %q", out)
	}
	remote.stdin = `{"modality":"face","embedding":[1,2]}` + "\n"
	if stderr := remote.fail(1, "identities", "observe", "--user", "ann", "-"); !strings.Contains(stderr, "observations[0].embedding") {
		t.Errorf("a face of another width: %q", stderr)
	}
	remote.stdin = ""
	local.fail(2, "identities", "rename")
}

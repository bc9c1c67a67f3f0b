package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

func TestEnvironment(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "data")
	env := append(baseEnv(t),
		"ENGRAM_DATA="+dir, "ENGRAM_ORG=acme", "ENGRAM_PROJECT=bot", "ENGRAM_USER=ann",
		"ENGRAM_AGENT=helper", "ENGRAM_SESSION=s1", "ENGRAM_ACTOR=robot")
	c := &cli{t: t, env: env}

	// Every namespace part comes from the environment.
	var res engram.AddEpisodesResult
	c.json(&res, "add", "hello")
	want := engram.Namespace{Org: "acme", Project: "bot", User: "ann", Agent: "helper", Session: "s1"}
	if got := res.Episodes[0].Namespace; got != want {
		t.Errorf("namespace from env = %+v, want %+v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir)); err != nil {
		t.Errorf("ENGRAM_DATA directory not created: %v", err)
	}
	// Formed memories are the former's ("former:rules"); one added
	// directly is the caller's.
	var direct struct{ Memories []engram.Memory }
	c.json(&direct, "add", "--memory", "a note")
	var hist []engram.Version
	c.json(&hist, "history", direct.Memories[0].ID)
	if got := hist[0].Actor; got != "robot" {
		t.Errorf("actor from ENGRAM_ACTOR = %q, want robot", got)
	}

	// Flags beat the environment.
	c.json(&res, "add", "--user", "bob", "--session", "s2", "--actor", "flagged", "hi")
	want.User, want.Session = "bob", "s2"
	if got := res.Episodes[0].Namespace; got != want {
		t.Errorf("namespace with flags = %+v, want %+v", got, want)
	}
	c.json(&direct, "add", "--memory", "--user", "bob", "--session", "s2", "--actor", "flagged", "another note")
	c.json(&hist, "history", "--user", "bob", "--session", "s2", direct.Memories[0].ID)
	if got := hist[0].Actor; got != "flagged" {
		t.Errorf("actor with --actor = %q, want flagged", got)
	}
	// ...and --data beats ENGRAM_DATA.
	other := filepath.Join(tmp, "other")
	c.ok("add", "--data", other, "elsewhere")
	var eps engram.EpisodePage
	c.json(&eps, "list", "--episodes", "--data", other)
	if len(eps.Episodes) != 1 || eps.Episodes[0].Content != "elsewhere" {
		t.Errorf("--data over ENGRAM_DATA: episodes %+v", eps.Episodes)
	}
	c.json(&eps, "list", "--episodes")
	if len(eps.Episodes) != 1 || eps.Episodes[0].Content != "hello" {
		t.Errorf("ENGRAM_DATA after --data write: episodes %+v", eps.Episodes)
	}

	// --data beats ENGRAM_SERVER, and ENGRAM_SERVER beats ENGRAM_DATA.
	unreachable := "http://127.0.0.1:1"
	withServer := &cli{t: t, env: append(append([]string{}, env...), "ENGRAM_SERVER="+unreachable)}
	withServer.json(&eps, "list", "--episodes", "--data", dir)
	if len(eps.Episodes) != 1 {
		t.Errorf("--data with ENGRAM_SERVER set: %d episodes, want 1", len(eps.Episodes))
	}
	withServer.fail(1, "list", "--episodes")
	withServer.json(&eps, "list", "--episodes", "--server", "", "--data", dir)

	// An unknown data directory is an error for reads, not created.
	missing := filepath.Join(tmp, "missing")
	stderr := c.fail(1, "list", "--data", missing)
	if !strings.Contains(stderr, "does not exist") {
		t.Errorf("list of a missing directory: %q", stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("list created the missing data directory")
	}
}

func TestDefaultDataDir(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	base := baseEnv(t)
	c := &cli{t: t, env: append(base, "HOME="+home)}
	c.ok("add", "--no-form", "x")
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "engram")); err != nil {
		t.Errorf("default data directory under HOME: %v", err)
	}

	xdg := t.TempDir()
	c = &cli{t: t, env: append(base, "HOME="+home, "XDG_DATA_HOME="+xdg)}
	c.ok("add", "--no-form", "x")
	if _, err := os.Stat(filepath.Join(xdg, "engram")); err != nil {
		t.Errorf("default data directory under XDG_DATA_HOME: %v", err)
	}
}

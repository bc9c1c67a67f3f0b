package main_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestFulltext turns a data directory's full-text index off and on again:
// the state printed follows, search keeps finding memories written while
// it was off, and a bad argument is refused by name. With PostgreSQL at
// hand the same is done to a PostgreSQL store.
func TestFulltext(t *testing.T) {
	c := localCLI(t, t.TempDir())
	if usage := (&cli{t: t, env: baseEnv(t)}).ok("help", "fulltext"); !strings.HasPrefix(usage, "Usage: engram fulltext") {
		t.Errorf("help fulltext:\n%s", usage)
	}
	c.ok("add", "--memory", "--user", "ann", "Ann plays the cello on Sundays")
	if out := c.ok("fulltext"); out != "on\n" {
		t.Errorf("fulltext on a new directory printed %q, want on", out)
	}
	if out := c.ok("fulltext", "off"); out != "off\n" {
		t.Errorf("fulltext off printed %q", out)
	}
	if out := c.ok("fulltext"); out != "off\n" {
		t.Errorf("fulltext after off printed %q", out)
	}
	c.ok("add", "--memory", "--user", "ann", "Ann bought a new cello bow")
	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "cello")
	if len(sr.Hits) != 2 {
		t.Errorf("search with the index off found %d memories, want 2", len(sr.Hits))
	}
	if out := c.ok("fulltext", "on"); out != "on\n" {
		t.Errorf("fulltext on printed %q", out)
	}
	for _, args := range [][]string{{"fulltext", "maybe"}, {"fulltext", "on", "off"}} {
		if stderr := c.fail(2, args...); !strings.Contains(stderr, "on or off") {
			t.Errorf("engram %s: stderr %q does not say the argument is on or off", strings.Join(args, " "), stderr)
		}
	}

	store := pgSchemaURL(t)
	pg := &cli{t: t, env: append(baseEnv(t), "ENGRAM_STORE="+store)}
	if out := pg.ok("fulltext", "off"); out != "off\n" {
		t.Errorf("fulltext --store off printed %q", out)
	}
	if out := pg.ok("fulltext", "on"); out != "on\n" {
		t.Errorf("fulltext --store on printed %q", out)
	}
}

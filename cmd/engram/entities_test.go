package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestEntitiesCLI: memories added with the CLI name entities that
// entities list and get show, for their user only; bad flags exit 2.
func TestEntitiesCLI(t *testing.T) {
	t.Parallel()
	local, id := jurgen(t)
	if out := local.ok("entities", "list", "--user", "ann", "--type", "place"); !strings.Contains(out, "Lissabon") || strings.Contains(out, "Jürgen") {
		t.Errorf("entities list --type place prints %q", out)
	}
	if out := local.ok("entities", "get", id, "--user", "ann"); !strings.Contains(out, "Juergen") || !strings.Contains(out, "co_occurs") {
		t.Errorf("entities get prints %q, want the alias and the relation", out)
	}
	if r := local.run("entities", "get", id, "--user", "bob"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("another user's entities get: exit %d, %q", r.code, r.stderr)
	}
	if out := local.fail(2, "entities", "list", "--user", "ann", "--limit", "5000"); !strings.Contains(out, "limit") {
		t.Errorf("a bad --limit says %q", out)
	}
	local.fail(2, "entities", "merge")
}

// TestEntitiesEditCLI: entities split, merge and history, with a
// usage error (exit 2) for missing flags.
func TestEntitiesEditCLI(t *testing.T) {
	t.Parallel()
	local, id := jurgen(t)
	var d engram.EntityDetail
	local.json(&d, "entities", "get", id, "--user", "ann")
	if len(d.Timeline) != 2 {
		t.Fatalf("Jürgen's timeline: %+v", d.Timeline)
	}
	local.fail(2, "entities", "split", id, "--user", "ann", "--name", "Jürgen B")
	local.fail(2, "entities", "merge", id, "--user", "ann")
	var split engram.Entity
	local.json(&split, "entities", "split", id, "--user", "ann", "--name", "Jürgen B", "--memory", d.Timeline[1].MemoryID)
	if split.Mentions != 1 || split.Name != "Jürgen B" {
		t.Fatalf("split = %+v", split)
	}
	if out := local.ok("entities", "merge", id, "--user", "ann", "--from", split.ID); !strings.Contains(out, "Jürgen B") {
		t.Errorf("merge prints %q, want the merged name among the aliases", out)
	}
	out := local.ok("entities", "history", split.ID, "--user", "ann")
	if !strings.Contains(out, "split") || !strings.Contains(out, "merged") || !strings.Contains(out, id) {
		t.Errorf("history of the merged entity prints %q", out)
	}
	if r := local.run("entities", "history", id, "--user", "bob"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("another user's entities history: exit %d, %q", r.code, r.stderr)
	}
}

// jurgen adds two of ann's turns naming Jürgen (once as Juergen) to a new
// data directory and returns its CLI and Jürgen's entity id, found by
// entities list --prefix JUR, which must find him named twice.
func jurgen(t *testing.T) (*cli, string) {
	t.Helper()
	local := localCLI(t, filepath.Join(t.TempDir(), "data"))
	local.ok("add", "--user", "ann", "Ich war mit Jürgen in Lissabon.")
	local.ok("add", "--user", "ann", "Juergen hat gestern angerufen.")
	var page engram.EntityPage
	local.json(&page, "entities", "list", "--user", "ann", "--prefix", "JUR")
	if len(page.Entities) != 1 || page.Entities[0].Mentions != 2 {
		t.Fatalf("entities list --prefix JUR = %+v, want Jürgen named twice", page)
	}
	return local, page.Entities[0].ID
}

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
	dir := filepath.Join(t.TempDir(), "data")
	local := localCLI(t, dir)
	local.ok("add", "--user", "ann", "Ich war mit Jürgen in Lissabon.")
	local.ok("add", "--user", "ann", "Juergen hat gestern angerufen.")
	var page engram.EntityPage
	local.json(&page, "entities", "list", "--user", "ann", "--prefix", "JUR")
	if len(page.Entities) != 1 || page.Entities[0].Mentions != 2 {
		t.Fatalf("entities list --prefix JUR = %+v, want Jürgen named twice", page)
	}
	id := page.Entities[0].ID
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

package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestCommunitiesCLI: memories added with the CLI make a community that
// communities refresh writes and list and get show, for their user only;
// bad arguments exit 2.
func TestCommunitiesCLI(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	local := localCLI(t, dir)
	local.ok("add", "--user", "ann", "Ich war mit Jürgen und Carmen in Lissabon.")
	local.ok("add", "--user", "ann", "Carmen y Jürgen cocinaron juntos.")
	var res engram.RefreshResult
	local.json(&res, "communities", "refresh", "--user", "ann")
	if res.Written != 1 || res.Total != 1 {
		t.Fatalf("communities refresh = %+v, want one community written", res)
	}
	if out := local.ok("communities", "refresh", "--user", "ann"); !strings.Contains(out, "1 communities: 0 written") {
		t.Errorf("a second refresh prints %q, want nothing written", out)
	}
	var l engram.CommunityList
	local.json(&l, "communities", "list", "--user", "ann")
	if len(l.Communities) != 1 || !strings.Contains(l.Communities[0].Summary, "Carmen") {
		t.Fatalf("communities list = %+v", l)
	}
	id := l.Communities[0].ID
	if out := local.ok("communities", "get", id, "--user", "ann"); !strings.Contains(out, "Lissabon") || !strings.Contains(out, "Jürgen") {
		t.Errorf("communities get prints %q, want the summary and the members", out)
	}
	if r := local.run("communities", "get", id, "--user", "bob"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("another user's communities get: exit %d, %q", r.code, r.stderr)
	}
	local.fail(2, "communities", "list", "extra")
	local.fail(2, "communities", "merge")
}

package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestConflictsCommand: a conflict formed from two dated statements is
// listed by "engram conflicts list" and resolved by "engram conflicts
// resolve"; a resolve without --keep is a usage error.
func TestConflictsCommand(t *testing.T) {
	t.Parallel()
	c := localCLI(t, filepath.Join(t.TempDir(), "data"))
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2025-06-01T10:00:00Z", "I work at Siemens now.")
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2025-01-01T10:00:00Z", "I work at Bosch.")
	var cs []engram.Conflict
	c.json(&cs, "conflicts", "list", "--user", "ann")
	if len(cs) != 1 || len(cs[0].Memories) != 2 {
		t.Fatalf("conflicts = %+v, want one of two memories", cs)
	}
	if out := c.ok("conflicts", "list", "--user", "ann"); !strings.Contains(out, "conflict "+cs[0].ID) || !strings.Contains(out, "Siemens") {
		t.Errorf("conflicts list printed %q", out)
	}
	var keep string
	for _, m := range cs[0].Memories {
		if strings.Contains(m.Value, "Siemens") {
			keep = m.ID
		}
	}
	if stderr := c.fail(2, "conflicts", "resolve", "--user", "ann", cs[0].ID); !strings.Contains(stderr, "--keep") {
		t.Errorf("resolve without --keep: %q", stderr)
	}
	var res engram.ConflictResolution
	c.json(&res, "conflicts", "resolve", "--user", "ann", "--keep", keep, "--reason", "Siemens is current", cs[0].ID)
	if res.Kept.ID != keep || res.Other.Status != engram.StatusSuperseded {
		t.Errorf("resolution = kept %s, other %s", res.Kept.ID, res.Other.Status)
	}
	c.json(&cs, "conflicts", "list", "--user", "ann")
	if len(cs) != 0 {
		t.Errorf("conflicts after resolving = %+v", cs)
	}
}

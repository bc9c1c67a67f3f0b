package engram_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// A subgraph may ask for up to MaxGraphLimit edges, and relation reads
// accept as many; one more is EINVALID naming the limit.
func TestGraphLimit(t *testing.T) {
	for _, c := range []struct {
		limit int
		ok    bool
	}{{0, true}, {1, true}, {engram.MaxGraphLimit, true}, {engram.MaxGraphLimit + 1, false}, {-1, false}} {
		r := engram.GraphRequest{Limit: c.limit}
		if err := r.Validate(); (err == nil) != c.ok || (err != nil && engram.ErrorCode(err) != engram.EINVALID) {
			t.Errorf("GraphRequest{Limit: %d}.Validate() = %v, want ok %v", c.limit, err, c.ok)
		}
		n, err := engram.RelationLimit(c.limit)
		if (err == nil) != c.ok {
			t.Errorf("RelationLimit(%d) = %d, %v; want ok %v", c.limit, n, err, c.ok)
		}
	}
	if n, _ := engram.RelationLimit(0); n != engram.DefaultEntityLimit {
		t.Errorf("RelationLimit(0) = %d, want the default %d", n, engram.DefaultEntityLimit)
	}
}

// A split's name that is not UTF-8, or holds a NUL character, is refused
// saying so, not as a name without letters: a name of bytes that are not
// UTF-8 has no letters either, and "name is required" misleads.
func TestSplitRequestNameText(t *testing.T) {
	mem := []string{engram.NewID()}
	for name, want := range map[string]string{
		"\xff\xfe":     "name is not valid UTF-8",
		"\x00":         "name contains a NUL character",
		"J\xfcrgen":    "name is not valid UTF-8",
		"  ":           "name is required",
		"Jürgen B\x00": "name contains a NUL character",
	} {
		r := engram.SplitRequest{Name: name, Memories: mem}
		if err := r.Validate(); engram.ErrorCode(err) != engram.EINVALID || !strings.HasPrefix(engram.ErrorMessage(err), want) {
			t.Errorf("split name %q: %v, want EINVALID %q", name, err, want)
		}
	}
}

// TestRelationKeepEvidence: only the listed memories' evidence is kept,
// the weight becomes its sum, and a relation left with none says so.
func TestRelationKeepEvidence(t *testing.T) {
	r := engram.Relation{Weight: 3.5, Evidence: []engram.Evidence{{MemoryID: "a", Weight: 1}, {MemoryID: "b", Weight: 2}, {MemoryID: "c", Weight: 0.5}}}
	if !r.KeepEvidence(map[string]bool{"a": true, "c": true}) {
		t.Fatal("evidence a and c kept: reported none left")
	}
	if len(r.Evidence) != 2 || r.Evidence[0].MemoryID != "a" || r.Evidence[1].MemoryID != "c" || r.Weight != 1.5 {
		t.Errorf("kept %+v, weight %v; want a and c, 1.5", r.Evidence, r.Weight)
	}
	if r.KeepEvidence(map[string]bool{"b": true}) || len(r.Evidence) != 0 || r.Weight != 0 {
		t.Errorf("none of the reads: %+v, weight %v", r.Evidence, r.Weight)
	}
}

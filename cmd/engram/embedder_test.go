package main_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestEmbedderUSELite runs the embedded model end to end through the
// binary: memories get vectors, search fuses BM25 with the dense channel,
// and a data directory made without an embedder must be re-embedded before
// it is used with one.
func TestEmbedderUSELite(t *testing.T) {
	c := localCLI(t, t.TempDir())
	c.env = append(c.env, "ENGRAM_EMBEDDER=use-lite")
	var mems engram.MemoryPage
	c.json(&mems, "add", "--memory", "--user", "ann", "Ann adopted a beagle puppy called Biscuit")
	c.ok("add", "--memory", "--user", "ann", "The quarterly report is due on Monday")
	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "--explain", "what kind of dog does she have")
	if len(sr.Hits) == 0 || sr.Hits[0].Memory.ID != mems.Memories[0].ID {
		t.Fatalf("search hits = %+v, want the beagle memory first", sr.Hits)
	}
	dense := false
	for _, ch := range sr.Hits[0].Explain {
		dense = dense || ch.Channel == "dense"
	}
	if !dense {
		t.Errorf("top hit not found by the dense channel: %+v", sr.Hits[0].Explain)
	}

	// A directory filled without an embedder is refused with one, until
	// reembed embeds it.
	plain := localCLI(t, t.TempDir())
	plain.ok("add", "--memory", "--user", "ann", "Ann plays the cello")
	plain.env = append(plain.env, "ENGRAM_EMBEDDER=use-lite")
	r := plain.run("search", "--user", "ann", "music instrument")
	if r.code != 1 || !strings.Contains(r.stderr, "engram reembed") {
		t.Fatalf("search with a new embedder: exit %d, stderr %q", r.code, r.stderr)
	}
	out := plain.ok("reembed")
	if !strings.Contains(out, "re-embedded 1 active memories with use-lite") {
		t.Errorf("reembed said %q", out)
	}
	plain.json(&sr, "search", "--user", "ann", "--explain", "cello")
	if len(sr.Hits) != 1 {
		t.Errorf("search after reembed = %+v", sr.Hits)
	}
}

// TestEncoderChoice runs use-lite with each encoder (the flag and
// ENGRAM_ENCODER) and refuses an unknown one with a usage error naming
// the flag.
func TestEncoderChoice(t *testing.T) {
	for _, enc := range []string{"fp32", "int8"} {
		c := localCLI(t, t.TempDir())
		c.env = append(c.env, "ENGRAM_EMBEDDER=use-lite", "ENGRAM_ENCODER="+enc)
		c.ok("add", "--memory", "--user", "ann", "Ann adopted a beagle puppy called Biscuit")
		var sr engram.SearchResult
		c.json(&sr, "search", "--user", "ann", "what kind of dog does she have")
		if len(sr.Hits) != 1 {
			t.Errorf("encoder %s: search hits = %+v, want the beagle memory", enc, sr.Hits)
		}
	}
	c := localCLI(t, t.TempDir())
	c.env = append(c.env, "ENGRAM_EMBEDDER=use-lite")
	r := c.run("add", "--memory", "--user", "ann", "--encoder", "int4", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, "--encoder") || !strings.Contains(r.stderr, "int4") {
		t.Errorf("--encoder int4: exit %d, stderr %q; want 2 and a message naming the flag", r.code, r.stderr)
	}
}

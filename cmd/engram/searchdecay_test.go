package main_test

import (
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// TestSearchDecay: --decay=false ranks without the signals that change
// with time; by default they are there.
func TestSearchDecay(t *testing.T) {
	c := localCLI(t, t.TempDir())
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2024-05-06T18:00:00Z", "We hiked the ridge trail with the dogs.")
	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "--explain", "--now", "2024-05-15T09:00:00Z", "ridge trail")
	if len(sr.Hits) != 1 || sr.Hits[0].Factors[retrieval.FactorRecency] == 0 {
		t.Fatalf("default search = %+v, want a recency factor", sr.Hits)
	}
	c.json(&sr, "search", "--user", "ann", "--explain", "--decay=false", "--now", "2024-05-15T09:00:00Z", "ridge trail")
	if len(sr.Hits) != 1 || sr.Hits[0].Factors[retrieval.FactorRecency] != 0 {
		t.Fatalf("search --decay=false = %+v, want no recency factor", sr.Hits)
	}
}

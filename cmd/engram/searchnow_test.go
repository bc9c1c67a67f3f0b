package main_test

import (
	"testing"

	"github.com/engramhq/engram"
)

// TestSearchNow: --now is the time the question is asked at, so "last
// week" means the week before it; a malformed time is a usage error.
func TestSearchNow(t *testing.T) {
	c := localCLI(t, t.TempDir())
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2024-05-06T18:00:00Z", "We hiked the ridge trail with the dogs.")
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2024-03-02T18:00:00Z", "I repainted the kitchen.")

	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "--now", "2024-05-15T09:00:00Z", "What did I do last week?")
	if len(sr.Hits) == 0 || sr.Hits[0].Memory.Value != "We hiked the ridge trail with the dogs." {
		t.Fatalf("last week, asked on 15 May 2024 = %+v, want the hike first", sr.Hits)
	}
	c.json(&sr, "search", "--user", "ann", "--now", "2024-03-08", "What did I do last week?")
	if len(sr.Hits) == 0 || sr.Hits[0].Memory.Value != "I repainted the kitchen." {
		t.Fatalf("last week, asked on 8 March 2024 = %+v, want the kitchen first", sr.Hits)
	}
	c.fail(2, "search", "--user", "ann", "--now", "yesterday", "What did I do?")
}

package main_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestSearchAgentic: --mode agentic returns the trace of its steps, which
// --explain prints before the hits; a bad mode or budget is a usage
// error.
func TestSearchAgentic(t *testing.T) {
	c := localCLI(t, t.TempDir())
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2024-05-06T18:00:00Z", "We hiked the ridge trail near Sintra with the dogs.")
	c.ok("add", "--user", "ann", "--speaker", "Ann", "--occurred-at", "2024-03-02T18:00:00Z", "I repainted the kitchen in a pale green.")

	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "--mode", "agentic", "--steps", "2", "Where did we hike?")
	if len(sr.Trace) < 2 || sr.Trace[0].Action != engram.ActionSearch || sr.Trace[len(sr.Trace)-1].Action != engram.ActionStop {
		t.Fatalf("trace %+v, want the first search and a stop", sr.Trace)
	}
	if len(sr.Hits) == 0 || !strings.Contains(sr.Hits[0].Memory.Value, "hiked") {
		t.Fatalf("hits %+v, want the hike first", sr.Hits)
	}
	out := c.ok("search", "--user", "ann", "--mode", "agentic", "--explain", "Where did we hike?")
	if !strings.Contains(out, "step 1  search") || !strings.Contains(out, `query "Where did we hike?"`) || !strings.Contains(out, "stop") {
		t.Errorf("--explain printed no trace:\n%s", out)
	}
	if out := c.ok("search", "--user", "ann", "--explain", "Where did we hike?"); strings.Contains(out, "step 1") {
		t.Errorf("a one-shot search printed a trace:\n%s", out)
	}
	c.fail(2, "search", "--user", "ann", "--mode", "deep", "Where?")
	c.fail(2, "search", "--user", "ann", "--mode", "agentic", "--steps", "99", "Where?")
	c.fail(2, "search", "--user", "ann", "--steps", "2", "Where?")
}

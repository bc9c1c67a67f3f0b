package retrieval_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// mem is a candidate of the given kind citing sources.
func mem(id string, kind engram.Kind, sources ...string) *retrieval.Candidate {
	c := cand(id, nil)
	c.Memory.Kind, c.Memory.Sources = kind, sources
	return c
}

// placesOf writes places as "id[collapsed ids]" joined by commas.
func placesOf(ps []retrieval.Place) string {
	var out []string
	for _, p := range ps {
		s := p.Memory.ID
		if len(p.Collapsed) > 0 {
			s += "[" + strings.Join(p.Collapsed, " ") + "]"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// TestCollapse checks what "the same source turn" means: hits that cite
// a common episode share a turn, and each kept place owns its turns. A
// window over turns A and B kept first takes in both turn memories and a
// window over B and C; kept after A's turn memory it collapses into that,
// while B's turn memory keeps its own place; a fact formed from a turn
// collapses into the turn's memory or takes it in; memories without
// sources, and core memories, never collapse; two segments of one
// recording are two turns.
func TestCollapse(t *testing.T) {
	ep, sem := engram.KindEpisodic, engram.KindSemantic
	seg := func(id string, n int) *retrieval.Candidate {
		c := mem(id, ep, "rec")
		c.Memory.Metadata = map[string]any{engram.MetaMedia: map[string]any{"episode": "rec", "index": 0, "part": "segment", "segment": n}}
		return c
	}
	tests := []struct {
		name string
		cs   []*retrieval.Candidate
		want string
	}{
		{"window first", []*retrieval.Candidate{mem("wAB", ep, "A", "B"), mem("tA", ep, "A"), mem("x", ep, "X"), mem("tB", ep, "B"), mem("wBC", ep, "B", "C")},
			"wAB[tA tB wBC],x"},
		{"turn first", []*retrieval.Candidate{mem("tA", ep, "A"), mem("wAB", ep, "A", "B"), mem("tB", ep, "B")},
			"tA[wAB],tB"},
		{"into the best ranked owner", []*retrieval.Candidate{mem("tA", ep, "A"), mem("tB", ep, "B"), mem("wAB", ep, "A", "B")},
			"tA[wAB],tB"},
		{"fact and turn", []*retrieval.Candidate{mem("fact", sem, "A"), mem("tA", ep, "A"), mem("tB", ep, "B"), mem("fact2", sem, "B")},
			"fact[tA],tB[fact2]"},
		{"no sources, core", []*retrieval.Candidate{mem("direct", sem), mem("direct2", sem), mem("profile", engram.KindCore, "A"), mem("tA", ep, "A")},
			"direct,direct2,profile,tA"},
		{"media segments", []*retrieval.Candidate{seg("s1", 1), seg("s2", 2), seg("s1again", 1), mem("text", ep, "rec")},
			"s1[s1again],s2,text"},
	}
	for _, tt := range tests {
		if got := placesOf(retrieval.Collapse(tt.cs, 10, nil)); got != tt.want {
			t.Errorf("%s: Collapse = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestCollapseK checks that k counts places, not candidates, and that the
// candidates beyond the k-th place that repeat a kept turn are still
// listed on it.
func TestCollapseK(t *testing.T) {
	var cs []*retrieval.Candidate
	for i := range 6 {
		cs = append(cs, mem(fmt.Sprint("t", i), engram.KindEpisodic, fmt.Sprint("e", i)), mem(fmt.Sprint("f", i), engram.KindSemantic, fmt.Sprint("e", i)))
	}
	if got, want := placesOf(retrieval.Collapse(cs, 3, nil)), "t0[f0],t1[f1],t2[f2]"; got != want {
		t.Errorf("Collapse k=3 = %s, want %s", got, want)
	}
}

// TestCollapseFit checks that a candidate the context has no room for
// claims no turn: a shorter memory of the same turn takes the place, and
// the context never repeats a turn.
func TestCollapseFit(t *testing.T) {
	long := mem("window", engram.KindEpisodic, "A", "B")
	long.Memory.Value = strings.Repeat("word ", 20)
	tA := mem("tA", engram.KindEpisodic, "A")
	tA.Memory.Value = "the turn A"
	tB := mem("tB", engram.KindEpisodic, "B")
	tB.Memory.Value = "the turn B"
	again := mem("windowAgain", engram.KindEpisodic, "A", "B")
	again.Memory.Value = "A and B"
	a := retrieval.NewAssembler(10, words{})
	ps := retrieval.Collapse([]*retrieval.Candidate{long, tA, again, tB}, 10, func(c *retrieval.Candidate) bool { return a.Add(c.Memory) })
	if got, want := placesOf(ps), "tA[windowAgain],tB"; got != want {
		t.Errorf("Collapse within 10 tokens = %s, want %s", got, want)
	}
	if ctx, n := a.Context(); ctx != "the turn A\nthe turn B" || n != 8 {
		t.Errorf("context = %q (%d tokens), want the two turns once each", ctx, n)
	}
}

package community_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/community"
)

func id(i int) string { return fmt.Sprintf("0000000000000000000000%04d", i) }

// clique returns the edges of a clique over ids[lo:hi] with weight w.
func clique(lo, hi int, w float64) []engram.Edge {
	var out []engram.Edge
	for i := lo; i < hi; i++ {
		for j := i + 1; j < hi; j++ {
			out = append(out, engram.Edge{Source: id(i), Target: id(j), Weight: w})
		}
	}
	return out
}

func detectAll(g *community.Graph, maxSize int) [][]string {
	var out [][]string
	for _, c := range g.Components() {
		out = append(out, g.Detect(c, maxSize)...)
	}
	return out
}

// TestDetectTwoCliques: two cliques joined by one weak edge are two
// communities; a third component on its own is a third.
func TestDetectTwoCliques(t *testing.T) {
	edges := append(clique(0, 5, 2), clique(5, 10, 2)...)
	edges = append(edges, engram.Edge{Source: id(4), Target: id(5), Weight: 0.25})
	edges = append(edges, engram.Edge{Source: id(20), Target: id(21), Weight: 1})
	g := community.NewGraph(edges)
	if got := len(g.Components()); got != 2 {
		t.Fatalf("components = %d, want 2", got)
	}
	got := detectAll(g, engram.MaxCommunitySize)
	want := [][]string{{id(0), id(1), id(2), id(3), id(4)}, {id(5), id(6), id(7), id(8), id(9)}, {id(20), id(21)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("communities = %v, want %v", got, want)
	}
}

// TestDetectDeterministic: the same edges in any order give the same
// communities.
func TestDetectDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var edges []engram.Edge
	for range 300 {
		a, b := r.IntN(80), r.IntN(80)
		edges = append(edges, engram.Edge{Source: id(a), Target: id(b), Weight: float64(1 + r.IntN(4))})
	}
	want := detectAll(community.NewGraph(edges), 10)
	if len(want) < 2 {
		t.Fatalf("only %d communities: the graph is too plain to test order", len(want))
	}
	for range 5 {
		r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
		if got := detectAll(community.NewGraph(edges), 10); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled edges gave %v, want %v", got, want)
		}
	}
}

// TestDetectSizeCap: no community of a large clique passes the cap.
func TestDetectSizeCap(t *testing.T) {
	g := community.NewGraph(clique(0, 30, 1))
	got := detectAll(g, 8)
	n := 0
	for _, c := range got {
		if len(c) > 8 {
			t.Errorf("community of %d > cap 8: %v", len(c), c)
		}
		n += len(c)
	}
	if n < 24 {
		t.Errorf("only %d of 30 nodes in communities: %v", n, got)
	}
	if len(detectAll(g, 50)) != 1 {
		t.Errorf("without a binding cap the clique is not one community")
	}
}

// TestSummarize: the summary opens with the central names and quotes,
// from the memories naming the most members, the sentence naming the
// most, in several languages.
func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		lang, a, b, text, want string
	}{
		{"en", "Anna", "Berlin", "We met at noon. Anna moved to Berlin last May. It rained.", "Anna moved to Berlin last May."},
		{"de", "Jürgen", "München", "Das Wetter war gut. Jürgen zieht nach München! Sonst nichts.", "Jürgen zieht nach München!"},
		{"es", "Lucía", "Sevilla", "Hola. Lucía vive en Sevilla desde 2019. Adiós.", "Lucía vive en Sevilla desde 2019."},
		{"zh", "张伟", "北京", "今天很冷。张伟去了北京。我们吃饭了。", "张伟去了北京。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			ms := []community.Member{
				{ID: id(2), Name: tc.b, Keys: []string{engram.NormalizeName(tc.b)}, Degree: 1, Mentions: 1},
				{ID: id(1), Name: tc.a, Keys: []string{engram.NormalizeName(tc.a)}, Degree: 3, Mentions: 2},
			}
			community.Central(ms)
			srcs := []community.Source{
				{ID: id(10), Text: "Nothing here about anyone.", Members: 0, At: 5},
				{ID: id(11), Text: tc.text, Members: 2, At: 1},
			}
			names, summary, quoted := community.Summarize(ms, srcs)
			if !reflect.DeepEqual(names, []string{tc.a, tc.b}) {
				t.Errorf("names = %v, want central first", names)
			}
			if !strings.HasPrefix(summary, tc.a+", "+tc.b+": "+tc.want) {
				t.Errorf("summary = %q, want it to open with the names and %q", summary, tc.want)
			}
			if len(quoted) == 0 || quoted[0] != id(10) && quoted[0] != id(11) {
				t.Errorf("quoted = %v", quoted)
			}
		})
	}
}

package retrieval_test

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

func TestClauses(t *testing.T) {
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"Where did Anna move and what does Clara play?", []string{"Where did Anna move", "what does Clara play"}},
		{"What did Tom cook before the party, and who came after dinner?", []string{"What did Tom cook", "Tom the party", "Tom who came", "Tom dinner"}},
		{"Which came first, the tomatoes or the marigolds?", []string{"the tomatoes", "the marigolds"}},
		{"Wohin ist Anna gezogen und welches Instrument spielt Clara?", []string{"Wohin ist Anna gezogen", "welches Instrument spielt Clara"}},
		{"¿A dónde se mudó Anna y qué instrumento toca Clara?", []string{"A dónde se mudó Anna", "qué instrumento toca Clara"}},
		{"安娜搬到哪里了，克拉拉演奏什么乐器？", []string{"安娜搬到哪里了", "克拉拉演奏什么乐器"}},
		{"Where does Anna work?", nil},
		{"What is Anna's favourite food and?", nil},
	} {
		got := retrieval.Clauses(retrieval.Analyze(tc.q, now))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Clauses(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

func scored(id string, score float64, cues ...string) *retrieval.Candidate {
	return &retrieval.Candidate{Memory: &engram.Memory{ID: id, Cues: cues}, Score: score}
}

func TestAnchors(t *testing.T) {
	q := retrieval.Analyze("Where does Anna swim?", time.Now())
	cs := []*retrieval.Candidate{
		scored("a", 1, "Anna", "Carcavelos", "surf"),
		scored("b", 0.9, "Carcavelos", "Atlantic"),
		scored("c", 0.8, "swim"),
		scored("d", 0.1, "ignored, below the top"),
	}
	got := retrieval.Anchors(q, cs, 3, 3)
	if want := []string{"carcavelos", "surf", "atlantic"}; !slices.Equal(got, want) {
		t.Errorf("Anchors = %q, want %q (the query's own words and names left out, the shared first)", got, want)
	}
}

func TestPool(t *testing.T) {
	var p retrieval.Pool
	// Spread may place a lower score above a higher one: the pool keeps
	// the ranking's order.
	first := []*retrieval.Candidate{scored("a", 2), scored("b", 1), scored("c", 1.5), scored("d", 0.5)}
	p.AddRanking(first, 1)
	if got := ids(p.Ranked()); got != "a,b,c,d" {
		t.Fatalf("first ranking %v", got)
	}
	raised := p.AddRanking([]*retrieval.Candidate{scored("e", 4), scored("d", 3), scored("a", 1)}, 0.8)
	if !slices.Equal(raised, []string{"e", "d"}) {
		t.Errorf("raised %v, want e (new) and d (higher)", raised)
	}
	ranked := p.Ranked()
	if got := ids(ranked); got != "a,e,d,b,c" {
		t.Errorf("merged %v", got)
	}
	g := retrieval.Gain(ranked, map[string]bool{"e": true}, 2)
	if g < 0.44 || g > 0.45 { // 0.8 of 1.8
		t.Errorf("gain %.3f, want 0.8/1.8", g)
	}
	if retrieval.Gain(nil, nil, 10) != 0 || p.AddRanking(nil, 1) != nil {
		t.Error("empty rankings gain nothing")
	}
}

package eval

import (
	"math"
	"reflect"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

func TestRecallAt(t *testing.T) {
	ranked := [][]string{{"a"}, {"x"}, {"b", "c"}, {"y"}}
	ev := setOf([]string{"a", "b", "d"})
	tests := []struct {
		k    int
		want float64
		all  bool
	}{{1, 1.0 / 3, false}, {2, 1.0 / 3, false}, {3, 2.0 / 3, false}, {20, 2.0 / 3, false}}
	for _, tt := range tests {
		got, all := recallAt(ranked, ev, tt.k)
		if !near(got, tt.want) || all != tt.all {
			t.Errorf("recall@%d = %v %v, want %v %v", tt.k, got, all, tt.want, tt.all)
		}
	}
	if got, all := recallAt(ranked, setOf([]string{"b", "c"}), 3); got != 1 || !all {
		t.Errorf("one hit citing both units: recall@3 = %v %v, want 1 true", got, all)
	}
	if got, all := recallAt(ranked, setOf([]string{"b", "c"}), 2); got != 0 || all {
		t.Errorf("recall@2 = %v %v, want 0 false", got, all)
	}
}

func TestNDCG(t *testing.T) {
	// Gains at ranks 2 and 4 (rank 3 repeats a); ideal is 3 gains at 1..3.
	ranked := [][]string{{"x"}, {"a"}, {"a"}, {"b"}}
	ev := setOf([]string{"a", "b", "d"})
	dcg := 1/math.Log2(3) + 1/math.Log2(5)
	idcg := 1 + 1/math.Log2(3) + 1/math.Log2(4)
	if got, want := ndcgAt(ranked, ev, 10), dcg/idcg; !near(got, want) || !near(want, 0.49819) {
		t.Errorf("ndcg = %v, want %v", got, want)
	}
	// Depth cuts the ranking: only rank 2 counts at k=2.
	if got, want := ndcgAt(ranked, ev, 2), (1/math.Log2(3))/(1+1/math.Log2(3)); !near(got, want) {
		t.Errorf("ndcg@2 = %v, want %v", got, want)
	}
	// One hit citing two units gains once, so NDCG stays below 1.
	if got, want := ndcgAt([][]string{{"a", "b"}}, setOf([]string{"a", "b"}), 10), 1/(1+1/math.Log2(3)); !near(got, want) {
		t.Errorf("two units in one hit: ndcg = %v, want %v", got, want)
	}
	if got := ndcgAt([][]string{{"a"}, {"b"}}, setOf([]string{"a", "b"}), 10); !near(got, 1) {
		t.Errorf("perfect ranking: ndcg = %v, want 1", got)
	}
}

func TestMRR(t *testing.T) {
	if got, want := mrr([][]string{{"x"}, {"y"}, {"b"}, {"a"}}, setOf([]string{"a", "b"})), 1.0/3; !near(got, want) {
		t.Errorf("mrr = %v, want %v", got, want)
	}
	if got := mrr([][]string{{"x"}, nil}, setOf([]string{"a"})); got != 0 {
		t.Errorf("mrr with no evidence hit = %v, want 0", got)
	}
}

func TestAssemble(t *testing.T) {
	ps := []piece{{tokens: 3}, {tokens: 5}, {tokens: 2}, {tokens: 10}} // costs 4, 6, 3, 11
	tests := []struct {
		budget, n, tokens int
	}{
		{10, 2, 10},
		{9, 1, 4}, // the 6-token piece overflows and stops assembly although the 3-token one would fit
		{3, 0, 0},
		{100, 4, 24},
	}
	for _, tt := range tests {
		if n, tokens := assembleTop(ps, tt.budget); n != tt.n || tokens != tt.tokens {
			t.Errorf("assembleTop(%d) = %d, %d; want %d, %d", tt.budget, n, tokens, tt.n, tt.tokens)
		}
	}
	recent := []struct {
		budget, start, tokens int
	}{
		{14, 2, 14},
		{10, 4, 0},
		{20, 1, 20},
		{100, 0, 24},
	}
	for _, tt := range recent {
		if start, tokens := assembleRecent(ps, tt.budget); start != tt.start || tokens != tt.tokens {
			t.Errorf("assembleRecent(%d) = %d, %d; want %d, %d", tt.budget, start, tokens, tt.start, tt.tokens)
		}
	}
}

func TestFound(t *testing.T) {
	textOf := map[string]string{
		"s1#0": "I adopted a kitten named Pepper.",
		"s1#1": "Thanks!",
		"s2#0": "My sister lives in Lisbon.",
	}
	sessionOf := map[string]string{"s1#0": "s1", "s1#1": "s1", "s2#0": "s2"}
	ps := []piece{
		{text: "[2023-05-08 13:56] Alice: I adopted a kitten named Pepper.", turns: []string{"s1#0"}},
		{text: "Alice's sister lives in Lisbon.", turns: []string{"s2#0"}}, // a paraphrase
		{text: "Bob: My sister lives in Lisbon.", turns: nil},              // the text without a citation
	}
	if got, want := foundTurns(ps, []string{"s1#0", "s2#0"}, textOf), 2; got != want {
		t.Errorf("foundTurns = %d, want %d (the text counts wherever it is)", got, want)
	}
	if got, want := foundTurns(ps[:2], []string{"s1#0", "s2#0"}, textOf), 1; got != want {
		t.Errorf("foundTurns without the verbatim piece = %d, want %d (paraphrase does not count)", got, want)
	}
	// A session needs a piece that cites one of its turns and holds its text.
	if got, want := foundSessions(ps, []string{"s1", "s2"}, textOf, sessionOf), 1; got != want {
		t.Errorf("foundSessions = %d, want %d", got, want)
	}
}

func TestSessionsOf(t *testing.T) {
	sessionOf := map[string]string{"a#0": "a", "a#1": "a", "b#0": "b"}
	got := sessionsOf([][]string{{"a#0", "a#1"}, {"b#0", "zzz"}, nil}, sessionOf)
	if want := [][]string{{"a"}, {"b"}, nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("sessionsOf = %v, want %v", got, want)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := percentile(xs, 0.5); got != 3 {
		t.Errorf("p50 = %v, want 3", got)
	}
	if got := percentile(xs, 0.95); got != 5 {
		t.Errorf("p95 = %v, want 5", got)
	}
	var hundred []float64
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, float64(i))
	}
	if p50, p95, p99 := percentile(hundred, 0.5), percentile(hundred, 0.95), percentile(hundred, 0.99); p50 != 50 || p95 != 95 || p99 != 99 {
		t.Errorf("p50/p95/p99 of 1..100 = %v/%v/%v", p50, p95, p99)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("empty percentile = %v", got)
	}
	if xs[0] != 5 {
		t.Errorf("percentile sorted its input")
	}
}

func TestMeans(t *testing.T) {
	a := newLevelAcc()
	a.add("1", map[string]float64{"recall@1": 1, "mrr": 0.5})
	a.add("1", map[string]float64{"recall@1": 0, "mrr": 1})
	a.add("2", map[string]float64{"recall@1": 1})
	r := a.report()
	if got := r.Overall["recall@1"]; !near(got, 2.0/3) {
		t.Errorf("overall recall@1 = %v", got)
	}
	if got := r.Overall["mrr"]; !near(got, 0.75) {
		t.Errorf("overall mrr = %v (averaged over the questions that have it)", got)
	}
	if got := r.Overall["questions"]; got != 3 {
		t.Errorf("questions = %v", got)
	}
	if got := r.ByCategory["1"]["recall@1"]; got != 0.5 {
		t.Errorf("category 1 recall@1 = %v", got)
	}
}

func TestTokenCounter(t *testing.T) {
	c, err := newTokenCounter()
	if err != nil {
		t.Fatal(err)
	}
	// Known cl100k counts.
	for s, want := range map[string]int{"hello world": 2, "The quick brown fox jumps over the lazy dog.": 10, "": 0} {
		if got := c.count(s); got != want {
			t.Errorf("count(%q) = %d, want %d", s, got, want)
		}
	}
}

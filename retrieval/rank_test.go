package retrieval_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

func cand(id string, meta map[string]any, ranks ...engram.ChannelHit) *retrieval.Candidate {
	return &retrieval.Candidate{Memory: &engram.Memory{ID: id, Value: id, Metadata: meta, Confidence: 1, Importance: 0.5}, Ranks: ranks}
}

func hit(ch string, rank int, score float64) engram.ChannelHit {
	return engram.ChannelHit{Channel: ch, Rank: rank, Score: score}
}

func ids(cs []*retrieval.Candidate) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Memory.ID)
	}
	return strings.Join(out, ",")
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFuseRRF(t *testing.T) {
	cfg := retrieval.Config{RRFK: 10, Weights: map[string]float64{"bm25": 1, "dense": 0.5}}
	a := cand("a", nil, hit("bm25", 1, 9), hit("dense", 3, 0.8))
	b := cand("b", nil, hit("dense", 1, 0.9))
	retrieval.Fuse([]*retrieval.Candidate{a, b}, cfg)
	if want := 1.0/11 + 0.5/13; !near(a.Fused, want) {
		t.Errorf("a fused = %v, want %v", a.Fused, want)
	}
	if want := 0.5 / 11; !near(b.Fused, want) {
		t.Errorf("b fused = %v, want %v", b.Fused, want)
	}
	// A channel without a weight counts nothing.
	c := cand("c", nil, hit("other", 1, 1))
	retrieval.Fuse([]*retrieval.Candidate{c}, cfg)
	if c.Fused != 0 {
		t.Errorf("unweighted channel fused = %v", c.Fused)
	}
}

func TestFuseSmooth(t *testing.T) {
	cfg := retrieval.Config{RRFK: 0, Weights: map[string]float64{"bm25": 1}, Smooth: 0.5}
	a := cand("a", map[string]any{engram.MetaNext: "b"}, hit("bm25", 1, 1))
	b := cand("b", map[string]any{engram.MetaPrev: "a", engram.MetaNext: "x"}, hit("bm25", 2, 1))
	retrieval.Fuse([]*retrieval.Candidate{a, b}, cfg)
	// Each takes half of its linked neighbour's own fusion; "x" is no
	// candidate and adds nothing.
	if !near(a.Fused, 1+0.25) || !near(b.Fused, 0.5+0.5) {
		t.Errorf("smoothed = %v, %v", a.Fused, b.Fused)
	}
}

func TestFuseScene(t *testing.T) {
	cfg := retrieval.Config{RRFK: 0, Weights: map[string]float64{"bm25": 1}, Scene: 0.5}
	conv := func(id string) map[string]any { return map[string]any{engram.MetaConversation: id} }
	day := time.Date(2023, 5, 8, 10, 0, 0, 0, time.UTC)
	a := cand("a", conv("c1"), hit("bm25", 1, 1))       // fused 1
	b := cand("b", conv("c1"), hit("bm25", 2, 1))       // 1/2
	c := cand("c", conv("c1"), hit("bm25", 4, 1))       // 1/4
	d := cand("d", conv("c2"), hit("bm25", 5, 1))       // alone in its conversation
	e := cand("e", nil, hit("bm25", 8, 1))              // no conversation: its day
	f := cand("f", nil, hit("bm25", 10, 1))             // same day as e
	g := cand("g", map[string]any{}, hit("bm25", 1, 1)) // neither
	e.Memory.ValidFrom, f.Memory.ValidFrom = &day, &day
	retrieval.Fuse([]*retrieval.Candidate{a, b, c, d, e, f, g}, cfg)
	// Each gains half the best fused score of the others of its
	// conversation: the best itself gains half the runner-up's.
	for _, tc := range []struct {
		c    *retrieval.Candidate
		want float64
	}{
		{a, 1 + 0.5*0.5}, {b, 0.5 + 0.5*1}, {c, 0.25 + 0.5*1}, {d, 0.2}, {e, 0.125 + 0.5*0.1}, {f, 0.1 + 0.5*0.125}, {g, 1},
	} {
		if !near(tc.c.Fused, tc.want) {
			t.Errorf("%s fused = %v, want %v", tc.c.Memory.ID, tc.c.Fused, tc.want)
		}
	}
}

func TestFuseSmallPoolKeepsChannelOrder(t *testing.T) {
	// Three dense hits: with z-score fusion they fall back to ranks, and
	// the conversation and neighbour shares are not added, so the two
	// linked turns of one conversation do not lift each other above the
	// channel's clear best.
	cfg := retrieval.DefaultConfig()
	best := cand("fact", nil, hit("dense", 1, 0.51))
	x := cand("x", map[string]any{engram.MetaConversation: "c1", engram.MetaNext: "y"}, hit("dense", 2, 0.40))
	y := cand("y", map[string]any{engram.MetaConversation: "c1", engram.MetaPrev: "x"}, hit("dense", 3, 0.14))
	cs := []*retrieval.Candidate{best, x, y}
	retrieval.Fuse(cs, cfg)
	if !(best.Fused > x.Fused && x.Fused > y.Fused) {
		t.Errorf("fused = fact %v, x %v, y %v; want the channel's order", best.Fused, x.Fused, y.Fused)
	}
}

func TestRerankBoosts(t *testing.T) {
	cfg := retrieval.Config{Speaker: 1, Role: 2, Time: 0.5, Period: 3}
	day := time.Date(2023, 5, 7, 10, 0, 0, 0, time.UTC)
	mk := func(id string, fused float64, meta map[string]any, value string) *retrieval.Candidate {
		c := cand(id, meta)
		c.Memory.Value = value
		c.Memory.ValidFrom = &day
		c.Fused = fused
		return c
	}
	q := retrieval.Analyze("When did Caroline go to the support group?", now)
	spk := mk("spk", 1, map[string]any{"speaker": "Caroline"}, "I went there.")
	other := mk("other", 1.5, map[string]any{"speaker": "Melanie"}, "I went there.")
	dated := mk("dated", 1, map[string]any{"speaker": "Caroline", engram.MetaEventFrom: "2023-05-06", engram.MetaEventTo: "2023-05-07"}, "I went yesterday.")
	cs := []*retrieval.Candidate{spk, other, dated}
	retrieval.Rerank(q, cs, cfg, now)
	if got, want := ids(cs), "dated,spk,other"; got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
	// Scores are relative to the best boosted score: dated 1·2·1.5 = 3.
	if got, want := spk.Score, 2.0/3; !near(got, want) {
		t.Errorf("speaker-boosted score = %v, want %v", got, want)
	}
	if got, want := other.Score, 1.5/3; !near(got, want) {
		t.Errorf("unboosted score = %v, want %v", got, want)
	}
	if f := dated.Factors; f[retrieval.FactorSpeaker] != 1 || f[retrieval.FactorTime] != 0.5 || f[retrieval.FactorFused] != 1 || f[retrieval.FactorFinal] != 1 {
		t.Errorf("factors = %v", f)
	}

	// A period named in the query boosts what happened (or was said) in it.
	q = retrieval.Analyze("What did Caroline do in May 2023?", now)
	in := mk("in", 1, map[string]any{engram.MetaEventFrom: "2023-05-06", engram.MetaEventTo: "2023-05-07"}, "x")
	out := mk("out", 1, nil, "x")
	june := time.Date(2023, 6, 2, 0, 0, 0, 0, time.UTC)
	out.Memory.ValidFrom = &june
	cs = []*retrieval.Candidate{out, in}
	retrieval.Rerank(q, cs, cfg, now)
	if ids(cs) != "in,out" || in.Factors[retrieval.FactorPeriod] != 3 {
		t.Errorf("period: order %s, factors %v", ids(cs), in.Factors)
	}

	// Role: the assistant's line for a question about what it said.
	q = retrieval.Analyze("What did you recommend for dinner?", now)
	user := mk("user", 1, map[string]any{"role": "user"}, "x")
	asst := mk("asst", 1, map[string]any{"role": "assistant"}, "x")
	cs = []*retrieval.Candidate{user, asst}
	retrieval.Rerank(q, cs, cfg, now)
	if ids(cs) != "asst,user" {
		t.Errorf("role order = %s", ids(cs))
	}
}

func TestRerankRecencyAndImportance(t *testing.T) {
	cfg := retrieval.Config{Recency: 0.5, RecencyHalfLife: 24 * time.Hour, Importance: 1}
	old, recent := now.Add(-48*time.Hour), now
	a := cand("old", nil)
	a.Memory.ValidFrom, a.Fused = &old, 1
	b := cand("recent", nil)
	b.Memory.ValidFrom, b.Fused = &recent, 1
	b.Memory.Importance = 1
	cs := []*retrieval.Candidate{a, b}
	retrieval.Rerank(retrieval.Analyze("anything", now), cs, cfg, now)
	// Both relevance 1; old: + 0.5·2^-2 recency; recent: + 0.5 recency
	// + 1·(1−0.5) importance.
	if !near(a.Score, 1+0.125) || !near(b.Score, 1.5+0.5) {
		t.Errorf("scores = %v, %v", a.Score, b.Score)
	}
	if ids(cs) != "recent,old" {
		t.Errorf("order = %s", ids(cs))
	}
}

func TestRerankTiesByID(t *testing.T) {
	cs := []*retrieval.Candidate{cand("b", nil), cand("a", nil), cand("c", nil)}
	retrieval.Rerank(retrieval.Analyze("x", now), cs, retrieval.Config{}, now)
	if got := ids(cs); got != "a,b,c" {
		t.Errorf("tie order = %s", got)
	}
}

func TestPlain(t *testing.T) {
	p := retrieval.DefaultConfig().Plain()
	if !p.Raw || p.Speaker != 0 || p.Role != 0 || p.Smooth != 0 || p.Inflect || p.Recency != 0 || p.Spread != 0 {
		t.Errorf("Plain = %+v", p)
	}
	if p.RRFK != retrieval.DefaultConfig().RRFK {
		t.Errorf("Plain changed the fusion")
	}
}

func TestSpread(t *testing.T) {
	// Five hits of one chat session outscore the best hit of two others.
	mk := func(id, session string, score float64) *retrieval.Candidate {
		c := cand(id, nil)
		c.Memory.Namespace.Session, c.Score = session, score
		c.Factors = map[string]float64{}
		return c
	}
	fresh := func() []*retrieval.Candidate {
		return []*retrieval.Candidate{
			mk("a1", "s1", 1), mk("a2", "s1", 0.9), mk("a3", "s1", 0.8), mk("a4", "s1", 0.7),
			mk("b1", "s2", 0.6), mk("a5", "s1", 0.55), mk("c1", "s3", 0.5), mk("b2", "s2", 0.4),
		}
	}
	gathers := retrieval.Analyze("How many times did I bake something?", time.Now())
	if !gathers.Gathers {
		t.Fatal("a count question does not gather")
	}
	single := retrieval.Analyze("What did I bake for my friend?", time.Now())
	if single.Gathers {
		t.Fatal("a question about one occasion gathers")
	}

	for _, tc := range []struct {
		name   string
		q      *retrieval.Query
		depth  int
		spread float64
		want   string
	}{
		{"a question about one occasion keeps its order", single, 5, 1, "a1,a2,a3,a4,b1,a5,c1,b2"},
		// Full spread: the first places go to one hit of each session, the
		// rest keep their order after them.
		{"full spread", gathers, 5, 1, "a1,b1,c1,a2,a3,a4,a5,b2"},
		// Half: a session's second hit (0.9/2) falls below the others' best.
		{"half spread, three places", gathers, 3, 0.5, "a1,b1,c1,a2,a3,a4,a5,b2"},
	} {
		cs := fresh()
		retrieval.Spread(tc.q, cs, 50, tc.depth, tc.spread)
		if ids(cs) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, ids(cs), tc.want)
		}
	}
	// The explanation says which hits were placed with a lowered score.
	cs := fresh()
	retrieval.Spread(gathers, cs, 50, 5, 0.5)
	if ids(cs) != "a1,b1,c1,a2,a3,a4,a5,b2" {
		t.Errorf("Spread 0.5 = %s", ids(cs))
	}
	want := map[string]float64{"a2": 0.5, "a3": 0.25} // a session's second and third
	for _, c := range cs {
		w, ok := c.Factors[retrieval.FactorSpread]
		if ww, placed := want[c.Memory.ID]; ok != placed || w != ww {
			t.Errorf("%s spread factor %v (%v), want %v", c.Memory.ID, w, ok, ww)
		}
	}
	// Without a session, formation's conversation id groups the hits.
	cs = fresh()
	for _, c := range cs {
		c.Memory.Metadata = map[string]any{engram.MetaConversation: c.Memory.Namespace.Session}
		c.Memory.Namespace.Session = ""
	}
	retrieval.Spread(gathers, cs, 50, 5, 1)
	if ids(cs) != "a1,b1,c1,a2,a3,a4,a5,b2" {
		t.Errorf("Spread by formation's conversation = %s", ids(cs))
	}
}

func TestGathers(t *testing.T) {
	for q, want := range map[string]bool{
		"How many model kits have I bought?":                       true,
		"What is the total weight of the feed I purchased?":        true,
		"Which device did I set up first, the router or the TV?":   true,
		"What type of car am I currently working on?":              true,
		"Which store did I spend the most money at?":               true,
		"Where did Rachel move to after her recent relocation?":    true,
		"What did Caroline paint?":                                 false,
		"When did Melanie go camping?":                             false,
		"I mentioned visiting a museum two months ago. With whom?": true,
		"Which pair of shoes did I clean last month?":              true,
		"What should I cook this weekend?":                         false,
		"What did I plan for next month?":                          false,
		"What was the rotation for Admon on a Sunday?":             false,
	} {
		if got := retrieval.Analyze(q, time.Date(2023, 5, 30, 20, 0, 0, 0, time.UTC)).Gathers; got != want {
			t.Errorf("Analyze(%q).Gathers = %v, want %v", q, got, want)
		}
	}
}

func TestRerankNoRecencyForTime(t *testing.T) {
	cfg := retrieval.Config{Recency: 0.5, RecencyHalfLife: 24 * time.Hour}
	old, recent := now.Add(-30*24*time.Hour), now
	for q, recency := range map[string]bool{
		"Which café did I like?":                true,
		"When did I go to the café?":            false, // a tie, broken by validity
		"Which café did I go to on 3 May 2023?": false,
	} {
		a := cand("old", nil)
		a.Memory.ValidFrom, a.Fused = &old, 1
		b := cand("recent", nil)
		b.Memory.ValidFrom, b.Fused = &recent, 1
		cs := []*retrieval.Candidate{a, b}
		retrieval.Rerank(retrieval.Analyze(q, now), cs, cfg, now)
		if got := ids(cs); got != "recent,old" {
			t.Errorf("%q: order %s, want recent,old (factors %v, %v)", q, got, cs[0].Factors, cs[1].Factors)
		}
		_, got := cs[0].Factors[retrieval.FactorRecency]
		if got != recency {
			t.Errorf("%q: recency factor applied %v, want %v (factors %v)", q, got, recency, cs[0].Factors)
		}
		if !recency && cs[0].Score != cs[1].Score {
			t.Errorf("%q: scores %v and %v, want a tie", q, cs[0].Score, cs[1].Score)
		}
	}
}

// TestRerankTieBreak checks that equal scores are ordered by content
// (validity, then value), whatever the ids and the input order.
func TestRerankTieBreak(t *testing.T) {
	at := func(d int) *time.Time { v := now.Add(time.Duration(-d) * 24 * time.Hour); return &v }
	for _, ids := range [][3]string{{"a", "b", "c"}, {"c", "b", "a"}, {"b", "c", "a"}} {
		mk := func(id, value string, from *time.Time) *retrieval.Candidate {
			c := cand(id, nil)
			c.Memory.Value, c.Memory.ValidFrom, c.Fused = value, from, 1
			return c
		}
		cs := []*retrieval.Candidate{mk(ids[0], "zebra", at(3)), mk(ids[1], "apple", at(3)), mk(ids[2], "mango", at(1))}
		for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
			in := []*retrieval.Candidate{cs[order[0]], cs[order[1]], cs[order[2]]}
			retrieval.Rerank(retrieval.Analyze("Which fruit?", now), in, retrieval.Config{}, now)
			var got []string
			for _, c := range in {
				got = append(got, c.Memory.Value)
			}
			if strings.Join(got, ",") != "mango,apple,zebra" {
				t.Errorf("ids %v, order %v: ranking %v, want mango,apple,zebra", ids, order, got)
			}
		}
	}
}

// TestZFuseReproducible checks that z-score fusion gives bit-identical
// scores on every run: channels are summed in one order, not map order.
func TestZFuseReproducible(t *testing.T) {
	chans := []string{"bm25", "dense", "temporal", "graph", "cues", "speaker"}
	mk := func() []*retrieval.Candidate {
		var cs []*retrieval.Candidate
		for i := range 40 {
			var rs []engram.ChannelHit
			for j, ch := range chans {
				if (i+j)%3 != 0 {
					rs = append(rs, hit(ch, i+1, 1/float64(3+i*j+j)+float64(j)*0.1))
				}
			}
			cs = append(cs, cand(fmt.Sprint("m", i), nil, rs...))
		}
		return cs
	}
	cfg := retrieval.Config{ZFusion: true, Weights: map[string]float64{"bm25": 1.3, "dense": 0.7, "temporal": 0.11, "graph": 0.37, "cues": 0.9, "speaker": 0.23}}
	want := mk()
	retrieval.Fuse(want, cfg)
	for run := range 200 {
		got := mk()
		retrieval.Fuse(got, cfg)
		for i := range got {
			if math.Float64bits(got[i].Fused) != math.Float64bits(want[i].Fused) {
				t.Fatalf("run %d: candidate %d fused %v, first run %v", run, i, got[i].Fused, want[i].Fused)
			}
		}
	}
}

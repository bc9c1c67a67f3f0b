package retrieval_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// shape is one form a channel's result list takes.
type shape struct {
	name string
	// scores returns the scores of a channel's n finds, best first.
	scores func(r *rand.Rand, n int) []float64
	n      int
}

var shapes = []shape{
	{"one", func(r *rand.Rand, n int) []float64 { return []float64{1 + 20*r.Float64()} }, 1},
	{"two close", func(r *rand.Rand, n int) []float64 { s := 5 + r.Float64(); return []float64{s, s * 0.97} }, 2},
	{"ties", func(r *rand.Rand, n int) []float64 {
		s := 1 + 10*r.Float64()
		return []float64{s, s, s}
	}, 3},
	{"few spread", func(r *rand.Rand, n int) []float64 { return desc(r, n, 0, 20) }, 6},
	{"many tied", func(r *rand.Rand, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 4.2
		}
		return out
	}, 30},
	{"many", func(r *rand.Rand, n int) []float64 { return desc(r, n, 0, 20) }, 60},
	{"many negative", func(r *rand.Rand, n int) []float64 { return desc(r, n, -1, 1) }, 60},
}

// desc returns n random scores in [lo, hi), best first.
func desc(r *rand.Rand, n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*r.Float64()
	}
	slices.SortFunc(out, func(a, b float64) int { return -cmpF(a, b) })
	return out
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pool builds a candidate pool of a dense channel with `dense` finds
// (random scores, as an embedding's noise) and a full-text channel of the
// given shape, whose finds are drawn from the pool at random, some of
// them candidates the dense channel missed. Each full-text find gets a
// twin: the same dense verdict, missed by the full text.
func pool(r *rand.Rand, sh shape, dense int) (cs []*retrieval.Candidate, twins map[string]string) {
	ds := desc(r, dense, 0.1, 0.6)
	for i, s := range ds {
		cs = append(cs, cand(fmt.Sprint("d", i), nil, hit("dense", i+1, s)))
	}
	twins = map[string]string{}
	for i, s := range sh.scores(r, sh.n) {
		var c, twin *retrieval.Candidate
		if j := r.IntN(2*dense + 1); j < dense && twins[cs[j].Memory.ID] == "" && !slices.ContainsFunc(cs[j].Ranks, func(h engram.ChannelHit) bool { return h.Channel == "bm25" }) {
			c = cs[j]
			twin = cand(c.Memory.ID+"'", nil, c.Ranks...)
		} else {
			c = cand(fmt.Sprint("b", i), nil)
			twin = cand(fmt.Sprint("b", i, "'"), nil)
		}
		c.Ranks = append(c.Ranks, hit("bm25", i+1, s))
		if !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
		cs = append(cs, twin)
		twins[c.Memory.ID] = twin.Memory.ID
	}
	return cs, twins
}

func byID(cs []*retrieval.Candidate) map[string]*retrieval.Candidate {
	out := map[string]*retrieval.Candidate{}
	for _, c := range cs {
		out[c.Memory.ID] = c
	}
	return out
}

// TestFuseShapes checks z-score fusion over every shape of a full-text
// result list beside a dense channel's noise: scores are finite; a find
// never scores below its twin the channel missed, and the channel's best
// find scores above its twin unless the channel found every candidate
// (which says nothing); a channel's only find, tied finds or best of a
// few (an exact match of a rare word) is first, above the dense
// channel's best guess; and the ranking is the same whatever order the
// candidates come in.
func TestFuseShapes(t *testing.T) {
	cfg := retrieval.DefaultConfig()
	cfg.Smooth, cfg.Scene = 0, 0
	for _, sh := range shapes {
		for seed := range 20 {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			cs, twins := pool(r, sh, 40)
			retrieval.Fuse(cs, cfg)
			got := byID(cs)
			best := ""
			for _, c := range cs {
				if math.IsNaN(c.Fused) || math.IsInf(c.Fused, 0) || c.Fused <= 0 {
					t.Fatalf("%s/%d: %s fused %v, want finite and positive", sh.name, seed, c.Memory.ID, c.Fused)
				}
				if h := bm25Of(c); h != nil && (best == "" || h.Score > bm25Of(got[best]).Score) {
					best = c.Memory.ID
				}
			}
			for id, twin := range twins {
				if got[id].Fused < got[twin].Fused {
					t.Errorf("%s/%d: find %s fused %v below its missed twin's %v", sh.name, seed, id, got[id].Fused, got[twin].Fused)
				}
			}
			if b := got[best]; b.Fused <= got[twins[best]].Fused {
				t.Errorf("%s/%d: the channel's best find %s fused %v, no more than its missed twin's %v", sh.name, seed, best, b.Fused, got[twins[best]].Fused)
			}
			if sh.n <= 3 {
				first := slices.MaxFunc(cs, func(a, b *retrieval.Candidate) int { return cmpF(a.Fused, b.Fused) })
				if bm25Of(first) == nil || bm25Of(first).Score < bm25Of(got[best]).Score*0.97 {
					t.Errorf("%s/%d: first is %s (fused %v), not the full text's best find %s (%v)", sh.name, seed, first.Memory.ID, first.Fused, best, got[best].Fused)
				}
			}
			checkPermutations(t, sh.name, seed, cs, cfg)
		}
	}
}

func bm25Of(c *retrieval.Candidate) *engram.ChannelHit {
	for i := range c.Ranks {
		if c.Ranks[i].Channel == "bm25" {
			return &c.Ranks[i]
		}
	}
	return nil
}

// checkPermutations fuses and reranks shuffled copies of cs and wants the
// same ranking and bit-identical fused scores.
func checkPermutations(t *testing.T, name string, seed int, cs []*retrieval.Candidate, cfg retrieval.Config) {
	t.Helper()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	q := retrieval.Analyze("what is the code", now)
	rank := func(cs []*retrieval.Candidate) ([]string, map[string]uint64) {
		cs = slices.Clone(cs)
		retrieval.Fuse(cs, cfg)
		fused := map[string]uint64{}
		for _, c := range cs {
			fused[c.Memory.ID] = math.Float64bits(c.Fused)
		}
		retrieval.Rerank(q, cs, cfg, now)
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Memory.ID
		}
		return out, fused
	}
	want, wantFused := rank(cs)
	r := rand.New(rand.NewPCG(uint64(seed), 11))
	for range 5 {
		p := slices.Clone(cs)
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		got, gotFused := rank(p)
		if !slices.Equal(got, want) {
			t.Fatalf("%s/%d: a shuffled pool ranks %v, want %v", name, seed, got[:5], want[:5])
		}
		for id, f := range wantFused {
			if gotFused[id] != f {
				t.Fatalf("%s/%d: shuffled, %s fused %v, want %v", name, seed, id, math.Float64frombits(gotFused[id]), math.Float64frombits(f))
			}
		}
	}
}

// TestFuseAllFoundSaysNothing checks that a channel that found every
// candidate with the same score moves nothing: the ranking is the other
// channel's.
func TestFuseAllFoundSaysNothing(t *testing.T) {
	var cs []*retrieval.Candidate
	for i := range 20 {
		cs = append(cs, cand(fmt.Sprint("m", i), nil, hit("dense", i+1, 0.9-0.01*float64(i)), hit("bm25", 1, 3)))
	}
	retrieval.Fuse(cs, retrieval.DefaultConfig())
	for i := 1; i < len(cs); i++ {
		if !(cs[i-1].Fused > cs[i].Fused) {
			t.Fatalf("m%d fused %v, m%d %v: want the dense order", i-1, cs[i-1].Fused, i, cs[i].Fused)
		}
	}
}

// TestFuseLiftNotShared checks that the credit a lone find gets marks
// that memory alone: its linked neighbour and its conversation fuse the
// same whether the lone full-text find is their neighbour or an unrelated
// memory.
func TestFuseLiftNotShared(t *testing.T) {
	cfg := retrieval.DefaultConfig()
	mk := func(loneIsA bool) map[string]*retrieval.Candidate {
		conv := func(next string) map[string]any {
			return map[string]any{engram.MetaConversation: "c1", engram.MetaNext: next}
		}
		a := cand("a", conv("b"), hit("dense", 30, 0.2))
		b := cand("b", conv(""), hit("dense", 31, 0.19))
		x := cand("x", nil, hit("dense", 32, 0.18))
		lone := hit("bm25", 1, 7.5)
		if loneIsA {
			a.Ranks = append(a.Ranks, lone)
		} else {
			x.Ranks = append(x.Ranks, lone)
		}
		cs := []*retrieval.Candidate{a, b, x}
		for i := range 29 {
			cs = append(cs, cand(fmt.Sprint("d", i), nil, hit("dense", i+1, 0.5-0.01*float64(i))))
		}
		retrieval.Fuse(cs, cfg)
		return byID(cs)
	}
	with, without := mk(true), mk(false)
	if w, wo := with["b"].Fused, without["b"].Fused; math.Abs(w-wo) > 1e-9 {
		t.Errorf("neighbour of the lone find fused %v, %v beside an unrelated one: it shares the lift", w, wo)
	}
	if with["a"].Fused <= with["d0"].Fused {
		t.Errorf("lone find fused %v, not above the dense best %v", with["a"].Fused, with["d0"].Fused)
	}
}

// TestGatheringAddsFinds: the finds channels hand over become one
// candidate per memory, in order of first finding, with a rank from each
// channel that found it; a find the channel trusts less keeps only its
// share of the channel's weight in fusion, the others all of it.
func TestGatheringAddsFinds(t *testing.T) {
	a, b := &engram.Memory{ID: "a"}, &engram.Memory{ID: "b"}
	g := retrieval.NewGathering(nil, engram.Scope{}, engram.MemoryFilter{}, nil, &retrieval.Config{}, 10)
	g.Add(retrieval.ChannelDense, []retrieval.Find{{Memory: a, Rank: 1, Score: 0.9, Trust: 0.2}, {Memory: b, Rank: 1, Score: 0.8}})
	g.Add(retrieval.ChannelBM25, []retrieval.Find{{Memory: b, Rank: 2, Score: 3}})
	cs := g.Candidates()
	if len(cs) != 2 || cs[0].Memory != a || cs[1].Memory != b {
		t.Fatalf("candidates %v, want a then b", cs)
	}
	wantRanks := []engram.ChannelHit{{Channel: retrieval.ChannelDense, Rank: 1, Score: 0.8}, {Channel: retrieval.ChannelBM25, Rank: 2, Score: 3}}
	if !slices.Equal(cs[1].Ranks, wantRanks) {
		t.Errorf("ranks of b %v, want %v", cs[1].Ranks, wantRanks)
	}
	retrieval.Fuse(cs, retrieval.Config{RRFK: 20, Weights: map[string]float64{retrieval.ChannelDense: 1, retrieval.ChannelBM25: 1}})
	if got, want := cs[0].Fused, 0.2/21; math.Abs(got-want) > 1e-12 {
		t.Errorf("fused a = %v, want %v: its dense find keeps a fifth of the weight", got, want)
	}
	if got, want := cs[1].Fused, 1.0/21+1.0/22; math.Abs(got-want) > 1e-12 {
		t.Errorf("fused b = %v, want %v: full weight from both channels", got, want)
	}
}

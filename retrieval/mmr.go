package retrieval

import (
	"math"
	"strings"

	"github.com/engramhq/engram/textsearch"
)

// MMR reorders the first n ranked candidates by maximal marginal
// relevance: each next pick maximises lambda·relevance − (1−lambda)·(the
// highest similarity to a pick before it), relevance being the score
// relative to the best. Similarity is the overlap (Jaccard) of the content
// words of the memories' values, so near-repeats of a hit make way for
// hits that add something; with sameConv above zero, two memories of the
// same conversation (formation.MetaConversation, else the same day) are at
// least that similar, so hits spread over more conversations. lambda 1
// keeps the order; the candidates after the first n keep theirs.
func MMR(cs []*Candidate, n int, lambda, sameConv float64) {
	if lambda >= 1 || len(cs) < 3 {
		return
	}
	n = min(n, len(cs))
	top := cs[0].Score
	if top <= 0 {
		return
	}
	words := make([]map[string]bool, n)
	convs := make([]string, n)
	for i := range n {
		words[i] = termSet(cs[i].Memory.Value)
		convs[i] = cs[i].Memory.Conversation()
	}
	used := make([]bool, n)
	maxSim := make([]float64, n)
	picked := make([]*Candidate, 0, n)
	for len(picked) < n {
		best, bestVal := -1, 0.0
		for i := range n {
			if used[i] {
				continue
			}
			v := lambda*cs[i].Score/top - (1-lambda)*maxSim[i]
			if best < 0 || v > bestVal {
				best, bestVal = i, v
			}
		}
		used[best] = true
		picked = append(picked, cs[best])
		for i := range n {
			if !used[i] {
				sim := jaccard(words[i], words[best])
				if sameConv > 0 && convs[i] == convs[best] && convs[i] != "" {
					sim = max(sim, sameConv)
				}
				maxSim[i] = max(maxSim[i], sim)
			}
		}
	}
	copy(cs, picked)
}

func termSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), textsearch.IsSeparator) {
		if !textsearch.IsStopWord(w) {
			m[w] = true
		}
	}
	return m
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// Spread reorders the first places of the ranking for a question that
// gathers its answer from several occasions (Query.Gathers): each of the
// first depth places, in turn, takes the candidate among the first n whose
// score, lowered by the share spread for every candidate of its
// conversation already placed, is highest; the rest keep their order after
// them. Another kind of question uses the share other instead. Memories of
// no conversation are never lowered. A share of 0 or depth 0 keeps the
// order. A hit placed with a lowered score records the weight it was
// placed by as FactorSpread (its score stays as it was).
func Spread(q *Query, cs []*Candidate, n, depth int, spread, other float64) {
	if !q.Gathers {
		spread = other
	}
	if spread <= 0 || depth <= 0 || len(cs) < 3 {
		return
	}
	n = min(n, len(cs))
	depth = min(depth, n)
	convs := make([]string, n)
	for i := range n {
		convs[i] = cs[i].Memory.Conversation()
	}
	taken := map[string]int{}
	used := make([]bool, n)
	picked := make([]*Candidate, 0, n)
	keep := 1 - spread
	weight := func(i int) float64 {
		if k := convs[i]; k != "" {
			return math.Pow(keep, float64(taken[k]))
		}
		return 1
	}
	for len(picked) < depth {
		best, bestVal := -1, 0.0
		for i := range n {
			if v := cs[i].Score * weight(i); !used[i] && (best < 0 || v > bestVal) {
				best, bestVal = i, v
			}
		}
		if w := weight(best); w < 1 && cs[best].Factors != nil {
			cs[best].Factors[FactorSpread] = w
		}
		used[best] = true
		picked = append(picked, cs[best])
		if k := convs[best]; k != "" {
			taken[k]++
		}
	}
	for i := range n {
		if !used[i] {
			picked = append(picked, cs[i])
		}
	}
	copy(cs, picked)
}

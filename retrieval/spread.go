package retrieval

import "math"

// Spread reorders the first places of the ranking for a question that
// gathers its answer from several occasions (Query.Gathers): each of the
// first depth places, in turn, takes the candidate among the first n whose
// score, lowered by the share spread for every candidate of its
// conversation already placed, is highest; the rest keep their order after
// them. Memories of no conversation are never lowered. A share of 0 or depth 0 keeps the
// order. A hit placed with a lowered score records the weight it was
// placed by as FactorSpread (its score stays as it was).
func Spread(q *Query, cs []*Candidate, n, depth int, spread float64) {
	if !q.Gathers || spread <= 0 || depth <= 0 || len(cs) < 3 {
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

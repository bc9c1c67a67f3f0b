package eval

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Cut-offs and budgets of the reported metrics.
var (
	recallKs = []int{1, 5, 10, 20}
	budgets  = []int{500, 1000, 2000, 4000}
)

// ndcgK is the depth of the reported NDCG, and contextK the number of hits
// whose unbudgeted token count is context_tokens_mean.
const (
	ndcgK    = 10
	contextK = 10
)

// recallAt returns the fraction of the evidence units cited by the first k
// ranks, and whether all of them are. ranked[i] lists the units hit i cites.
func recallAt(ranked [][]string, ev map[string]bool, k int) (float64, bool) {
	if len(ev) == 0 {
		return 0, false
	}
	found := map[string]bool{}
	for i := 0; i < k && i < len(ranked); i++ {
		for _, u := range ranked[i] {
			if ev[u] {
				found[u] = true
			}
		}
	}
	return float64(len(found)) / float64(len(ev)), len(found) == len(ev)
}

// ndcgAt returns NDCG at depth k with binary gains: a rank gains 1 when its
// hit cites an evidence unit that no higher rank cited. The ideal ranking
// puts one new unit at each of the first min(k, |ev|) ranks, so the value
// stays within [0, 1] even when one hit cites several units.
func ndcgAt(ranked [][]string, ev map[string]bool, k int) float64 {
	if len(ev) == 0 {
		return 0
	}
	seen := map[string]bool{}
	dcg := 0.0
	for i := 0; i < k && i < len(ranked); i++ {
		gain := false
		for _, u := range ranked[i] {
			if ev[u] && !seen[u] {
				seen[u] = true
				gain = true
			}
		}
		if gain {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	idcg := 0.0
	for i := 0; i < k && i < len(ev); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	return dcg / idcg
}

// mrr returns 1/rank of the first hit citing any evidence unit, or 0.
func mrr(ranked [][]string, ev map[string]bool) float64 {
	for i, units := range ranked {
		for _, u := range units {
			if ev[u] {
				return 1 / float64(i+1)
			}
		}
	}
	return 0
}

// piece is one rendered item of a context: a hit or, for the full history,
// a turn. turns lists the turn keys it cites.
type piece struct {
	text   string
	tokens int
	turns  []string
}

// cost is what a piece adds to a context: its tokens and a newline.
func (p piece) cost() int { return p.tokens + 1 }

// assembleTop returns how many leading pieces fit in budget tokens and
// their total cost. The first piece that would overflow stops assembly,
// even if a later, shorter one would fit.
func assembleTop(ps []piece, budget int) (n, tokens int) {
	for _, p := range ps {
		if tokens+p.cost() > budget {
			break
		}
		tokens += p.cost()
		n++
	}
	return n, tokens
}

// assembleRecent returns the index of the first of the trailing pieces that
// fit in budget tokens, and their total cost: the most recent window.
func assembleRecent(ps []piece, budget int) (start, tokens int) {
	start = len(ps)
	for start > 0 && tokens+ps[start-1].cost() <= budget {
		start--
		tokens += ps[start].cost()
	}
	return start, tokens
}

// foundTurns returns how many evidence turns have their full text inside
// one of the pieces.
func foundTurns(ps []piece, ev []string, textOf map[string]string) int {
	n := 0
	for _, u := range ev {
		t, ok := textOf[u]
		if !ok {
			continue
		}
		for _, p := range ps {
			if strings.Contains(p.text, t) {
				n++
				break
			}
		}
	}
	return n
}

// foundSessions returns how many evidence sessions have a turn that a piece
// both cites and contains in full.
func foundSessions(ps []piece, ev []string, textOf, sessionOf map[string]string) int {
	want := map[string]bool{}
	for _, s := range ev {
		want[s] = true
	}
	found := map[string]bool{}
	for _, p := range ps {
		for _, u := range p.turns {
			s := sessionOf[u]
			if want[s] && !found[s] && strings.Contains(p.text, textOf[u]) {
				found[s] = true
			}
		}
	}
	return len(found)
}

// sessionsOf maps per-hit turn citations to per-hit session citations, each
// session listed once per hit.
func sessionsOf(ranked [][]string, sessionOf map[string]string) [][]string {
	out := make([][]string, len(ranked))
	for i, units := range ranked {
		var ss []string
		for _, u := range units {
			s, ok := sessionOf[u]
			if !ok {
				continue
			}
			dup := false
			for _, x := range ss {
				dup = dup || x == s
			}
			if !dup {
				ss = append(ss, s)
			}
		}
		out[i] = ss
	}
	return out
}

// percentile returns the q-quantile (0 < q <= 1) of xs by the nearest-rank
// method, 0 for no values. xs need not be sorted.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Metric names as they appear in report.json.
func recallName(k int) string       { return fmt.Sprintf("recall@%d", k) }
func allName(k int) string          { return fmt.Sprintf("all@%d", k) }
func budgetRecallName(b int) string { return fmt.Sprintf("recall_tokens@%d", b) }
func budgetTokensName(b int) string { return fmt.Sprintf("context_tokens_mean@%d", b) }
func ndcgName() string              { return fmt.Sprintf("ndcg@%d", ndcgK) }

const (
	metricMRR           = "mrr"
	metricContextTokens = "context_tokens_mean"
	metricHitTokens     = "hit_tokens_mean"
	metricQuestions     = "questions"
)

// scoreRanked fills the rank metrics of one question at one level.
func scoreRanked(m map[string]float64, ranked [][]string, ev []string) {
	set := setOf(ev)
	for _, k := range recallKs {
		r, all := recallAt(ranked, set, k)
		m[recallName(k)] = r
		m[allName(k)] = b2f(all)
	}
	m[ndcgName()] = ndcgAt(ranked, set, ndcgK)
	m[metricMRR] = mrr(ranked, set)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// meanAcc accumulates per-metric means; a metric's count is the number of
// questions that reported it.
type meanAcc struct {
	sum map[string]float64
	n   map[string]int
}

func newMeanAcc() *meanAcc { return &meanAcc{sum: map[string]float64{}, n: map[string]int{}} }

func (a *meanAcc) add(m map[string]float64) {
	for k, v := range m {
		a.sum[k] += v
		a.n[k]++
	}
}

func (a *meanAcc) means(questions int) map[string]float64 {
	out := make(map[string]float64, len(a.sum)+1)
	for k, s := range a.sum {
		out[k] = s / float64(a.n[k])
	}
	out[metricQuestions] = float64(questions)
	return out
}

// levelAcc accumulates one system's metrics at one level.
type levelAcc struct {
	overall *meanAcc
	n       int
	byCat   map[string]*meanAcc
	nCat    map[string]int
}

func newLevelAcc() *levelAcc {
	return &levelAcc{overall: newMeanAcc(), byCat: map[string]*meanAcc{}, nCat: map[string]int{}}
}

func (a *levelAcc) add(cat string, m map[string]float64) {
	a.overall.add(m)
	a.n++
	c := a.byCat[cat]
	if c == nil {
		c = newMeanAcc()
		a.byCat[cat] = c
	}
	c.add(m)
	a.nCat[cat]++
}

func (a *levelAcc) report() *LevelReport {
	r := &LevelReport{Overall: a.overall.means(a.n), ByCategory: map[string]map[string]float64{}}
	for c, acc := range a.byCat {
		r.ByCategory[c] = acc.means(a.nCat[c])
	}
	return r
}

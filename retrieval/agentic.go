package retrieval

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
	"github.com/engramhq/engram/textsearch"
)

// The parts of an agentic search (engine.searchAgentic) that need no
// store: the clauses of a compound question, the anchors of the best hits,
// the expanders that follow links from them, and the pool that merges the
// steps' rankings.

// clauseSplit, per language, matches the words that join the clauses of a
// compound question: "and", "as well as", "before", "after", "while" and
// their equivalents. English serves "" and the languages without a list.
var clauseSplit = map[string]*regexp.Regexp{
	lang.English:    regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:and|as well as|but|before|after|while|since|whereas)\s+|\s*;\s*`),
	lang.German:     regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:und|sowie|aber|bevor|nachdem|während|seit)\s+|\s*;\s*`),
	lang.Spanish:    regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:y|e|así como|pero|antes de|después de|mientras|desde que)\s+|\s*;\s*`),
	lang.French:     regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:et|ainsi que|mais|avant de|avant|après|pendant que|depuis que)\s+|\s*;\s*`),
	lang.Italian:    regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:e|ed|ma|prima di|dopo|mentre)\s+|\s*;\s*`),
	lang.Portuguese: regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:e|mas|antes de|depois de|enquanto)\s+|\s*;\s*`),
	lang.Dutch:      regexp.MustCompile(`(?i)\s*(?:[,;]\s*|\s)(?:en|maar|voordat|nadat|terwijl)\s+|\s*;\s*`),
	lang.Chinese:    regexp.MustCompile(`以及|并且|而且|之前|之后|以后|和|及|，|；`),
	lang.Japanese:   regexp.MustCompile(`そして|および|の前に|の後に|と|、`),
}

// Clauses returns the parts of a compound question, each a query of its
// own: the occasions a comparison names (Query.Parts), else the clauses
// its joining words separate ("What did Anna do after the move and where
// does she work now?"). A clause without a name of the question gets them
// put in front, so that "where does she work now" still asks about Anna.
// Clauses without a content word are dropped; a question of fewer than two
// clauses is not compound and gets nil.
func Clauses(q *Query) []string {
	parts := q.Parts
	if len(parts) < 2 {
		re := clauseSplit[q.Lang]
		if re == nil {
			re = clauseSplit[lang.English]
		}
		parts = re.Split(strings.TrimSpace(q.Text), -1)
	}
	var out []string
	for _, p := range parts {
		p = strings.Trim(strings.TrimSpace(p), "?？.!,;:\"' ¿¡")
		if len(textsearch.TermsLang(q.Lang, p)) == 0 {
			continue
		}
		if missing := namesNotIn(q.Names, p); len(missing) > 0 && len(missing) == len(q.Names) {
			p = strings.Join(missing, " ") + " " + p
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// namesNotIn returns the names that text does not hold.
func namesNotIn(names []string, text string) []string {
	lower := strings.ToLower(text)
	var out []string
	for _, n := range names {
		if !strings.Contains(lower, strings.ToLower(n)) {
			out = append(out, n)
		}
	}
	return out
}

// Anchors returns up to n cue anchors of the first top candidates that
// the query does not already hold, most widely shared first (ties by
// first appearance): what the best hits are about, in their own words,
// for a rewritten query that reaches what the question's words miss.
func Anchors(q *Query, cs []*Candidate, top, n int) []string {
	have := map[string]bool{}
	for _, t := range textsearch.TermsLang(q.Lang, q.Text) {
		have[t] = true
	}
	count := map[string]int{}
	var order []string
	for _, c := range cs[:min(top, len(cs))] {
		seen := map[string]bool{}
		for _, cue := range c.Memory.Cues {
			key := strings.ToLower(strings.TrimSpace(cue))
			if key == "" || seen[key] || covered(have, q.Lang, key) {
				continue
			}
			seen[key] = true
			if count[key] == 0 {
				order = append(order, key)
			}
			count[key]++
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	return order[:min(n, len(order))]
}

// covered reports whether every term of cue is among have.
func covered(have map[string]bool, tag, cue string) bool {
	terms := textsearch.TermsLang(tag, cue)
	for _, t := range terms {
		if !have[t] {
			return false
		}
	}
	return true
}

// Link is a memory an Expander reached from a hit: its id, the hit it
// came from, the expander's name and the share of the hit's score it
// inherits.
type Link struct {
	ID, From, Via string
	Share         float64
}

// Expander follows what links the best hits of an agentic search to
// other memories: conversation neighbours and shared cues today, a graph
// of entities and relations when one exists. It only names memories; the
// search loads them itself within its scope and filter, so an expander
// cannot reach outside the caller's scope. It fails with the error of the
// store it reads.
type Expander interface {
	Name() string
	Expand(ctx context.Context, g *Gathering, from []*Candidate) ([]Link, error)
}

// Neighbours is the Expander of conversation neighbours: the turns just
// before and after each hit in its conversation (engram.MetaPrev,
// engram.MetaNext), each inheriting Share of the hit's score.
type Neighbours struct{ Share float64 }

// Name implements Expander.
func (Neighbours) Name() string { return ChannelNeighbor }

// Expand implements Expander; it reads nothing and never fails.
func (n Neighbours) Expand(_ context.Context, _ *Gathering, from []*Candidate) ([]Link, error) {
	var out []Link
	for _, c := range from {
		for _, id := range c.Memory.Neighbours() {
			out = append(out, Link{ID: id, From: c.Memory.ID, Via: ChannelNeighbor, Share: n.Share})
		}
	}
	return out, nil
}

// ChannelCue names the memories an agentic search reached by the cues of
// its best hits.
const ChannelCue = "cue"

// Cues is the Expander of shared cue anchors: for each hit, the memories
// of the scope whose text matches its cues best (full-text search within
// the gathering's scope and filter), at most Limit per hit, each
// inheriting Share of the hit's score.
type Cues struct {
	Share float64
	Limit int
}

// Name implements Expander.
func (Cues) Name() string { return ChannelCue }

// Expand implements Expander. It fails with the text index's error.
func (x Cues) Expand(ctx context.Context, g *Gathering, from []*Candidate) ([]Link, error) {
	var out []Link
	for _, c := range from {
		if len(c.Memory.Cues) == 0 {
			continue
		}
		hits, err := g.SearchText(ctx, strings.Join(c.Memory.Cues, " "), g.Filter, x.Limit+1)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if h.Memory.ID != c.Memory.ID {
				out = append(out, Link{ID: h.Memory.ID, From: c.Memory.ID, Via: ChannelCue, Share: x.Share})
			}
		}
	}
	return out, nil
}

// Pool merges the rankings of an agentic search's steps into one. A
// ranking enters with a weight: each candidate scores weight times its
// score relative to the ranking's first, made non-increasing down the
// ranking so the ranking's own order (Spread's too) is kept. A memory
// found again keeps its best score. The zero Pool is empty and ready.
type Pool struct {
	byID  map[string]*pooled
	order []*pooled
}

type pooled struct {
	c     *Candidate
	score float64
	seq   int
}

// AddRanking adds a step's ranking with weight and returns the ids whose
// score it raised.
func (p *Pool) AddRanking(cs []*Candidate, weight float64) []string {
	if len(cs) == 0 || cs[0].Score <= 0 {
		return nil
	}
	top, env := cs[0].Score, cs[0].Score
	var raised []string
	for _, c := range cs {
		env = min(env, c.Score)
		if p.Add(c, weight*env/top) {
			raised = append(raised, c.Memory.ID)
		}
	}
	return raised
}

// Add puts c in the pool with score, or raises its score to score, and
// reports whether it did either.
func (p *Pool) Add(c *Candidate, score float64) bool {
	if p.byID == nil {
		p.byID = map[string]*pooled{}
	}
	if e := p.byID[c.Memory.ID]; e != nil {
		if score <= e.score {
			return false
		}
		e.score = score
		return true
	}
	e := &pooled{c: c, score: score, seq: len(p.order)}
	p.byID[c.Memory.ID] = e
	p.order = append(p.order, e)
	return true
}

// Link pools the memories links reach, loaded through g within its scope
// and filter (a link to anything else is dropped), each with its share of
// the pooled score of the memory it was reached from, and returns the ids
// whose score it raised. It fails with the store's error.
func (p *Pool) Link(ctx context.Context, g *Gathering, links []Link) ([]string, error) {
	var ids []string
	for _, l := range links {
		if !slices.Contains(ids, l.ID) {
			ids = append(ids, l.ID)
		}
	}
	ms, err := g.Load(ctx, ids)
	if err != nil {
		return nil, err
	}
	var raised []string
	for _, l := range links {
		m := ms[l.ID]
		if m == nil {
			continue
		}
		c := &Candidate{Memory: m}
		if e := p.byID[l.ID]; e != nil {
			c = e.c
		}
		score := l.Share * p.Score(l.From)
		if p.Add(c, score) {
			c.Ranks = append(c.Ranks, engram.ChannelHit{Channel: l.Via, Rank: 1, Score: score})
			raised = append(raised, l.ID)
		}
	}
	return raised, nil
}

// Score returns the pooled score of id, 0 when it is not in the pool.
func (p *Pool) Score(id string) float64 {
	if e := p.byID[id]; e != nil {
		return e.score
	}
	return 0
}

// Has reports whether id is in the pool.
func (p *Pool) Has(id string) bool { return p.byID[id] != nil }

// Len is the number of memories in the pool.
func (p *Pool) Len() int { return len(p.order) }

// Ranked returns the pooled candidates best first (ties in order of first
// finding), each with its pooled score as Score.
func (p *Pool) Ranked() []*Candidate {
	es := slices.Clone(p.order)
	sort.SliceStable(es, func(i, j int) bool { return es[i].score > es[j].score })
	out := make([]*Candidate, len(es))
	for i, e := range es {
		e.c.Score = e.score
		out[i] = e.c
	}
	return out
}

// Gain returns the share of the summed score of the first k of ranked
// that the memories of fresh hold: how much a step changed what a reader
// would see first.
func Gain(ranked []*Candidate, fresh map[string]bool, k int) float64 {
	var all, got float64
	for _, c := range ranked[:min(k, len(ranked))] {
		all += c.Score
		if fresh[c.Memory.ID] {
			got += c.Score
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

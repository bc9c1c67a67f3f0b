package retrieval

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
)

// ChannelGraph is the entity-graph channel (see Graph).
const ChannelGraph = "graph"

// Graph is the channel of the entity graph: the entities the query names
// (its names and content words, looked up by normalised name and resolved
// fuzzily among the entities sharing a word), the entities related to them
// within Hops relations, and the memories that mention any of them. An
// entity's activation comes from the query's entities through relations
// weighted by their strength (Walk); a memory scores the sum of the
// activations of the entities it mentions, each shared by the entity's
// mentions (a speaker named in every turn says little about any one), with
// a mild preference for the more recent. It finds what shares no word with
// the query but names something linked to what the query names.
type Graph struct {
	// Walk spreads activation over the local subgraph: SpreadActivation
	// (the default, when nil) or PageRank.
	Walk func(seeds map[string]float64, edges []Edge) map[string]float64
	// Hops is how many relations from the query's entities are followed
	// (0 means 2).
	Hops int
}

// Edge is one weighted, undirected link of the local subgraph.
type Edge struct {
	A, B   string
	Weight float64
}

// Graph channel limits: the entities taken from the query and from each
// hop, the relations read per hop, and the entities whose memories are
// read.
const (
	graphSeeds     = 16
	graphFrontier  = 24
	graphRelations = 200
	graphEntities  = 32 // entities whose memories are read
)

// GraphHub is the most mentions an entity may have and still lead the
// graph channel anywhere: one named in more memories (the speakers of a
// conversation, the user) is linked to nearly everything, and its memories
// and neighbours say nothing about any one question. It is neither a seed
// nor are its memories read (the walk still passes through it).
const GraphHub = 50

// Name implements Channel.
func (Graph) Name() string { return ChannelGraph }

// GraphWalk returns the walk named name: "spread" (SpreadActivation, the
// default walk) or "pagerank" (PageRank); false for any other name.
func GraphWalk(name string) (func(seeds map[string]float64, edges []Edge) map[string]float64, bool) {
	switch name {
	case "spread":
		return SpreadActivation, true
	case "pagerank":
		return PageRank, true
	}
	return nil, false
}

// Prepare implements Channel: the graph channel has nothing to prepare.
func (c Graph) Prepare(context.Context, *Gathering) (Gatherer, error) { return c, nil }

// Prefetch implements Gatherer; the graph channel has nothing to
// prefetch.
func (Graph) Prefetch(*Gathering) {}

// Gather implements Gatherer, reading the entity graph of g.Reader; it
// fails with the store's error.
func (c Graph) Gather(ctx context.Context, g *Gathering) ([]Find, error) {
	gr := graphOf(g)
	s := engram.EntityScope(g.Scope)
	seeds, err := querySeeds(ctx, gr, s, g.Query)
	if err != nil || len(seeds) == 0 {
		return nil, err
	}
	edges, err := c.subgraph(ctx, gr, s, seeds)
	if err != nil {
		return nil, err
	}
	walk := c.Walk
	if walk == nil {
		walk = SpreadActivation
	}
	act := walk(seeds, edges)
	scores, err := memoryScores(ctx, gr, s, act)
	if err != nil {
		return nil, err
	}
	return scoredFinds(ctx, g, scores)
}

// querySeeds returns the entities the query names, each weighted by how
// rare it is (1/log2(2+mentions)), keyed by id.
func querySeeds(ctx context.Context, gr graphReads, s engram.Scope, q *Query) (map[string]float64, error) {
	keys, names := queryKeys(q)
	if len(keys) == 0 {
		return nil, nil
	}
	found, err := gr.FindEntities(ctx, s, keys)
	if err != nil {
		return nil, err
	}
	if fuzzy, err := resolveNames(ctx, gr, s, names, found); err != nil {
		return nil, err
	} else {
		found = append(found, fuzzy...)
	}
	seeds := map[string]float64{}
	for i := range found {
		e := &found[i]
		if e.Status != "" && e.Status != engram.EntityActive || e.Mentions > GraphHub {
			continue
		}
		seeds[e.ID] = 1 / math.Log2(2+float64(e.Mentions))
	}
	return topN(seeds, graphSeeds), nil
}

// queryKeys returns the normalised keys to look the query's entities up
// by (its names and their words, its content words and their pairs) and
// the names to resolve fuzzily.
func queryKeys(q *Query) (keys []string, names []entity.Candidate) {
	add := func(k string) {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, n := range q.Names {
		// A name in a question is most often a person's: taken for one,
		// it may stand for a full name by a given name alone.
		c := entity.Candidate{Name: n, Type: engram.EntityPerson}
		add(engram.NormalizeName(n))
		for _, t := range entity.Tokens(c) {
			add(t) // each word, transliterated ("juergen" as "jurgen") and in full ("bob" as "robert")
		}
		names = append(names, c)
	}
	for i, t := range q.Terms {
		add(engram.NormalizeName(t))
		if i > 0 {
			add(engram.NormalizeName(q.Terms[i-1] + " " + t))
		}
	}
	return keys, names
}

// resolveNames returns the entities that the query's names name by a
// fuzzy rule (a short form, a given name alone, a transliteration), among
// those sharing a word with them, leaving out those already found.
func resolveNames(ctx context.Context, gr graphReads, s engram.Scope, names []entity.Candidate, found []engram.Entity) ([]engram.Entity, error) {
	var toks []string
	for _, n := range names {
		toks = append(toks, entity.Tokens(n)...)
	}
	if len(toks) == 0 {
		return nil, nil
	}
	cands, err := gr.EntitiesByToken(ctx, s, toks, 100)
	if err != nil {
		return nil, err
	}
	var out []engram.Entity
	for _, n := range names {
		e, _ := entity.Resolve(n, cands)
		if e != nil && !slices.ContainsFunc(found, func(f engram.Entity) bool { return f.ID == e.ID }) &&
			!slices.ContainsFunc(out, func(f engram.Entity) bool { return f.ID == e.ID }) {
			out = append(out, *e)
		}
	}
	return out, nil
}

// subgraph reads the current relations within Hops of the seeds, the
// strongest first, and returns them as edges.
func (c Graph) subgraph(ctx context.Context, gr graphReads, s engram.Scope, seeds map[string]float64) ([]Edge, error) {
	hops := c.Hops
	if hops <= 0 {
		hops = 2
	}
	var edges []Edge
	seen := map[string]bool{}
	frontier := slices.Collect(func(yield func(string) bool) {
		for id := range seeds {
			if !yield(id) {
				return
			}
		}
	})
	reached := map[string]bool{}
	for _, id := range frontier {
		reached[id] = true
	}
	for range hops {
		if len(frontier) == 0 {
			break
		}
		slices.Sort(frontier)
		rels, err := gr.Relations(ctx, s, frontier, engram.RelationFilter{NoEvidence: true, Limit: graphRelations})
		if err != nil {
			return nil, err
		}
		next := map[string]float64{}
		for _, r := range rels {
			if seen[r.ID] || r.Weight <= 0 {
				continue
			}
			seen[r.ID] = true
			edges = append(edges, Edge{A: r.Source, B: r.Target, Weight: r.Weight})
			for _, end := range []string{r.Source, r.Target} {
				if !reached[end] {
					next[end] += r.Weight
				}
			}
		}
		frontier = nil
		for id := range topN(next, graphFrontier) {
			reached[id] = true
			frontier = append(frontier, id)
		}
	}
	return edges, nil
}

// PageRank is personalised PageRank over the edges, restarting at the
// seeds (weighted) with probability 0.5, for a few iterations: enough on a
// subgraph of two hops. Each node passes its rank to its neighbours in
// proportion to the edges' weights.
func PageRank(seeds map[string]float64, edges []Edge) map[string]float64 {
	const restart, iterations = 0.5, 8
	p := normalized(seeds)
	out := map[string]float64{}
	for _, e := range edges {
		out[e.A] += e.Weight
		out[e.B] += e.Weight
	}
	r := clone(p)
	for range iterations {
		next := map[string]float64{}
		for id, w := range p {
			next[id] = restart * w
		}
		for _, e := range edges {
			next[e.B] += (1 - restart) * r[e.A] * e.Weight / out[e.A]
			next[e.A] += (1 - restart) * r[e.B] * e.Weight / out[e.B]
		}
		// Rank on nodes without edges stays with them.
		for id, v := range r {
			if out[id] == 0 {
				next[id] += (1 - restart) * v
			}
		}
		r = next
	}
	return r
}

// SpreadActivation is spreading activation over the edges: the seeds start with
// their weights; in each of two steps every node passes on a decayed share
// of what it received in the step before, split among its neighbours by
// the edges' weights. A node keeps the sum of what reached it.
func SpreadActivation(seeds map[string]float64, edges []Edge) map[string]float64 {
	const decay, steps = 0.5, 2
	out := map[string]float64{}
	for _, e := range edges {
		out[e.A] += e.Weight
		out[e.B] += e.Weight
	}
	act := normalized(seeds)
	wave := clone(act)
	for range steps {
		next := map[string]float64{}
		for _, e := range edges {
			next[e.B] += decay * wave[e.A] * e.Weight / out[e.A]
			next[e.A] += decay * wave[e.B] * e.Weight / out[e.B]
		}
		for id, v := range next {
			act[id] += v
		}
		wave = next
	}
	return act
}

// memoryScores reads the mentions of the most activated entities (but
// hubs, see GraphHub) and
// scores each memory by the activation of the entities it names, each
// divided by the square root of the entity's mentions read, times a
// recency factor between 0.8 and 1 relative to the newest mention read.
func memoryScores(ctx context.Context, gr graphReads, s engram.Scope, act map[string]float64) (map[string]float64, error) {
	top := topN(act, graphEntities)
	scores := map[string]float64{}
	at := map[string]time.Time{}
	var newest, oldest time.Time
	for id, a := range top {
		ms, err := gr.EntityMentions(ctx, s, []string{id}, GraphHub+1)
		if err != nil {
			return nil, err
		}
		if len(ms) > GraphHub {
			continue
		}
		share := a / math.Sqrt(float64(max(len(ms), 1)))
		for _, m := range ms {
			scores[m.MemoryID] += share
			at[m.MemoryID] = m.At
			if newest.IsZero() || m.At.After(newest) {
				newest = m.At
			}
			if oldest.IsZero() || m.At.Before(oldest) {
				oldest = m.At
			}
		}
	}
	if span := newest.Sub(oldest); span > 0 {
		for id := range scores {
			scores[id] *= 0.8 + 0.2*(1-float64(newest.Sub(at[id]))/float64(span))
		}
	}
	return scores, nil
}

// scoredFinds loads the best scored memories that the scope holds and the
// caller's filter keeps, at most g.Pool, and ranks them in order of score.
// It fails with the store's error.
func scoredFinds(ctx context.Context, g *Gathering, scores map[string]float64) ([]Find, error) {
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(scores[b], scores[a]), strings.Compare(a, b))
	})
	ids = ids[:min(len(ids), 2*g.Pool)]
	ms, err := g.Load(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []Find
	for _, id := range ids {
		if m := ms[id]; m != nil && len(out) < g.Pool {
			out = append(out, Find{Memory: m, Rank: len(out) + 1, Score: scores[id]})
		}
	}
	return out, nil
}

// topN returns the n entries of w with the highest values (ties by key).
func topN(w map[string]float64, n int) map[string]float64 {
	if len(w) <= n {
		return w
	}
	ids := make([]string, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Or(cmp.Compare(w[b], w[a]), strings.Compare(a, b)) })
	out := make(map[string]float64, n)
	for _, id := range ids[:n] {
		out[id] = w[id]
	}
	return out
}

// normalized returns w scaled to sum 1.
func normalized(w map[string]float64) map[string]float64 {
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	out := make(map[string]float64, len(w))
	for id, v := range w {
		if sum > 0 {
			out[id] = v / sum
		}
	}
	return out
}

func clone(w map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(w))
	for k, v := range w {
		out[k] = v
	}
	return out
}

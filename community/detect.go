package community

import (
	"cmp"
	"slices"

	"github.com/engramhq/engram"
)

// maxRounds bounds label propagation; it usually settles in a handful.
const maxRounds = 30

// Graph is an undirected weighted graph over entity ids.
type Graph struct {
	adj map[string][]neighbour // sorted by id
}

type neighbour struct {
	id string
	w  float64
}

// NewGraph returns the graph of edges (an edge listed twice adds up;
// self-loops and weights at or below zero are ignored).
func NewGraph(edges []engram.Edge) *Graph {
	w := map[[2]string]float64{}
	for _, e := range edges {
		if e.Source == e.Target || e.Weight <= 0 {
			continue
		}
		a, b := min(e.Source, e.Target), max(e.Source, e.Target)
		w[[2]string{a, b}] += e.Weight
	}
	g := &Graph{adj: map[string][]neighbour{}}
	for p, x := range w {
		g.adj[p[0]] = append(g.adj[p[0]], neighbour{p[1], x})
		g.adj[p[1]] = append(g.adj[p[1]], neighbour{p[0], x})
	}
	for id := range g.adj {
		slices.SortFunc(g.adj[id], func(a, b neighbour) int { return cmp.Compare(a.id, b.id) })
	}
	return g
}

// Nodes returns the ids of the graph, sorted.
func (g *Graph) Nodes() []string {
	out := make([]string, 0, len(g.adj))
	for id := range g.adj {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Degree returns the summed weight of id's edges to the members of in
// (every edge when in is nil).
func (g *Graph) Degree(id string, in map[string]bool) float64 {
	var d float64
	for _, n := range g.adj[id] {
		if in == nil || in[n.id] {
			d += n.w
		}
	}
	return d
}

// Components returns the connected components, each sorted, ordered by
// their first id.
func (g *Graph) Components() [][]string {
	seen := map[string]bool{}
	var out [][]string
	for _, start := range g.Nodes() {
		if seen[start] {
			continue
		}
		comp := []string{start}
		seen[start] = true
		for i := 0; i < len(comp); i++ {
			for _, n := range g.adj[comp[i]] {
				if !seen[n.id] {
					seen[n.id] = true
					comp = append(comp, n.id)
				}
			}
		}
		slices.Sort(comp)
		out = append(out, comp)
	}
	return out
}

// Detect returns the communities of one component (its sorted ids) by
// label propagation: every node starts with its own label and, visiting
// nodes in id order, takes the label its neighbours' edges weigh most,
// keeping its own on a tie and else taking the smallest; a label held by
// maxSize nodes takes no more. Groups of one are dropped; each group is
// sorted and the groups are ordered by their first id.
func (g *Graph) Detect(comp []string, maxSize int) [][]string {
	label := make(map[string]string, len(comp))
	size := make(map[string]int, len(comp))
	for _, id := range comp {
		label[id], size[id] = id, 1
	}
	score := map[string]float64{}
	for range maxRounds {
		changed := false
		for _, id := range comp {
			clear(score)
			for _, n := range g.adj[id] {
				score[label[n.id]] += n.w
			}
			cur := label[id]
			best, bestScore := cur, score[cur]
			for _, l := range sortedKeys(score) {
				if l == cur || size[l] >= maxSize {
					continue
				}
				if s := score[l]; s > bestScore { // in id order: the smallest of equals wins
					best, bestScore = l, s
				}
			}
			if best != cur {
				size[cur]--
				size[best]++
				label[id] = best
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	groups := map[string][]string{}
	for _, id := range comp { // sorted, so each group is too
		groups[label[id]] = append(groups[label[id]], id)
	}
	var out [][]string
	for _, grp := range groups {
		if len(grp) > 1 {
			out = append(out, grp)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return cmp.Compare(a[0], b[0]) })
	return out
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

package retrieval

import (
	"github.com/engramhq/engram"
)

// NeighbourIDs returns the ids of the memories linked as the neighbours of
// the first top candidates (see formation.Former.Link), each once, that are
// not candidates already.
func NeighbourIDs(cs []*Candidate, top int) []string {
	have := make(map[string]bool, len(cs))
	for _, c := range cs {
		have[c.Memory.ID] = true
	}
	var out []string
	for i := 0; i < top && i < len(cs); i++ {
		for _, id := range cs[i].Memory.Neighbours() {
			if !have[id] {
				have[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// Expand returns the ranked candidates with the neighbours of each of the
// first top ones placed right after it (the earlier neighbour first), unless
// they already rank higher. A neighbour taken from further down the ranking
// moves up; one that was no candidate comes from extra, the memories
// NeighbourIDs asked for. A moved or added neighbour scores decay times its
// hit's score, at least its own, and gains a ChannelNeighbor rank: the rank
// of the hit that brought it.
func Expand(cs []*Candidate, extra []engram.Memory, top int, decay float64) []*Candidate {
	if top <= 0 || len(cs) == 0 {
		return cs
	}
	byID := make(map[string]*Candidate, len(cs)+len(extra))
	for _, c := range cs {
		byID[c.Memory.ID] = c
	}
	for i := range extra {
		if byID[extra[i].ID] == nil {
			byID[extra[i].ID] = &Candidate{Memory: extra[i], Factors: map[string]float64{}}
		}
	}
	out := make([]*Candidate, 0, len(cs)+len(extra))
	placed := make(map[string]bool, len(cs)+len(extra))
	for i, c := range cs {
		if placed[c.Memory.ID] {
			continue
		}
		out = append(out, c)
		placed[c.Memory.ID] = true
		if i >= top {
			continue
		}
		for _, id := range c.Memory.Neighbours() {
			n := byID[id]
			if n == nil || placed[id] {
				continue
			}
			s := c.Score * decay
			if n.Score < s {
				n.Score = s
				if n.Factors != nil {
					n.Factors[FactorFinal] = s
				}
			}
			n.Ranks = append(n.Ranks, engram.ChannelHit{Channel: ChannelNeighbor, Rank: len(out), Score: s})
			out = append(out, n)
			placed[id] = true
		}
	}
	// Neighbours fetched for hits that were themselves placed as
	// neighbours are left out: expansion goes one step.
	return out
}

// Dedup drops every episodic candidate whose cited episodes are all cited
// by candidates ranked above it: it would add no source a reader has not
// seen. Candidates without sources are kept, and so are the other kinds: a
// fact or preference distilled from an episode says what the episode's
// words do not.
func Dedup(cs []*Candidate) []*Candidate {
	seen := map[string]bool{}
	out := cs[:0]
	for _, c := range cs {
		src := c.Memory.Sources
		covered := len(src) > 0 && c.Memory.Kind == engram.KindEpisodic
		for _, s := range src {
			if !seen[s] {
				covered = false
				break
			}
		}
		if covered {
			continue
		}
		for _, s := range src {
			seen[s] = true
		}
		out = append(out, c)
	}
	return out
}

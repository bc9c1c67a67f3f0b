package retrieval

import (
	"maps"
	"math"
	"slices"
)

// verdict is what one channel said of the candidates, as z-score fusion
// reads it: the spread of the scores of its finds and how much being found
// at all tells among the candidates.
type verdict struct {
	n        int     // how many candidates the channel found
	mean, sd float64 // of the scores of its finds
	lo, hi   float64 // the lowest and the best score of its finds
	// found is the channel's found credit: how many standard deviations
	// a find stands above a miss when "found" is the only thing said,
	// that is the z-score of a 0/1 verdict over the candidate pool
	// (1/sqrt(p(1-p)) for a share p found); 0 when it found every
	// candidate, which says nothing. It is capped at the range, from
	// lowest to best, of the z-scores of the channel with the widest one
	// among those whose finds spread: a lone find is credited as a best
	// find is, not more (a lone find among a hundred candidates would
	// otherwise stand ten deviations above the rest, and its neighbours'
	// and conversation's shares of its score with it).
	found float64
	// top is the credit of the best find (and of those tied with it): its
	// z-score above the lowest find's, or the found credit when larger.
	top float64
}

// verdicts reads each channel's verdict over cs. A channel's scores are
// summed in sorted order, so the verdict (and the fusion) does not depend
// on the order the candidates come in, to the last bit.
func verdicts(cs []*Candidate) map[string]*verdict {
	scores := map[string][]float64{}
	for _, c := range cs {
		for _, r := range c.Ranks {
			scores[r.Channel] = append(scores[r.Channel], r.Score)
		}
	}
	out := make(map[string]*verdict, len(scores))
	for ch, ss := range scores {
		slices.Sort(ss)
		v := &verdict{n: len(ss), lo: ss[0], hi: ss[len(ss)-1]}
		var sum, sq float64
		for _, s := range ss {
			sum += s
		}
		v.mean = sum / float64(v.n)
		for _, s := range ss {
			sq += (s - v.mean) * (s - v.mean)
		}
		if v.lo < v.hi { // a tie's mean can miss its value in the last bit
			v.sd = math.Sqrt(sq / float64(v.n))
		}
		if pool := len(cs); v.n < pool {
			v.found = float64(pool) / math.Sqrt(float64(v.n)*float64(pool-v.n))
		}
		out[ch] = v
	}
	// A best find counts as much as the best find of a channel with
	// enough finds that spread (the clearest of them), when being found
	// says more.
	ref := 0.0
	for _, v := range out {
		if v.spread() && v.n >= MinZPool {
			ref = max(ref, v.z(v.hi)-v.z(v.lo))
		}
	}
	for _, v := range out {
		if ref > 0 {
			v.found = min(v.found, ref)
		}
		v.top = max(v.z(v.hi)-v.z(v.lo), v.found)
	}
	return out
}

// z is the z-score of score s among the channel's finds; 0 without spread.
func (v *verdict) z(s float64) float64 {
	if v.sd == 0 {
		return 0
	}
	return (s - v.mean) / v.sd
}

// spread reports whether the channel's finds differ in score, so that
// z-scores say how they compare.
func (v *verdict) spread() bool { return v.sd > 0 }

// miss is what the channel gives a candidate it did not find: what its
// lowest find gets.
func (v *verdict) miss() float64 { return v.z(v.lo) }

// credit is what the channel gives a candidate it found with score s: its
// z-score among the channel's finds, and lift, what the best find (and any
// tied with it) gets on top to stand at least the found credit above a
// miss; without spread (one find, or all tied) every find gets the found
// credit whole, all of it lift.
func (v *verdict) credit(s float64) (z, lift float64) {
	if s == v.hi {
		return v.z(s), v.miss() + v.top - v.z(s)
	}
	return v.z(s), 0
}

// zFuse sums each channel's credit for each candidate, weighted (see
// verdict.credit): standardised scores, so that, unlike ranks, a
// channel's best match keeps how far it stands out from the rest, and a
// found credit, so that a channel's only find, its tied finds and the
// best of a few count as a channel's best find does, whatever their
// spread. A lone exact match of a rare word in the full text thus ranks
// above the dense channel's best guess. Fused holds the z-scores, shifted
// to stay positive for the multiplicative boosts; the found credits' part
// above them is kept apart (Candidate.lift) for Fuse to add once the
// neighbour and conversation shares are in.
func zFuse(cs []*Candidate, cfg Config) {
	st := verdicts(cs)
	// Channels are summed in one fixed order: floating-point addition is
	// not associative, and map order would make equal rankings differ in
	// their last bits from run to run.
	chans := slices.Sorted(maps.Keys(st))
	lowest := math.Inf(1)
	for _, c := range cs {
		c.Fused, c.lift = 0, 0
		for _, ch := range chans {
			v := st[ch]
			s, lift := v.miss(), 0.0
			for _, r := range c.Ranks {
				if r.Channel == ch {
					s, lift = v.credit(r.Score)
					break
				}
			}
			w := c.weight(cfg, ch)
			c.Fused += w * s
			c.lift += w * lift
		}
		lowest = math.Min(lowest, c.Fused)
	}
	for _, c := range cs {
		c.Fused -= lowest - 1e-3
	}
}

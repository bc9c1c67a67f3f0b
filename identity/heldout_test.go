package identity_test

import (
	"slices"
	"testing"

	"github.com/engramhq/engram/identity"
)

// heldOutSeeds were chosen before any change to the clustering for issue
// 19 and were never looked at while tuning: tuning uses seeds 1 and 2
// only (tuneSeed, seenSeed).
var heldOutSeeds = []uint64{1009, 2027, 3041, 4057, 5077, 6089, 7103, 8117, 9133, 10151, 11161, 12163}

// heldOutSpecs are the fixture shapes of the held-out suite: the issue's
// fixture, then harder ones, each alone and all together.
var heldOutSpecs = []spec{
	base,
	{name: "crowd", people: 60, sigmaLo: 0.3, sigmaHi: 1.2, countLo: 8, countHi: 40},
	{name: "noisy", people: 24, sigmaLo: 0.5, sigmaHi: 1.5, countLo: 8, countHi: 40},
	{name: "unbalanced", people: 24, sigmaLo: 0.3, sigmaHi: 1.2, countLo: 2, countHi: 150, skewed: true},
	{name: "bursty", people: 24, sigmaLo: 0.3, sigmaHi: 1.2, countLo: 8, countHi: 40, bursty: true},
	{name: "hard", people: 60, sigmaLo: 0.5, sigmaHi: 1.5, countLo: 2, countHi: 150, skewed: true, bursty: true},
}

// summary is the min and median of each score over a set of seeds.
type summary struct{ minPurity, medPurity, minPrecision, medPrecision, minRecall, medRecall float64 }

func summarize(ss []scores) summary {
	col := func(f func(scores) float64) (float64, float64) {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		n := len(v)
		return v[0], (v[(n-1)/2] + v[n/2]) / 2
	}
	var s summary
	s.minPurity, s.medPurity = col(func(s scores) float64 { return s.purity })
	s.minPrecision, s.medPrecision = col(func(s scores) float64 { return s.precision })
	s.minRecall, s.medRecall = col(func(s scores) float64 { return s.recall })
	return s
}

// TestHeldOutSeeds runs Default on every held-out seed of every spec and
// logs min and median purity, pairwise precision and recall (go test -v
// -run TestHeldOutSeeds ./identity/). Every shape must reach the bar of
// issue 19 on every seed, purity >= 0.95, with median pairwise recall >=
// 0.8 so that one identity per observation cannot pass; on the issue's
// fixture (base) recall must be >= 0.9 on every seed. Under the race
// detector (make test) base runs on the first three seeds, the other
// shapes on the first, and hard, which costs as much as all the rest,
// not at all.
func TestHeldOutSeeds(t *testing.T) {
	for _, sp := range heldOutSpecs {
		t.Run(sp.name, func(t *testing.T) {
			seeds := heldOutSeeds
			if raceEnabled { // see race_on_test.go
				switch {
				case sp.name == base.name:
					seeds = seeds[:3]
				case sp.name == "hard":
					t.Skip("the hardest shape runs without -race: go test -run TestHeldOutSeeds ./identity/")
				default:
					seeds = seeds[:1]
				}
			}
			var ss []scores
			for _, seed := range seeds {
				os := generate(seed, sp)
				ss = append(ss, score(os, cluster(identity.Default, os)))
			}
			sm := summarize(ss)
			t.Logf("%-10s purity min %.4f med %.4f  precision min %.4f med %.4f  recall min %.4f med %.4f",
				sp.name, sm.minPurity, sm.medPurity, sm.minPrecision, sm.medPrecision, sm.minRecall, sm.medRecall)
			if sm.minPurity < 0.95 {
				t.Errorf("min purity %.4f, want >= 0.95 on every seed", sm.minPurity)
			}
			if sp.name == base.name && sm.minRecall < 0.9 {
				t.Errorf("on the issue's fixture, min recall %.4f, want >= 0.9 on every seed", sm.minRecall)
			}
			if sm.medRecall < 0.8 {
				t.Errorf("median recall %.4f, want >= 0.8", sm.medRecall)
			}
		})
	}
}

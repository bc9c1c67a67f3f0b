package identity_test

import (
	"math/rand/v2"
	"testing"

	"github.com/engramhq/engram/identity"
)

// fixed is the configuration before issue 19 (fixed thresholds), the
// baseline the benchmarks compare Default with.
var fixed = identity.Config{Assign: 0.45, Merge: 0.7}

// BenchmarkPlace places one observation among 1000 identities of 128
// values (the most the engine clusters per modality), under fixed and
// under Default (go test -run '^$' -bench . ./identity/).
func BenchmarkPlace(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	cs := make([]identity.Cluster, 1000)
	for i := range cs {
		for k := 0; k < 5; k++ {
			cs[i].Add(identity.Unit(randVec(r, 128)))
		}
	}
	u := identity.Unit(randVec(r, 128))
	for _, c := range []struct {
		name string
		cfg  identity.Config
	}{{"fixed", fixed}, {"default", identity.Default}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.cfg.Place(cs, u)
			}
		})
	}
}

// BenchmarkCluster runs the whole clustering, placements and merge passes
// after every batch, over the fixture (seed 1) and the crowded,
// noisy, unbalanced one, and reports the cost per observation.
func BenchmarkCluster(b *testing.B) {
	for _, sp := range []spec{base, heldOutSpecs[5]} {
		os := generate(tuneSeed, sp)
		for _, c := range []struct {
			name string
			cfg  identity.Config
		}{{"fixed", fixed}, {"default", identity.Default}} {
			b.Run(sp.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					cluster(c.cfg, os)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(os)), "ns/obs")
			})
		}
	}
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

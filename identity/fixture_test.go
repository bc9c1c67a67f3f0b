package identity_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/engramhq/engram/identity"
)

// The synthetic fixture: for each of two modalities (face, 128 values;
// voice, 192) people identities, each a unit centre with its own noise
// level sigma in [0.3, 1.2] (an observation is the centre plus Gaussian
// noise of expected length sigma), 8 to 40 observations each, in a
// shuffled order. As in real embedding models, centres are not
// orthogonal: each leans towards the modality's common direction, so two
// people's centres have a cosine similarity of about 0.3 on average. Seeds tuneSeed and heldOutSeed give the tuning and
// the held-out fixture.
const (
	people      = 24
	tuneSeed    = 1
	heldOutSeed = 3
	// seenSeed was the first held-out fixture; the first Default (Merge
	// 0.6) failed it, which led to the merge margin rule, so it no longer
	// counts as held out and is a tuning fixture now.
	seenSeed  = 2
	batchSize = 32
)

// tuneSpecs are the shapes of the tuning fixtures: those of the held-out
// suite that run in seconds.
var tuneSpecs = []spec{base, heldOutSpecs[3], heldOutSpecs[4]}

type obs struct {
	modality string
	truth    int // the true identity, unique across modalities
	vec      []float32
}

func fixture(seed uint64) []obs { return generate(seed, base) }

// spec is the shape of a synthetic fixture. base is the fixture described
// above; the held-out suite (heldout_test.go) varies it.
type spec struct {
	name             string
	people           int     // identities per modality
	sigmaLo, sigmaHi float64 // each identity's noise level is drawn from this range
	countLo, countHi int     // each identity's number of observations
	skewed           bool    // counts heavy-tailed between countLo and countHi, most near countLo
	bursty           bool    // observations arrive in runs of 1 to 8 of one identity, runs interleaved
}

var base = spec{name: "base", people: people, sigmaLo: 0.3, sigmaHi: 1.2, countLo: 8, countHi: 40}

func generate(seed uint64, sp spec) []obs {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var runs [][]obs
	truth := 0
	for _, m := range []struct {
		name string
		dim  int
	}{{"face", 128}, {"voice", 192}} {
		common := make([]float64, m.dim)
		for i := range common {
			common[i] = r.NormFloat64()
		}
		for p := 0; p < sp.people; p++ {
			centre := make([]float32, m.dim)
			for i := range centre {
				centre[i] = float32(0.65*common[i] + r.NormFloat64())
			}
			centre = identity.Unit(centre)
			sigma := sp.sigmaLo + (sp.sigmaHi-sp.sigmaLo)*r.Float64()
			n := sp.countLo + r.IntN(sp.countHi-sp.countLo+1)
			if sp.skewed {
				f := r.Float64()
				n = sp.countLo + int(float64(sp.countHi-sp.countLo)*f*f*f)
			}
			var run []obs
			for k := 0; k < n; k++ {
				v := make([]float32, m.dim)
				for i := range v {
					v[i] = centre[i] + float32(r.NormFloat64()*sigma/math.Sqrt(float64(m.dim)))
				}
				run = append(run, obs{modality: m.name, truth: truth, vec: v})
				if !sp.bursty || len(run) == 1+r.IntN(8) || k == n-1 {
					runs, run = append(runs, run), nil
				}
			}
			truth++
		}
	}
	r.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	var out []obs
	for _, run := range runs {
		out = append(out, run...)
	}
	return out
}

// cluster runs the clustering as the engine does: online assignment per
// modality, a merge pass (repeated until it finds nothing) after every
// batch. It returns each observation's cluster.
func cluster(cfg identity.Config, os []obs) []int {
	byMod := map[string][]identity.Cluster{}
	ids := map[string][]int{} // per modality: cluster index → global id
	next := 0
	alias := map[int]int{} // merged global id → the id it went into
	label := make([]int, len(os))
	resolve := func(id int) int {
		for {
			to, ok := alias[id]
			if !ok {
				return id
			}
			id = to
		}
	}
	for start := 0; start < len(os); start += batchSize {
		end := min(start+batchSize, len(os))
		for i := start; i < end; i++ {
			o := os[i]
			u := identity.Unit(o.vec)
			cs := byMod[o.modality]
			j := cfg.Place(cs, u)
			if j < 0 {
				cs = append(cs, identity.Cluster{})
				ids[o.modality] = append(ids[o.modality], next)
				next++
				j = len(cs) - 1
			}
			cs[j].Add(u)
			byMod[o.modality] = cs
			label[i] = ids[o.modality][j]
		}
		for m, cs := range byMod {
			for {
				ms := cfg.Merges(cs)
				if len(ms) == 0 {
					break
				}
				gone := map[int]bool{}
				for _, mg := range ms {
					cs[mg.Into].Absorb(cs[mg.From])
					alias[ids[m][mg.From]] = ids[m][mg.Into]
					gone[mg.From] = true
				}
				var kept []identity.Cluster
				var keptIDs []int
				for k := range cs {
					if !gone[k] {
						kept, keptIDs = append(kept, cs[k]), append(keptIDs, ids[m][k])
					}
				}
				cs, ids[m] = kept, keptIDs
			}
			byMod[m] = cs
		}
	}
	for i := range label {
		label[i] = resolve(label[i])
	}
	return label
}

type scores struct {
	purity, precision, recall float64
	clusters, truths          int
}

func (s scores) String() string {
	return fmt.Sprintf("purity %.4f  pairwise precision %.4f recall %.4f  clusters %d (true %d)",
		s.purity, s.precision, s.recall, s.clusters, s.truths)
}

// score returns purity (each cluster counted as its majority identity)
// and pairwise precision and recall (over pairs of observations: same
// cluster vs same identity).
func score(os []obs, label []int) scores {
	counts := map[int]map[int]int{} // cluster → truth → n
	truths := map[int]int{}
	for i, o := range os {
		if counts[label[i]] == nil {
			counts[label[i]] = map[int]int{}
		}
		counts[label[i]][o.truth]++
		truths[o.truth]++
	}
	var majority, tp, predPairs, truePairs float64
	for _, byTruth := range counts {
		best, size := 0, 0
		for _, n := range byTruth {
			best = max(best, n)
			size += n
			tp += float64(n*(n-1)) / 2
		}
		majority += float64(best)
		predPairs += float64(size*(size-1)) / 2
	}
	for _, n := range truths {
		truePairs += float64(n*(n-1)) / 2
	}
	return scores{purity: majority / float64(len(os)), precision: tp / predPairs, recall: tp / truePairs,
		clusters: len(counts), truths: len(truths)}
}

// TestTune sweeps the thresholds on the tuning fixtures (seeds tuneSeed
// and seenSeed, in the shapes of tuneSpecs) and logs each configuration's
// scores (go test -v -run TestTune ./identity/). Default is the one with
// the best mean pairwise recall among those whose purity is at least 0.99
// on every tuning fixture and whose Merge keeps the margin of
// TestMergeMargin; it checks that, within 0.01. The sweep takes minutes
// under the race detector, so it runs only without it and without -short.
func TestTune(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("the tuning sweep runs without -race and -short")
	}
	var fixtures [][]obs
	for _, sp := range tuneSpecs {
		for _, seed := range []uint64{tuneSeed, seenSeed} {
			fixtures = append(fixtures, generate(seed, sp))
		}
	}
	margin := closestStrangers(fixture(tuneSeed)) + 0.2
	run := func(cfg identity.Config) (minPurity, recall float64) {
		minPurity = 1
		for _, os := range fixtures {
			s := score(os, cluster(cfg, os))
			minPurity = min(minPurity, s.purity)
			recall += s.recall / float64(len(fixtures))
		}
		return minPurity, recall
	}
	best := 0.0
	for _, sp := range []float64{0, 0.15, 0.2, 0.25} {
		for _, a := range []float64{0.4, 0.45, 0.5} {
			for _, m := range []float64{0.7, 0.8, 0.9} {
				cfg := identity.Config{Assign: a, Merge: m, Spread: sp}
				p, r := run(cfg)
				if p >= 0.99 && m >= margin {
					best = max(best, r)
				}
				t.Logf("%+v: min purity %.4f, mean recall %.4f", cfg, p, r)
			}
		}
	}
	p, r := run(identity.Default)
	t.Logf("default %+v on %d tuning fixtures: min purity %.4f, mean recall %.4f", identity.Default, len(fixtures), p, r)
	if p < 0.99 || r < best-0.01 {
		t.Errorf("Default scores min purity %.4f, mean recall %.4f on the tuning fixtures, the best swept recall %.4f: re-tune it", p, r, best)
	}
}

// TestHeldOut checks Default on the held-out fixture against the bar of
// issue 19: purity of at least 0.95. It also asks for pairwise recall of
// at least 0.9, so that one identity per observation cannot pass.
func TestHeldOut(t *testing.T) {
	seen := fixture(seenSeed)
	t.Logf("default %+v on the seen fixture (%d observations): %v", identity.Default, len(seen), score(seen, cluster(identity.Default, seen)))
	os := fixture(heldOutSeed)
	s := score(os, cluster(identity.Default, os))
	t.Logf("default %+v on the held-out fixture (%d observations): %v", identity.Default, len(os), s)
	if s.purity < 0.95 {
		t.Errorf("purity %.4f, want >= 0.95", s.purity)
	}
	if s.recall < 0.9 {
		t.Errorf("pairwise recall %.4f, want >= 0.9", s.recall)
	}
}

// closestStrangers returns the highest cosine similarity between the
// centroids (means of unit embeddings) of two different true identities
// of one modality: a merge threshold at or below it merges strangers.
func closestStrangers(os []obs) float64 {
	sums := map[int][]float32{}
	mod := map[int]string{}
	for _, o := range os {
		u := identity.Unit(o.vec)
		if sums[o.truth] == nil {
			sums[o.truth] = make([]float32, len(u))
		}
		for i := range u {
			sums[o.truth][i] += u[i]
		}
		mod[o.truth] = o.modality
	}
	best := -1.0
	for a := range sums {
		for b := range sums {
			if a < b && mod[a] == mod[b] {
				best = max(best, identity.Cosine(sums[a], sums[b]))
			}
		}
	}
	return best
}

// TestMergeMargin checks that Default.Merge stays at least 0.2 above the
// closest pair of strangers' centroids on the tuning fixture: merges that
// join strangers cost purity and are not undone, while a split is undone
// by a later merge pass or a client's merge.
func TestMergeMargin(t *testing.T) {
	c := closestStrangers(fixture(tuneSeed))
	t.Logf("closest strangers on the tuning fixture: %.4f; on the held-out one: %.4f", c, closestStrangers(fixture(heldOutSeed)))
	if identity.Default.Merge < c+0.2 {
		t.Errorf("Default.Merge %.2f is within 0.2 of the closest strangers' similarity %.4f", identity.Default.Merge, c)
	}
}

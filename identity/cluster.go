package identity

import (
	"math"
	"sort"
)

// Config holds the clustering thresholds, cosine similarities between an
// observation's unit embedding and an identity's centroid (Assign), and
// between two centroids (Merge).
type Config struct {
	Assign float64
	Merge  float64
	// Spread, when above 0, makes both thresholds relative to how spread
	// out each identity's members are (see Cluster.Tightness): an
	// observation joins an identity of at least two members when its
	// similarity is within Spread of the identity's tightness, and two
	// identities merge when the similarity of their estimated centres
	// reaches Merge.
	Spread float64
}

// Default is the configuration measured on the tuning fixtures (TestTune,
// TestMergeMargin: seeds 1 and 2) and checked on held-out ones
// (TestHeldOut, TestHeldOutSeeds).
var Default = Config{Assign: 0.45, Merge: 0.8, Spread: 0.2}

// Cluster is an identity as the clustering sees it: the mean of its
// members' unit embeddings and how many there are.
type Cluster struct {
	ID       string
	Centroid []float32
	Count    int
}

// Unit returns v scaled to length 1 (v itself when it is all zero).
func Unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		copy(out, v)
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Cosine returns the cosine similarity of a and b (0 when either is zero
// or their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Nearest returns the index of the cluster whose centroid is most similar
// to v and the similarity, or -1 when there is none of v's length.
func Nearest(cs []Cluster, v []float32) (int, float64) {
	best, sim := -1, math.Inf(-1)
	for i := range cs {
		if len(cs[i].Centroid) != len(v) {
			continue
		}
		if s := Cosine(cs[i].Centroid, v); s > sim {
			best, sim = i, s
		}
	}
	return best, sim
}

// Place returns the index of the cluster unit embedding u joins under
// cfg, or -1 when it starts a new one. Without Spread that is the nearest
// cluster when it is at least Assign alike; with Spread, each cluster has
// its own threshold (its tightness less Spread, or Assign below two
// members) and u joins the one it clears by the widest margin, so that a
// tight identity does not take in a close stranger that a loose one's
// threshold would let through.
func (cfg Config) Place(cs []Cluster, u []float32) int {
	if cfg.Spread <= 0 {
		i, sim := Nearest(cs, u)
		if i < 0 || sim < cfg.Assign {
			return -1
		}
		return i
	}
	best, margin := -1, math.Inf(-1)
	for i := range cs {
		c := cs[i].Centroid
		if len(c) != len(u) {
			continue
		}
		var dot, cc, uu float64 // one pass: the centroid's length gives both the cosine and the tightness
		for k := range c {
			dot += float64(c[k]) * float64(u[k])
			cc += float64(c[k]) * float64(c[k])
			uu += float64(u[k]) * float64(u[k])
		}
		if cc == 0 || uu == 0 {
			continue
		}
		th := cfg.Assign
		if t, ok := tightness(cc, cs[i].Count); ok {
			th = max(t-cfg.Spread, cfg.Assign)
		}
		if m := dot/math.Sqrt(cc*uu) - th; m >= 0 && m > margin {
			best, margin = i, m
		}
	}
	return best
}

// Tightness estimates the mean cosine similarity between c's members and
// their true centre from the length of c's centroid, a mean of unit
// vectors: for n members spread by rho around a centre, its squared length
// is about rho² + (1-rho²)/n. ok is false below two members.
func (c Cluster) Tightness() (rho float64, ok bool) {
	return tightness(sqLen(c.Centroid), c.Count)
}

// tightness is Cluster.Tightness from the squared length m2 of the
// centroid of n members.
func tightness(m2 float64, n int) (float64, bool) {
	if n < 2 {
		return 0, false
	}
	r2 := (float64(n)*m2 - 1) / float64(n-1)
	return math.Sqrt(min(max(r2, 0), 1)), true
}

func sqLen(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return s
}

// sharpness returns the expected cosine similarity between the centroid
// (squared length m2) of n members and their true centre: 1 below two
// members, and at least 0.8, because the tightness of a few members is a
// rough estimate and two scattered fragments must not have their
// similarity inflated by more than 1/0.64.
func sharpness(m2 float64, n int) float64 {
	rho, ok := tightness(m2, n)
	if !ok || m2 == 0 {
		return 1
	}
	return max(rho/math.Sqrt(m2), 0.8)
}

// Add adds a unit embedding to c, moving its centroid to the new mean.
func (c *Cluster) Add(u []float32) {
	if len(c.Centroid) == 0 {
		c.Centroid = make([]float32, len(u))
	}
	n := float64(c.Count)
	for i := range c.Centroid {
		c.Centroid[i] = float32((float64(c.Centroid[i])*n + float64(u[i])) / (n + 1))
	}
	c.Count++
}

// Absorb adds the members of o to c (their weighted mean).
func (c *Cluster) Absorb(o Cluster) {
	a, b := float64(c.Count), float64(o.Count)
	if a+b == 0 {
		return
	}
	for i := range c.Centroid {
		c.Centroid[i] = float32((float64(c.Centroid[i])*a + float64(o.Centroid[i])*b) / (a + b))
	}
	c.Count += o.Count
}

// Merge is one merge the merge pass decided: cluster From into Into
// (indexes into the slice given to Merges).
type Merge struct{ Into, From int }

// Merges returns the merges under cfg, most similar pair first, each
// cluster merged at most once per pass and always into the larger (the
// older, by index, on a tie). With Spread, a pair's similarity is that of
// their estimated centres: the centroids' cosine divided by each one's
// sharpness, since the centroid of a few scattered members points away
// from its centre. It does not change cs.
func (cfg Config) Merges(cs []Cluster) []Merge {
	type pair struct {
		a, b int
		sim  float64
	}
	// Each centroid's length and sharpness once, so that a pair costs
	// one dot product.
	length, sharp := make([]float64, len(cs)), make([]float64, len(cs))
	for i := range cs {
		m2 := sqLen(cs[i].Centroid)
		length[i], sharp[i] = math.Sqrt(m2), 1
		if cfg.Spread > 0 {
			sharp[i] = sharpness(m2, cs[i].Count)
		}
	}
	var ps []pair
	for i := range cs {
		a := cs[i].Centroid
		for j := i + 1; j < len(cs); j++ {
			b := cs[j].Centroid
			if len(a) != len(b) || length[i] == 0 || length[j] == 0 {
				continue
			}
			var dot float64
			for k := range a {
				dot += float64(a[k]) * float64(b[k])
			}
			if s := dot / (length[i] * length[j]) / (sharp[i] * sharp[j]); s >= cfg.Merge {
				ps = append(ps, pair{i, j, s})
			}
		}
	}
	sort.SliceStable(ps, func(x, y int) bool { return ps[x].sim > ps[y].sim })
	used := map[int]bool{}
	var out []Merge
	for _, p := range ps {
		if used[p.a] || used[p.b] {
			continue
		}
		used[p.a], used[p.b] = true, true
		into, from := p.a, p.b
		if cs[from].Count > cs[into].Count {
			into, from = from, into
		}
		out = append(out, Merge{Into: into, From: from})
	}
	return out
}

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
}

// Default is the configuration measured on the tuning fixture (TestTune,
// TestMergeMargin) and checked on a held-out one (TestHeldOut).
var Default = Config{Assign: 0.45, Merge: 0.7}

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
// cfg, or -1 when it starts a new one.
func (cfg Config) Place(cs []Cluster, u []float32) int {
	i, sim := Nearest(cs, u)
	if i < 0 || sim < cfg.Assign {
		return -1
	}
	return i
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
// older, by index, on a tie). It does not change cs.
func (cfg Config) Merges(cs []Cluster) []Merge {
	type pair struct {
		a, b int
		sim  float64
	}
	var ps []pair
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			if len(cs[i].Centroid) != len(cs[j].Centroid) {
				continue
			}
			if s := Cosine(cs[i].Centroid, cs[j].Centroid); s >= cfg.Merge {
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

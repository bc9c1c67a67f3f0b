// Package synth makes reproducible synthetic unit vectors for the vector
// package's tests and benchmarks: a mixture of Gaussian clusters, the
// shape of sentence embeddings that fall into topics.
package synth

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Mixture is a set of cluster centres on the unit sphere. A sample is a
// centre plus isotropic Gaussian noise, normalised to unit length.
type Mixture struct {
	Dim     int
	Spread  float64 // noise norm relative to the unit centre, about
	centres []float32
	seed    uint64
}

// NewMixture draws clusters random centres of dimension dim from seed.
// With spread 1, a sample's cosine to its centre is about 0.7 and two
// samples of one cluster have a cosine of about 0.5, while samples of
// different clusters are near-orthogonal.
func NewMixture(seed uint64, dim, clusters int, spread float64) *Mixture {
	r := rand.New(rand.NewPCG(seed, 1))
	c := make([]float32, clusters*dim)
	for i := range clusters {
		v := c[i*dim : (i+1)*dim]
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		Normalize(v)
	}
	return &Mixture{Dim: dim, Spread: spread, centres: c, seed: seed}
}

// Sample returns n samples, stream picking the random sequence: the same
// (mixture, stream, n) always gives the same vectors. The result is one
// contiguous slice, sample i at [i*Dim:(i+1)*Dim]. Work is split over
// GOMAXPROCS goroutines in fixed blocks, so the output does not depend on
// the core count.
func (m *Mixture) Sample(stream uint64, n int) []float32 {
	const block = 1024
	out := make([]float32, n*m.Dim)
	k := len(m.centres) / m.Dim
	scale := m.Spread / math.Sqrt(float64(m.Dim))
	blocks := (n + block - 1) / block
	var next sync.Mutex
	b := 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				next.Lock()
				i := b
				b++
				next.Unlock()
				if i >= blocks {
					return
				}
				r := rand.New(rand.NewPCG(m.seed^stream<<32, uint64(i)+1))
				for s := i * block; s < min(n, (i+1)*block); s++ {
					v := out[s*m.Dim : (s+1)*m.Dim]
					c := m.centres[r.IntN(k)*m.Dim:]
					for j := range v {
						v[j] = c[j] + float32(r.NormFloat64()*scale)
					}
					Normalize(v)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// Normalize scales v to unit length in place.
func Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// Rows splits a contiguous sample into per-vector slices sharing its
// memory.
func Rows(flat []float32, dim int) [][]float32 {
	rows := make([][]float32, len(flat)/dim)
	for i := range rows {
		rows[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return rows
}

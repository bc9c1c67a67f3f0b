package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SetParallelFloats lets the external tests force Flat's one- or
// two-goroutine scan; it returns a function restoring the default.
func SetParallelFloats(n int) (restore func()) {
	old := parallelFloats
	parallelFloats = n
	return func() { parallelFloats = old }
}

// LatticeGraph returns a graph of n random unit vectors whose nodes are
// linked to the next ones on each layer (a ring lattice), not by
// similarity: a graph of a real one's shape and size, made in seconds,
// for timing how long a file of n vectors takes to write and read.
func LatticeGraph(n, dim int) *HNSW {
	h := NewHNSW(dim, HNSWConfig{Seed: 1})
	r := rand.New(rand.NewPCG(7, 8))
	v := make([]float32, dim)
	for i := range n {
		var ss float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(ss))
		}
		h.alloc(fmt.Sprintf("v%07d", i), v)
	}
	for l := range maxLayers {
		var on []uint32
		for s := range uint32(n) {
			if int(h.levels[s]) >= l {
				on = append(on, s)
			}
		}
		for i, s := range on {
			ls := h.linkSlot(s, l)
			for k := 1; k <= h.maxLinks(l) && k < len(on); k++ {
				x := on[(i+k)%len(on)]
				ls[1+ls[0]] = x
				ls[0]++
				if l == 0 {
					h.indeg[x]++
				}
			}
		}
		if len(on) > 0 {
			h.entry, h.top = on[0], l
		}
	}
	return h
}

// LatticeGraphQueries returns k random unit query vectors.
func LatticeGraphQueries(k, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(9, 10))
	out := make([][]float32, k)
	for i := range out {
		v := make([]float32, dim)
		var ss float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(ss))
		}
		out[i] = v
	}
	return out
}

// SetNativeLittle lets the tests force the graph file's per-float path
// (false) or its in-memory path (true); it returns a function restoring
// the machine's.
func SetNativeLittle(b bool) (restore func()) {
	old := nativeLittle
	nativeLittle = b
	return func() { nativeLittle = old }
}

package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

func plainDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func BenchmarkDot(b *testing.B) {
	for _, dim := range []int{64, 128, 512} {
		r := rand.New(rand.NewPCG(1, 2))
		x, y := make([]float32, dim), make([]float32, dim)
		for i := range x {
			x[i], y[i] = r.Float32(), r.Float32()
		}
		var sink float32
		for _, f := range []struct {
			name string
			fn   func(a, b []float32) float32
		}{
			{"plain", plainDot},
			{"unrolled", dotGo},
			{"vek", dot},
			{"blas32", func(a, b []float32) float32 {
				return blas32.Dot(blas32.Vector{N: len(a), Inc: 1, Data: a}, blas32.Vector{N: len(b), Inc: 1, Data: b})
			}},
		} {
			b.Run(fmt.Sprintf("%s/dim=%d", f.name, dim), func(b *testing.B) {
				for b.Loop() {
					sink += f.fn(x, y)
				}
			})
		}
		_ = sink
	}
}

// BenchmarkFlatSplit compares one and two goroutines per Flat search at
// small sizes, which sets parallelFloats.
func BenchmarkFlatSplit(b *testing.B) {
	const dim = 512
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1024, 4096, 16384, 65536} {
		f := NewFlat(dim)
		for i := range n {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			var ss float32
			for _, x := range v {
				ss += x * x
			}
			inv := 1 / float32(math.Sqrt(float64(ss)))
			for j := range v {
				v[j] *= inv
			}
			if err := f.Add(fmt.Sprint(i), v); err != nil {
				b.Fatal(err)
			}
		}
		q := f.data[:dim]
		for _, split := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/split=%v", n, split), func(b *testing.B) {
				old := parallelFloats
				defer func() { parallelFloats = old }()
				if split {
					parallelFloats = 0
				} else {
					parallelFloats = math.MaxInt
				}
				for b.Loop() {
					f.Search(q, 10, nil)
				}
			})
		}
	}
}

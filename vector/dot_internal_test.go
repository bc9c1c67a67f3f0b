package vector

import (
	"fmt"
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

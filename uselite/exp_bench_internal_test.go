package uselite

import (
	"math"
	"testing"
)

var sinkF32 float32

func BenchmarkExp(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = -float64(i) * 0.02
	}
	b.Run("expNonPos", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				sinkF32 += expNonPos(x)
			}
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				sinkF32 += float32(math.Exp(x))
			}
		}
	})
}

package uselite

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

func naiveGemm(m, k, n int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := float64(c[i*ldc+j])
			for kk := 0; kk < k; kk++ {
				s += float64(a[i*lda+kk]) * float64(b[kk*ldb+j])
			}
			out[i*n+j] = s
		}
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// TestGemm compares every kernel and split with a float64 reference, over
// shapes with partial row blocks, several K blocks and strided operands.
func TestGemm(t *testing.T) {
	saved, savedNR := kernel, nr
	defer func() { kernel, nr = saved, savedNR }()
	r := rand.New(rand.NewPCG(1, 2))
	sc := []*gemmScratch{{a: make([]float32, mr*600)}, {a: make([]float32, mr*600)}, {a: make([]float32, mr*600)}}
	if len(kernels()) < 2 && runtime.GOARCH == "amd64" {
		t.Errorf("no SIMD kernel on amd64: %v", kernels())
	}
	for name, impl := range kernels() {
		kernel, nr = impl.fn, impl.nr
		for _, m := range []int{1, 5, 6, 7, 13, 18} {
			for _, k := range []int{1, 37, 300} { // 300 spans two K blocks
				for _, n := range []int{32, 96} {
					for _, par := range []int{1, 2, 3} {
						lda, ldc := k+3, n+5
						a := randSlice(r, (m-1)*lda+k)
						w := randSlice(r, k*n)
						c := randSlice(r, (m-1)*ldc+n)
						want := naiveGemm(m, k, n, a, lda, w, n, c, ldc)
						gemm(m, a, lda, pack(w, k, n), c, ldc, par, sc)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								if d := math.Abs(float64(c[i*ldc+j]) - want[i*n+j]); d > 1e-4*math.Sqrt(float64(k)) {
									t.Fatalf("%s m=%d k=%d n=%d par=%d: C[%d][%d] = %v, want %v", name, m, k, n, par, i, j, c[i*ldc+j], want[i*n+j])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPackTransposed checks the packing used for attention: B = K^T with a
// column count that is not a multiple of the panel width.
func TestPackTransposed(t *testing.T) {
	const k, n, ld = 5, 19, 7 // src is [n, k] with row stride ld
	src := make([]float32, n*ld)
	for i := range src {
		src[i] = float32(i + 1)
	}
	npad := (n + nr - 1) / nr * nr
	dst := make([]float32, k*npad)
	for i := range dst {
		dst[i] = -1 // must be overwritten, padding included
	}
	packInto(dst, src, ld, k, n, true)
	for p := 0; p < npad/nr; p++ {
		for kk := 0; kk < k; kk++ {
			for j := 0; j < nr; j++ {
				col := p*nr + j
				want := float32(0)
				if col < n {
					want = src[col*ld+kk]
				}
				if got := dst[p*k*nr+kk*nr+j]; got != want {
					t.Fatalf("B[%d][%d] = %v, want %v", kk, col, got, want)
				}
			}
		}
	}
}

func BenchmarkKernel(b *testing.B) {
	const k = 256
	r := rand.New(rand.NewPCG(1, 2))
	a := randSlice(r, mr*k)
	bp := randSlice(r, k*maxNR)
	c := make([]float32, mr*maxNR)
	for name, impl := range kernels() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				impl.fn(k, &a[0], &bp[0], &c[0], k, impl.nr)
			}
			b.ReportMetric(float64(b.N)*2*mr*float64(impl.nr)*k/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func TestExpNonPos(t *testing.T) {
	for x := 0.0; x > -110; x -= 0.0137 {
		got := float64(expNonPos(x))
		want := float64(float32(math.Exp(x)))
		// One float32 ulp of the result, or the smallest subnormal.
		ulp := max(math.Abs(want)*0x1p-23, 0x1p-149)
		if d := math.Abs(got - want); d > ulp {
			t.Fatalf("expNonPos(%v) = %v, want %v (off by %.2g ulp)", x, got, want, d/ulp)
		}
	}
}

package uselite

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// packCodes packs the row-major [k, n] int8 codes for impl, without
// quantizing, so kernels can be checked on chosen integers.
func packCodes(codes []int8, k, n int, impl qkernelImpl) *qpacked {
	q := &qpacked{k: k, n: n, kp: roundUp(k, 4), np: roundUp(n, impl.nr), impl: impl}
	padded := make([]int8, q.kp*q.np)
	for kk := 0; kk < k; kk++ {
		copy(padded[kk*q.np:kk*q.np+n], codes[kk*n:(kk+1)*n])
	}
	q.pack(padded)
	return q
}

// TestQKernelsExact checks every int kernel the CPU runs against a plain
// int32 product: the sums must be identical, over row counts that are not
// multiples of 6, K that is not a multiple of 4 or spans several K blocks,
// N that is not a multiple of the panel width, and extreme codes.
func TestQKernelsExact(t *testing.T) {
	ks := qkernels()
	if runtime.GOARCH == "amd64" && len(ks) < 2 {
		t.Errorf("no SIMD int kernel on amd64: %d kernels", len(ks))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, impl := range ks {
		for _, m := range []int{1, 5, 6, 7, 13} {
			for _, k := range []int{1, 4, 37, 300, 1030} {
				for _, n := range []int{16, 64, 80, 200} {
					a := make([]uint8, m*k)
					w := make([]int8, k*n)
					for i := range a {
						a[i] = uint8(r.IntN(256))
					}
					for i := range w {
						w[i] = int8(r.IntN(255) - 127)
					}
					if m == 7 { // the largest magnitudes everywhere
						for i := range a {
							a[i] = 255
						}
						for i := range w {
							w[i] = int8(127 * (1 - 2*(i%2)))
						}
					}
					got := intProduct(impl, a, w, m, k, n)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var want int32
							for kk := 0; kk < k; kk++ {
								want += int32(a[i*k+kk]) * int32(w[kk*n+j])
							}
							if got[i*n+j] != want {
								t.Fatalf("%s m=%d k=%d n=%d: C[%d][%d] = %d, want %d", impl.name, m, k, n, i, j, got[i*n+j], want)
							}
						}
					}
				}
			}
		}
	}
}

// intProduct runs impl's sums over the [m, k] codes a and [k, n] codes w.
func intProduct(impl qkernelImpl, a []uint8, w []int8, m, k, n int) []int32 {
	b := packCodes(w, k, n, impl)
	mp := roundUp(m, mr)
	codes := make([]uint8, mp*b.kp)
	for i := 0; i < m; i++ {
		copy(codes[i*b.kp:], a[i*k:(i+1)*k])
	}
	t := &qtask{mp: mp, m: m, a: unsafe.Pointer(&codes[0]), b: b, acc: make([]int32, mp*b.np)}
	if impl.wide {
		wide := make([]int16, len(codes))
		for i, v := range codes {
			wide[i] = int16(v)
		}
		t.a = unsafe.Pointer(&wide[0])
	}
	t.sums(0, b.np/impl.nr)
	out := make([]int32, m*n)
	for i := 0; i < m; i++ {
		copy(out[i*n:(i+1)*n], t.acc[i*b.np:i*b.np+n])
	}
	return out
}

// TestQGemm checks the whole int8 product: close to the float64 product
// (within what 8-bit codes allow), bit-identical between kernels and
// between splits over goroutines, and adding into C rather than
// overwriting it.
func TestQGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sc := []*gemmScratch{{a: make([]float32, mr*600)}, {a: make([]float32, mr*600)}, {a: make([]float32, mr*600)}}
	for _, shape := range [][3]int{{1, 256, 64}, {7, 37, 80}, {13, 300, 200}, {30, 512, 128}} {
		m, k, n := shape[0], shape[1], shape[2]
		lda, ldc := k+3, n+5
		a := randSlice(r, (m-1)*lda+k)
		for i := range a {
			if i%5 == 0 {
				a[i] = max(0, a[i]) // some ReLU-like zeros
			}
		}
		w := randSlice(r, k*n)
		c0 := randSlice(r, (m-1)*ldc+n)
		want := naiveGemm(m, k, n, a, lda, w, n, c0, ldc)
		var first []float32
		for _, impl := range qkernels() {
			b := quantizeWeights(w, k, n, impl)
			for _, par := range []int{1, 2, 3} {
				c := slices.Clone(c0)
				qgemm(m, a, lda, b, c, ldc, par, false, newQspace(m, k, n), sc)
				if first == nil {
					first = c
				} else if !slices.Equal(c, first) {
					t.Fatalf("%s par=%d %v: result differs from the %s kernel's", impl.name, par, shape, qkernels()[0].name)
				}
			}
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				// Each term errs by at most half a step of both codes.
				tol := 0.02 * math.Sqrt(float64(k))
				if d := math.Abs(float64(first[i*ldc+j]) - want[i*n+j]); d > tol {
					t.Fatalf("%v: C[%d][%d] = %v, want %v (tolerance %.3g)", shape, i, j, first[i*ldc+j], want[i*n+j], tol)
				}
			}
		}
	}
}

// TestQuantizeRows checks the activation codes: zero is exact, the row's
// extremes reach 0 and 255, every value is recovered to within half a step,
// and the padding is zero.
func TestQuantizeRows(t *testing.T) {
	x := []float32{0, -2, 1.5, 3, 0.001, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0} // rows of 4, the third constant, the last zero
	const k, kp, m = 4, 8, 4
	dst := make([]uint8, m*kp)
	for i := range dst {
		dst[i] = 7
	}
	scale, zero := make([]float32, m), make([]int32, m)
	quantizeRows(dst, kp, x, k, k, m, scale, zero)
	for i := 0; i < m; i++ {
		for c := 0; c < k; c++ {
			v := x[i*k+c]
			u := dst[i*kp+c]
			if back := scale[i] * float32(int32(u)-zero[i]); math.Abs(float64(back-v)) > float64(scale[i])/2+1e-7 {
				t.Errorf("row %d col %d: %v coded %d (scale %v, zero %d) decodes to %v", i, c, v, u, scale[i], zero[i], back)
			}
			if v == 0 && int32(u) != zero[i] {
				t.Errorf("row %d col %d: 0 coded %d, zero point %d", i, c, u, zero[i])
			}
		}
		if !slices.Equal(dst[i*kp+k:(i+1)*kp], make([]uint8, kp-k)) {
			t.Errorf("row %d padding = %v, want zeros", i, dst[i*kp+k:(i+1)*kp])
		}
	}
	if dst[1] != 0 || dst[3] != 255 {
		t.Errorf("row 0 extremes coded %d and %d, want 0 and 255", dst[1], dst[3])
	}
}

func BenchmarkQKernel(b *testing.B) {
	const k = 256
	for _, impl := range qkernels() {
		el := 1
		if impl.wide {
			el = 2
		}
		a := make([]byte, mr*k*el)
		bp := make([]byte, k*impl.nr*el)
		c := make([]int32, mr*impl.nr)
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.fn(k, unsafe.Pointer(&a[0]), unsafe.Pointer(&bp[0]), &c[0], k, impl.nr)
			}
			b.ReportMetric(float64(b.N)*2*mr*float64(impl.nr)*k/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
}

// TestRowStepsIdentical checks the vector element-wise steps against the Go
// loops on lengths with and without tails: identical min and max, codes
// (ties rounding to even, values past the range clamping) and dequantized
// floats.
func TestRowStepsIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	impls := rowStepImpls()
	if runtime.GOARCH == "amd64" && len(impls) < 2 {
		t.Errorf("no vector row steps on amd64")
	}
	for _, n := range []int{1, 7, 8, 31, 32, 33, 100, 1536} {
		x := randSlice(r, n)
		for i := range x {
			switch i % 7 {
			case 1:
				x[i] = float32(r.IntN(40)-20) + 0.5 // ties
			case 2:
				x[i] *= 1000 // past the range: clamps
			}
		}
		acc := make([]int32, n)
		colSum := make([]int32, n)
		for i := range acc {
			acc[i], colSum[i] = r.Int32N(1<<24)-1<<23, r.Int32N(20000)-10000
		}
		colScale := randSlice(r, n)
		c0 := randSlice(r, n)
		want := goRowSteps
		wlo, whi := want.minMax(x)
		wq := make([]uint8, n)
		want.quantize(wq, x, 3.7, 117)
		wc := slices.Clone(c0)
		want.dequant(wc, acc, colSum, colScale, 0.013, 93, false)
		wr := slices.Clone(c0)
		want.dequant(wr, acc, colSum, colScale, 0.013, 93, true)
		clamped := 0
		for j := range wc {
			if want := max(wc[j], 0); wr[j] != want {
				t.Fatalf("n=%d: dequant with relu gives %v at %d, want %v", n, wr[j], j, want)
			}
			if wc[j] < 0 {
				clamped++
			}
		}
		if n >= 32 && clamped == 0 {
			t.Fatalf("n=%d: no negative sums to clamp; the test checks nothing", n)
		}
		for _, impl := range impls {
			lo, hi := impl.minMax(x)
			if lo != wlo || hi != whi {
				t.Errorf("%s n=%d: minMax = %v, %v, want %v, %v", impl.name, n, lo, hi, wlo, whi)
			}
			q := make([]uint8, n)
			impl.quantize(q, x, 3.7, 117)
			if !slices.Equal(q, wq) {
				t.Errorf("%s n=%d: quantize = %v, want %v", impl.name, n, q, wq)
			}
			for _, relu := range []bool{false, true} {
				c := slices.Clone(c0)
				impl.dequant(c, acc, colSum, colScale, 0.013, 93, relu)
				if w := map[bool][]float32{false: wc, true: wr}[relu]; !slices.Equal(c, w) {
					t.Errorf("%s n=%d relu=%v: dequant = %v, want %v", impl.name, n, relu, c, w)
				}
			}
		}
	}
}

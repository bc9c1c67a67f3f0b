package uselite

import "golang.org/x/sys/cpu"

//go:noescape
func minMaxAVX2(x *float32, n int) (lo, hi float32)

//go:noescape
func quantizeRowAVX2(dst *uint8, x *float32, n int, inv float32, z int32)

//go:noescape
func dequantRowAVX2(c *float32, acc, colSum *int32, colScale *float32, n int, sa float32, z int32, relu bool)

// The vector forms of the element-wise steps of the int8 path; their
// results are identical to the Go loops', which handle the tails.
func init() {
	if cpu.X86.HasAVX2 {
		rowSteps = avx2RowSteps
	}
}

var avx2RowSteps = rowStepsImpl{
	name: "avx2",
	minMax: func(x []float32) (float32, float32) {
		n := len(x) &^ 7
		if n == 0 {
			return minMaxGo(x)
		}
		lo, hi := minMaxAVX2(&x[0], n)
		l, h := minMaxGo(x[n:])
		return min(lo, l), max(hi, h)
	},
	quantize: func(dst []uint8, x []float32, inv float32, z int32) {
		n := len(x) &^ 31
		if n > 0 {
			quantizeRowAVX2(&dst[0], &x[0], n, inv, z)
		}
		quantizeRowGo(dst[n:], x[n:], inv, z)
	},
	dequant: func(c []float32, acc, colSum []int32, colScale []float32, sa float32, z int32, relu bool) {
		n := len(c) &^ 7
		if n > 0 {
			_, _, _ = acc[n-1], colSum[n-1], colScale[n-1]
			dequantRowAVX2(&c[0], &acc[0], &colSum[0], &colScale[0], n, sa, z, relu)
		}
		dequantRowGo(c[n:], acc[n:], colSum[n:], colScale[n:], sa, z, relu)
	},
}

// rowStepImpls lists the implementations this CPU runs, for tests.
func rowStepImpls() []rowStepsImpl {
	if cpu.X86.HasAVX2 {
		return []rowStepsImpl{goRowSteps, avx2RowSteps}
	}
	return []rowStepsImpl{goRowSteps}
}

package uselite

import (
	"fmt"
	"math"
	"unsafe"
)

// The int8 path. A weight matrix is quantized once, at load, per output
// column: q = round(w / s) with s = max|w| / 127, so q is in [-127, 127].
// Activations are quantized per row (per token) just before each product,
// asymmetrically: u = round(x / sa) + z in [0, 255], the zero point z chosen
// so that 0 is exact (ReLU zeros and padding stay zeros) and [min, max] of
// the row covers all 256 levels; that gives the ReLU outputs of the
// feed-forward block twice the resolution of a symmetric code. The kernel
// sums u*q in int32, exactly, and the product is
//
//	C[i][j] += sa_i * s_j * (sum_k u[i][k]*q[k][j] - z_i * sum_k q[k][j])
//
// with the column sums precomputed. Integer sums are exact, so every kernel
// gives bit-identical results and so the same embeddings on every CPU.

// qkernelFunc computes C[0:mr][0:nr] += A[0:mr][0:k] * Bpanel[0:k][0:nr] in
// int32. A holds unsigned 8-bit codes (int16 for a wide kernel) with row
// stride lda elements; B is one packed panel (see packQ); C has row stride
// ldc. k is a multiple of 4.
type qkernelFunc func(k int, a, b unsafe.Pointer, c *int32, lda, ldc int)

// qkernelImpl is an int kernel with its panel width and operand layout:
// wide kernels take A as int16 and B as int16 pairs (k, k+1) per column;
// the others take A as bytes and B as groups of 4 bytes (k..k+3) per column,
// the layout of VPDPBUSD.
type qkernelImpl struct {
	name string
	fn   qkernelFunc
	nr   int
	wide bool
}

// kc returns the K block of the kernel: a panel block of at most 16 KiB, so
// it stays in L1 while the row blocks of A stream past.
func (q qkernelImpl) kc() int {
	el := 1
	if q.wide {
		el = 2
	}
	return max(4, 16384/(q.nr*el)/4*4)
}

// qkernel is the fastest int kernel the CPU runs, chosen once at start-up
// (see qgemm_amd64.go).
var qkernel = qkernelImpl{"go", kernQGo, 16, false}

// qpacked is a weight matrix quantized per column and packed in panels for
// the int kernel that was active when it was made.
type qpacked struct {
	k, n   int // logical shape
	kp, np int // k padded to a multiple of 4, n to a multiple of the panel width
	impl   qkernelImpl
	data   []int8  // byte layout: panel p, group g, column j, byte b
	data16 []int16 // wide layout: panel p, pair g, column j, element b
	scale  []float32
	colSum []int32
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// quantizeWeights quantizes the row-major [k, n] matrix w per column for
// the int kernel impl (the active one, qkernel, outside tests). It panics if
// w does not hold k*n floats.
func quantizeWeights(w []float32, k, n int, impl qkernelImpl) *qpacked {
	if len(w) != k*n {
		panic(fmt.Sprintf("uselite: quantize %dx%d from %d floats", k, n, len(w)))
	}
	q := &qpacked{k: k, n: n, kp: roundUp(k, 4), np: roundUp(n, impl.nr), impl: impl,
		scale: make([]float32, n), colSum: make([]int32, n)}
	codes := make([]int8, q.kp*q.np) // row-major, zero padding
	for j := 0; j < n; j++ {
		var mx float32
		for kk := 0; kk < k; kk++ {
			mx = max(mx, float32(math.Abs(float64(w[kk*n+j]))))
		}
		s := mx / 127
		if s == 0 {
			s = 1
		}
		var sum int32
		for kk := 0; kk < k; kk++ {
			v := int32(math.RoundToEven(float64(w[kk*n+j] / s)))
			v = max(-127, min(127, v))
			codes[kk*q.np+j] = int8(v)
			sum += v
		}
		q.scale[j], q.colSum[j] = s, sum
	}
	q.pack(codes)
	return q
}

// pack lays the padded row-major codes out in panels of impl.nr columns.
func (q *qpacked) pack(codes []int8) {
	nr, kp, group := q.impl.nr, q.kp, 4
	if q.impl.wide {
		group = 2
		q.data16 = make([]int16, kp*q.np)
	} else {
		q.data = make([]int8, kp*q.np)
	}
	for p := 0; p < q.np/nr; p++ {
		for kk := 0; kk < kp; kk++ {
			g, b := kk/group, kk%group
			for j := 0; j < nr; j++ {
				at := p*kp*nr + (g*nr+j)*group + b
				v := codes[kk*q.np+p*nr+j]
				if q.impl.wide {
					q.data16[at] = int16(v)
				} else {
					q.data[at] = v
				}
			}
		}
	}
}

// panel returns the address of panel p of q from K offset k0 on.
func (q *qpacked) panel(p, k0 int) unsafe.Pointer {
	at := p*q.kp*q.impl.nr + k0*q.impl.nr
	if q.impl.wide {
		return unsafe.Pointer(&q.data16[at])
	}
	return unsafe.Pointer(&q.data[at])
}

// qspace is the room of the int8 path in a workspace: the codes of A
// (rows padded to a multiple of mr, K to a multiple of 4), their per-row
// scale and zero point, and the int32 product.
type qspace struct {
	a      []uint8
	a16    []int16 // the codes widened, for a wide kernel
	scale  []float32
	zero   []int32
	acc    []int32
	task   qtask
	maxK   int
	maxRow int
}

func newQspace(rows, maxK, maxN int) *qspace {
	rows = roundUp(rows, mr)
	qs := &qspace{
		a:     make([]uint8, rows*roundUp(maxK, 4)),
		scale: make([]float32, rows),
		zero:  make([]int32, rows),
		acc:   make([]int32, rows*roundUp(maxN, maxNR*2)),
		maxK:  roundUp(maxK, 4), maxRow: rows,
	}
	return qs
}

// quantizeRows writes the m rows of a (k wide, stride lda) as 8-bit codes
// into dst (stride kp, the columns past k zero), with each row's scale and
// zero point.
func quantizeRows(dst []uint8, kp int, a []float32, lda, k, m int, scale []float32, zero []int32) {
	for i := 0; i < m; i++ {
		x := a[i*lda : i*lda+k]
		lo, hi := rowSteps.minMax(x)
		lo, hi = min(lo, 0), max(hi, 0)
		s := (hi - lo) / 255
		if s == 0 || math.IsInf(float64(s), 0) || s != s {
			s = 1
		}
		inv := 1 / s
		z := max(0, min(255, int32(math.RoundToEven(float64(-lo*inv)))))
		rowSteps.quantize(dst[i*kp:i*kp+k], x, inv, z)
		clear(dst[i*kp+k : (i+1)*kp])
		scale[i], zero[i] = s, z
	}
}

// rowStepsImpl holds the element-wise steps of the int8 path, which run
// once per element of A or C rather than once per multiply-add but would
// take as long as the products themselves in plain Go.
type rowStepsImpl struct {
	name string
	// minMax returns the least and the greatest element of x (0, 0 for
	// none).
	minMax func(x []float32) (lo, hi float32)
	// quantize sets dst[c] = clamp(round(x[c]*inv) + z, 0, 255), rounding
	// half to even as VCVTPS2DQ does.
	quantize func(dst []uint8, x []float32, inv float32, z int32)
	// dequant adds (sa*colScale[j]) * (acc[j] - z*colSum[j]) to c[j],
	// and with relu sets the sums that are not positive to 0.
	dequant func(c []float32, acc, colSum []int32, colScale []float32, sa float32, z int32, relu bool)
}

var goRowSteps = rowStepsImpl{"go", minMaxGo, quantizeRowGo, dequantRowGo}

// rowSteps is the fastest implementation the CPU runs (quant_amd64.go).
var rowSteps = goRowSteps

func minMaxGo(x []float32) (lo, hi float32) {
	if len(x) == 0 {
		return 0, 0
	}
	lo, hi = x[0], x[0]
	for _, v := range x[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

func quantizeRowGo(dst []uint8, x []float32, inv float32, z int32) {
	dst = dst[:len(x)]
	for c, v := range x {
		u := int32(math.RoundToEven(float64(float32(v*inv)))) + z
		dst[c] = uint8(max(0, min(255, u)))
	}
}

func dequantRowGo(c []float32, acc, colSum []int32, colScale []float32, sa float32, z int32, relu bool) {
	acc, colSum, colScale = acc[:len(c)], colSum[:len(c)], colScale[:len(c)]
	for j := range c {
		d := acc[j] - z*colSum[j]
		f := float32(sa * colScale[j])
		v := c[j] + float32(f*float32(d)) // the conversions forbid a fused multiply-add
		if relu && !(v > 0) {
			v = 0 // as VMAXPS with 0 second: -0 and NaN give 0
		}
		c[j] = v
	}
}

// qtask is one int8 product, shared by the goroutines that each compute a
// share of its column panels.
type qtask struct {
	mp   int // rows, padded to a multiple of mr
	m    int // real rows
	a    unsafe.Pointer
	b    *qpacked
	acc  []int32 // [mp, b.np]
	c    []float32
	ldc  int
	qs   *qspace
	relu bool // clamp the results at 0
}

// qgemm computes C[m, b.n] += A[m, b.k] * B through the int8 path, using
// par goroutines over disjoint column panels (sc as for gemm); with relu
// it then sets what is not positive to 0, while the results are in cache.
func qgemm(m int, a []float32, lda int, b *qpacked, c []float32, ldc int, par int, relu bool, qs *qspace, sc []*gemmScratch) {
	if m == 0 {
		return
	}
	mp := roundUp(m, mr)
	if lda < b.k || ldc < b.n || mp > qs.maxRow || b.kp > qs.maxK ||
		len(a) < (m-1)*lda+b.k || len(c) < (m-1)*ldc+b.n {
		panic(fmt.Sprintf("uselite: qgemm %dx%dx%d (kernel %s) with lda %d, ldc %d", m, b.k, b.n, b.impl.name, lda, ldc))
	}
	codes := qs.a[:mp*b.kp]
	quantizeRows(codes, b.kp, a, lda, b.k, m, qs.scale, qs.zero)
	clear(codes[m*b.kp:])
	t := &qs.task
	*t = qtask{mp: mp, m: m, a: unsafe.Pointer(&codes[0]), b: b, acc: qs.acc[:mp*b.np], c: c, ldc: ldc, qs: qs, relu: relu}
	if b.impl.wide {
		if len(qs.a16) < len(qs.a) {
			qs.a16 = make([]int16, len(qs.a))
		}
		wide := qs.a16[:len(codes)]
		for i, v := range codes {
			wide[i] = int16(v)
		}
		t.a = unsafe.Pointer(&wide[0])
	}
	np := b.np / b.impl.nr
	runPanels(np, par, sc, gemmTask{q: t})
}

// panels computes panels [p0, p1) of t: the int32 sums, then the
// dequantized result added into C.
func (t *qtask) panels(p0, p1 int) {
	t.sums(p0, p1)
	j0, j1 := p0*t.b.impl.nr, min(p1*t.b.impl.nr, t.b.n)
	if j0 < j1 {
		dequantize(t.c, t.ldc, t.acc, t.b.np, t.m, j0, j1, t.qs.scale, t.qs.zero, t.b.scale, t.b.colSum, t.relu)
	}
}

// sums sets panels [p0, p1) of t.acc to A*B, K block by K block.
func (t *qtask) sums(p0, p1 int) {
	b := t.b
	nr, kc := b.impl.nr, b.impl.kc()
	el := 1
	if b.impl.wide {
		el = 2
	}
	for p := p0; p < p1; p++ {
		clearCols(t.acc, b.np, t.mp, p*nr, nr)
	}
	for k0 := 0; k0 < b.kp; k0 += kc {
		kk := min(kc, b.kp-k0)
		for p := p0; p < p1; p++ {
			bp := b.panel(p, k0)
			for i := 0; i < t.mp; i += mr {
				ap := unsafe.Add(t.a, (i*b.kp+k0)*el)
				b.impl.fn(kk, ap, bp, &t.acc[i*b.np+p*nr], b.kp, b.np)
			}
		}
	}
}

func clearCols(acc []int32, ld, rows, j0, w int) {
	for i := 0; i < rows; i++ {
		clear(acc[i*ld+j0 : i*ld+j0+w])
	}
}

// dequantize adds columns [j0, j1) of the int32 sums, scaled back to real
// numbers, into the m rows of C, then with relu clamps them at 0.
func dequantize(c []float32, ldc int, acc []int32, ldacc, m, j0, j1 int, rowScale []float32, rowZero []int32, colScale []float32, colSum []int32, relu bool) {
	for i := 0; i < m; i++ {
		rowSteps.dequant(c[i*ldc+j0:i*ldc+j1], acc[i*ldacc+j0:i*ldacc+j1], colSum[j0:j1], colScale[j0:j1], rowScale[i], rowZero[i], relu)
	}
}

// kernQGo is the portable int kernel, for panel width 16 and the byte
// layout.
func kernQGo(k int, a, b unsafe.Pointer, c *int32, lda, ldc int) {
	const nr = 16
	if k == 0 {
		return
	}
	as := unsafe.Slice((*uint8)(a), (mr-1)*lda+k)
	bs := unsafe.Slice((*int8)(b), k*nr)
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	var acc [mr][nr]int32
	for g := 0; g < k; g += 4 {
		blk := (*[4 * nr]int8)(bs[g*nr : g*nr+4*nr])
		for r := 0; r < mr; r++ {
			a4 := (*[4]uint8)(as[r*lda+g : r*lda+g+4])
			a0, a1, a2, a3 := int32(a4[0]), int32(a4[1]), int32(a4[2]), int32(a4[3])
			ar := &acc[r]
			for j := range ar {
				w := blk[j*4 : j*4+4 : j*4+4]
				ar[j] += a0*int32(w[0]) + a1*int32(w[1]) + a2*int32(w[2]) + a3*int32(w[3])
			}
		}
	}
	for r := 0; r < mr; r++ {
		crow := cs[r*ldc : r*ldc+nr]
		for j, v := range acc[r] {
			crow[j] += v
		}
	}
}

package uselite

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// The matrix products run on a register-blocked kernel that updates a 6 x nr
// tile of C from 6 rows of A and an nr-column panel of B: nr is 32 for the
// AVX-512 kernel, 16 for the AVX2/FMA and the portable ones. B (weights, or
// K and V in attention) is packed so that each panel is contiguous: row kk of
// panel p holds B[kk][nr*p:nr*p+nr]. K is processed in blocks of kc so a
// panel block (at most 32 KiB) stays in L1 while every row block of A streams
// past.
const (
	mr    = 6
	maxNR = 32
	kc    = 256
)

// kernelFunc computes C[0:6][0:nr] += A[0:6][0:k] * Bpanel[0:k][0:nr] with A
// and C row strides lda and ldc (in floats).
type kernelFunc func(k int, a, b, c *float32, lda, ldc int)

// kernelImpl is a kernel with its panel width.
type kernelImpl struct {
	fn kernelFunc
	nr int
}

// kernel and nr are the fastest kernel the CPU runs and its panel width,
// chosen once at start-up (see gemm_amd64.go).
var (
	kernel kernelFunc = kern6x16Go
	nr                = 16
)

// packed is a [k, n] matrix in panel order for panel width w (the nr of the
// kernel that was active when it was packed); n is a multiple of w.
type packed struct {
	k, n, w int
	data    []float32
}

// pack copies the row-major [k, n] matrix w into panel order; n must be a
// multiple of nr (every weight matrix of the model is a multiple of 32).
func pack(w []float32, k, n int) *packed {
	if n%nr != 0 || len(w) != k*n {
		panic(fmt.Sprintf("uselite: pack %dx%d from %d floats", k, n, len(w)))
	}
	p := &packed{k: k, n: n, w: nr, data: make([]float32, k*n)}
	packInto(p.data, w, n, k, n, false)
	return p
}

// packInto writes the [k, n] matrix src (row stride ld; transposed: src is
// [n, k] and B = src^T) into dst in panel order, padding n up to a multiple
// of nr with zeros. dst needs k*roundUp(n) floats.
func packInto(dst, src []float32, ld, k, n int, transposed bool) {
	np := (n + nr - 1) / nr
	for p := 0; p < np; p++ {
		panel := dst[p*k*nr : (p+1)*k*nr]
		cols := min(nr, n-p*nr)
		if !transposed {
			for kk := 0; kk < k; kk++ {
				row := panel[kk*nr : kk*nr+nr]
				copy(row, src[kk*ld+p*nr:kk*ld+p*nr+cols])
				clear(row[cols:])
			}
			continue
		}
		for j := 0; j < cols; j++ {
			s := src[(p*nr+j)*ld : (p*nr+j)*ld+k]
			for kk, v := range s {
				panel[kk*nr+j] = v
			}
		}
		if cols < nr {
			for kk := 0; kk < k; kk++ {
				clear(panel[kk*nr+cols : kk*nr+nr])
			}
		}
	}
}

// gemmScratch is the per-goroutine room gemm needs for the rows that do not
// fill a whole 6-row block.
type gemmScratch struct {
	a  []float32 // mr * maxK
	c  [mr * maxNR]float32
	wg sync.WaitGroup // for the helpers of a split product
}

// gemm computes C[m, b.n] += A[m, b.k] * B, using par goroutines (each with
// its own scratch; len(sc) >= par) over disjoint column panels.
func gemm(m int, a []float32, lda int, b *packed, c []float32, ldc int, par int, sc []*gemmScratch) {
	if m == 0 {
		return
	}
	k, n := b.k, b.n
	if b.w != nr {
		panic(fmt.Sprintf("uselite: matrix packed for width %d, kernel width %d", b.w, nr))
	}
	if lda < k || ldc < n || len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("uselite: gemm %dx%dx%d with lda %d (len %d), ldc %d (len %d)", m, k, n, lda, len(a), ldc, len(c)))
	}
	// Tail rows are copied into a zero-padded 6-row block so the kernel
	// never reads or writes outside the matrices.
	full := m - m%mr
	var tailA []float32
	if full < m {
		tailA = sc[0].a[:mr*k]
		for r := 0; r < mr; r++ {
			dst := tailA[r*k : (r+1)*k]
			if full+r < m {
				copy(dst, a[(full+r)*lda:(full+r)*lda+k])
			} else {
				clear(dst)
			}
		}
	}
	runPanels(n/nr, par, sc, gemmTask{m: m, full: full, a: a, lda: lda, tailA: tailA, b: b, c: c, ldc: ldc})
}

// runPanels runs task over np column panels split between par goroutines:
// this one and up to par-1 helpers, each helper share with its own scratch
// (len(sc) >= par).
func runPanels(np, par int, sc []*gemmScratch, task gemmTask) {
	par = max(1, min(par, np))
	if par == 1 {
		task.p0, task.p1, task.sc = 0, np, sc[0]
		task.run()
		return
	}
	helpersOnce.Do(startHelpers)
	wg := &sc[0].wg
	for g := 1; g < par; g++ {
		t := task
		t.p0, t.p1, t.sc, t.wg = g*np/par, (g+1)*np/par, sc[g], wg
		wg.Add(1)
		select {
		case helperTasks <- t:
		default: // every helper is busy with another call: do it here
			wg.Done()
			t.run()
		}
	}
	task.p0, task.p1, task.sc = 0, np/par, sc[0]
	task.run()
	wg.Wait()
}

// gemmTask is a share of the column panels of one product, handed to a
// helper goroutine. Helpers are long-lived so splitting a product costs no
// goroutine start and no allocation.
type gemmTask struct {
	p0, p1, m, full int
	a               []float32
	lda             int
	tailA           []float32
	b               *packed
	c               []float32
	ldc             int
	sc              *gemmScratch
	wg              *sync.WaitGroup
	q               *qtask // set for an int8 product, which uses only p0, p1
}

func (t gemmTask) run() {
	if t.q != nil {
		t.q.panels(t.p0, t.p1)
		return
	}
	gemmPanels(t.p0, t.p1, t.m, t.full, t.a, t.lda, t.tailA, t.b, t.c, t.ldc, t.sc)
}

var (
	helpersOnce sync.Once
	helperTasks = make(chan gemmTask)
)

func startHelpers() {
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		go func() {
			for t := range helperTasks {
				t.run()
				t.wg.Done()
			}
		}()
	}
}

func gemmPanels(p0, p1, m, full int, a []float32, lda int, tailA []float32, b *packed, c []float32, ldc int, sc *gemmScratch) {
	k := b.k
	for k0 := 0; k0 < k; k0 += kc {
		kk := min(kc, k-k0)
		for p := p0; p < p1; p++ {
			bp := &b.data[p*k*nr+k0*nr]
			for i := 0; i < full; i += mr {
				kernel(kk, &a[i*lda+k0], bp, &c[i*ldc+p*nr], lda, ldc)
			}
			if full == m {
				continue
			}
			t := &sc.c
			for r := 0; r < m-full; r++ {
				copy(t[r*nr:(r+1)*nr], c[(full+r)*ldc+p*nr:])
			}
			kernel(kk, &tailA[k0], bp, &t[0], k, nr)
			for r := 0; r < m-full; r++ {
				copy(c[(full+r)*ldc+p*nr:(full+r)*ldc+p*nr+nr], t[r*nr:(r+1)*nr])
			}
		}
	}
}

// kern6x16Go is the portable kernel, for panel width 16.
func kern6x16Go(k int, a, b, c *float32, lda, ldc int) {
	if k == 0 {
		return
	}
	const nr = 16
	as := unsafe.Slice(a, (mr-1)*lda+k)
	bs := unsafe.Slice(b, k*nr)
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	var acc [mr][nr]float32
	for kk := 0; kk < k; kk++ {
		brow := (*[nr]float32)(bs[kk*nr : kk*nr+nr])
		for r := 0; r < mr; r++ {
			av := as[r*lda+kk]
			ar := &acc[r]
			for j := range ar {
				ar[j] += av * brow[j]
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

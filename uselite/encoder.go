package uselite

import (
	"math"
)

// batchTokens is how many tokens one forward pass packs into its matrices.
// Larger batches reuse each cached weight panel over more rows; at 256 a
// 256x256 block of activations (256 KiB) stays in L2. Measured per CPU
// second, 128 and 512 were no faster.
const batchTokens = 256

// maxPar is the most goroutines one forward pass splits a product over.
const maxPar = 8

// workspace holds every buffer of one forward pass over up to batchTokens
// tokens (about 7 MB), so a pass allocates nothing. The model keeps one per
// slot (see acquire).
type workspace struct {
	h0, h, ln, qkv, att, ff, tmp []float32
	kT, v, sc                    []float32
	kTp, vp                      packed
	pooled, out                  []float32
	gs                           []*gemmScratch
	qs                           *qspace // nil for an fp32 model
	offs                         []int   // token offset of each sequence
}

func newWorkspace(quantized bool) *workspace {
	t := batchTokens
	ws := &workspace{
		h0:     make([]float32, t*embDim),
		h:      make([]float32, t*Dim),
		ln:     make([]float32, t*Dim),
		qkv:    make([]float32, t*3*Dim),
		att:    make([]float32, t*Dim),
		ff:     make([]float32, t*ffDim),
		tmp:    make([]float32, t*Dim),
		kT:     make([]float32, MaxTokens*Dim),
		v:      make([]float32, MaxTokens*Dim),
		sc:     make([]float32, MaxTokens*MaxTokens),
		pooled: make([]float32, t*Dim),
		out:    make([]float32, t*Dim),
	}
	for range maxPar {
		ws.gs = append(ws.gs, &gemmScratch{a: make([]float32, mr*ffDim)})
	}
	if quantized {
		ws.qs = newQspace(t, ffDim, ffDim)
	}
	return ws
}

// matrix is a weight matrix of the model: fp32 panels, or int8 ones when
// the model runs quantized (then f is nil).
type matrix struct {
	f *packed
	q *qpacked
}

// newMatrix packs the row-major [k, n] matrix w, quantized for precision p.
func newMatrix(w []float32, k, n int, p Precision) *matrix {
	if p == Int8 {
		return &matrix{q: quantizeWeights(w, k, n, qkernel)}
	}
	return &matrix{f: pack(w, k, n)}
}

// mul computes C[m, n] += A[m, k] * W on w's arithmetic, and with relu
// then sets every element of C that is not positive to 0.
func (ws *workspace) mul(m int, a []float32, lda int, w *matrix, c []float32, ldc, par int, relu bool) {
	if w.q != nil {
		qgemm(m, a, lda, w.q, c, ldc, par, relu, ws.qs, ws.gs)
		return
	}
	gemm(m, a, lda, w.f, c, ldc, par, ws.gs)
	if relu {
		for j, v := range c {
			if v < 0 {
				c[j] = 0
			}
		}
	}
}

// forward embeds seqs (each at most MaxTokens ids, together at most
// batchTokens) into dst[i] (Dim floats each), splitting every matrix
// product over par goroutines. Every step works in ws's buffers, so a pass
// allocates nothing.
func (m *Model) forward(ws *workspace, seqs [][]int32, dst [][]float32, par int) {
	par = max(1, min(par, maxPar))
	T := ws.offsets(seqs)
	m.embedTokens(ws, seqs)
	h := ws.h[:T*Dim]
	for li := range m.layers {
		l := &m.layers[li]
		in, inW := h, Dim
		if li == 0 {
			in, inW = ws.h0[:T*embDim], embDim
		}
		m.attentionBlock(ws, l, len(seqs), in, inW, h, par)
		m.feedForwardBlock(ws, l, h, par)
	}
	pooled := ws.meanPool(h, len(seqs))
	m.tanhNormalize(ws, pooled, dst)
}

// offsets records in ws.offs the token offset of each sequence (and the
// total after the last) and returns the total token count.
func (ws *workspace) offsets(seqs [][]int32) int {
	offs := append(ws.offs[:0], 0)
	for _, s := range seqs {
		offs = append(offs, offs[len(offs)-1]+len(s))
	}
	ws.offs = offs
	return offs[len(seqs)]
}

// embedTokens fills ws.h0 with h0 = x + (x + timing) for every token, as
// the graph adds the embedding twice.
func (m *Model) embedTokens(ws *workspace, seqs [][]int32) {
	offs := ws.offs
	for i, s := range seqs {
		for pos, id := range s {
			x := m.emb[int(id)*embDim : int(id)*embDim+embDim]
			tim := m.timing[pos*embDim : pos*embDim+embDim]
			row := ws.h0[(offs[i]+pos)*embDim : (offs[i]+pos+1)*embDim]
			for c := range row {
				row[c] = x[c] + (x[c] + tim[c])
			}
		}
	}
}

// attentionBlock runs layer l's self-attention over the nseq sequences of
// in (rows inW wide) and sets h (rows Dim wide) to the projected attention
// plus the residual (in itself, or its projection where the widths differ).
func (m *Model) attentionBlock(ws *workspace, l *layer, nseq int, in []float32, inW int, h []float32, par int) {
	offs := ws.offs
	T := offs[nseq]
	ln := ws.ln[:T*inW]
	layerNorm(ln, in, inW, l.ln1S, l.ln1B, m.lnEps)
	qw := 3 * l.dAtt
	qkv := ws.qkv[:T*qw]
	fillRows(qkv, l.qkvB)
	ws.mul(T, ln, inW, l.qkv, qkv, qw, par, false)
	for t := 0; t < T; t++ {
		q := qkv[t*qw : t*qw+l.dAtt]
		for c := range q {
			q[c] *= l.qScale
		}
	}
	att := ws.att[:T*l.dAtt]
	clear(att)
	for i := 0; i < nseq; i++ {
		m.attend(ws, l, qkv[offs[i]*qw:], att[offs[i]*l.dAtt:], offs[i+1]-offs[i])
	}
	proj := ws.tmp[:T*Dim]
	fillRows(proj, l.outB)
	ws.mul(T, att, l.dAtt, l.out, proj, Dim, par, false)
	if l.res != nil {
		fillRows(h, l.resB)
		ws.mul(T, in, inW, l.res, h, Dim, par, false)
	}
	for j := range h {
		h[j] = proj[j] + h[j]
	}
}

// feedForwardBlock adds layer l's feed-forward output (layer norm, ReLU
// hidden layer, projection) to h in place.
func (m *Model) feedForwardBlock(ws *workspace, l *layer, h []float32, par int) {
	T := len(h) / Dim
	ln := ws.ln[:T*Dim]
	layerNorm(ln, h, Dim, l.ln2S, l.ln2B, m.lnEps)
	ff := ws.ff[:T*ffDim]
	fillRows(ff, l.ff1B)
	ws.mul(T, ln, Dim, l.ff1, ff, ffDim, par, true)
	y := ws.tmp[:T*Dim]
	fillRows(y, l.ff2B)
	ws.mul(T, ff, ffDim, l.ff2, y, Dim, par, false)
	for j := range h {
		h[j] = y[j] + h[j]
	}
}

// meanPool returns the mean of each of the S sequences' token rows of h
// (an empty one pools to zeros: the graph divides by max(count, 1)).
func (ws *workspace) meanPool(h []float32, S int) []float32 {
	offs := ws.offs
	pooled := ws.pooled[:S*Dim]
	for i := 0; i < S; i++ {
		p := pooled[i*Dim : (i+1)*Dim]
		clear(p)
		n := offs[i+1] - offs[i]
		for t := offs[i]; t < offs[i+1]; t++ {
			row := h[t*Dim : (t+1)*Dim]
			for c, v := range row {
				p[c] += v
			}
		}
		div := float32(max(n, 1))
		for c := range p {
			p[c] /= div
		}
	}
	return pooled
}

// tanhNormalize runs the pooled rows through the tanh layer and writes each
// one, scaled to unit length, into dst[i].
func (m *Model) tanhNormalize(ws *workspace, pooled []float32, dst [][]float32) {
	S := len(pooled) / Dim
	out := ws.out[:S*Dim]
	fillRows(out, m.tanhB)
	gemm(S, pooled, Dim, m.tanhW, out, Dim, 1, ws.gs)
	for i := 0; i < S; i++ {
		o := out[i*Dim : (i+1)*Dim]
		var ss float32
		for c, v := range o {
			v = float32(math.Tanh(float64(v)))
			o[c] = v
			ss += v * v
		}
		r := float32(1 / math.Sqrt(float64(max(ss, m.l2Eps))))
		d := dst[i]
		for c, v := range o {
			d[c] = v * r
		}
	}
}

// attend runs multi-head self-attention for one sequence of n tokens whose
// q|k|v rows start at qkv (row stride 3*dAtt, q already scaled), adding the
// heads' outputs into out (row stride dAtt).
// The heads are too small to be worth splitting over goroutines.
func (m *Model) attend(ws *workspace, l *layer, qkv, out []float32, n int) {
	if n == 0 {
		return
	}
	qw := 3 * l.dAtt
	dh := l.dAtt / l.heads
	npad := (n + nr - 1) / nr * nr
	for hd := 0; hd < l.heads; hd++ {
		q := qkv[hd*dh:]
		k := qkv[l.dAtt+hd*dh:]
		v := qkv[2*l.dAtt+hd*dh:]
		// scores = q k^T over the padded key columns; padding is ignored.
		ws.kTp = packed{k: dh, n: npad, w: nr, data: ws.kT[:dh*npad]}
		packInto(ws.kTp.data, k, qw, dh, n, true)
		sc := ws.sc[:n*npad]
		clear(sc)
		gemm(n, q, qw, &ws.kTp, sc, npad, 1, ws.gs)
		for i := 0; i < n; i++ {
			softmax(sc[i*npad : i*npad+n])
		}
		ws.vp = packed{k: n, n: dh, w: nr, data: ws.v[:n*dh]}
		packInto(ws.vp.data, v, qw, n, dh, false)
		gemm(n, sc, npad, &ws.vp, out[hd*dh:], l.dAtt, 1, ws.gs)
	}
}

// softmax normalises x in place: exp(x - max) / sum.
func softmax(x []float32) {
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range x {
		e := expNonPos(float64(v - mx))
		x[i] = e
		sum += e
	}
	for i := range x {
		x[i] /= sum
	}
}

// expNonPos returns exp(x) for x <= 0 to within one float32 ulp, about 1.6x
// as fast as math.Exp (BenchmarkExp): x = n*ln2 + r with |r| <= ln2/2,
// exp(r) by its degree-7 Taylor polynomial (truncation error below 6e-9
// relative), and 2^n put into the exponent bits. At 128 tokens softmax took
// a sixth of the forward pass with math.Exp.
func expNonPos(x float64) float32 {
	if x < -104 { // below the smallest float32 subnormal
		return 0
	}
	const (
		log2e = 1.4426950408889634
		ln2hi = 6.93147180369123816490e-01
		ln2lo = 1.90821492927058770002e-10
	)
	// Truncating y-0.5 rounds y <= 0 to a nearest integer.
	n := float64(int64(x*log2e - 0.5))
	r := x - n*ln2hi - n*ln2lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return float32(p * math.Float64frombits(uint64(int64(n)+1023)<<52))
}

// layerNorm normalises each w-wide row of in into out:
// scale * (x - mean) / sqrt(var + eps) + bias, in the graph's order of
// float32 operations; mean and variance are accumulated in float64.
func layerNorm(out, in []float32, w int, scale, bias []float32, eps float32) {
	for r := 0; r*w < len(in); r++ {
		x := in[r*w : (r+1)*w]
		y := out[r*w : (r+1)*w]
		var s float64
		for _, v := range x {
			s += float64(v)
		}
		mean := float32(s / float64(w))
		var ss float64
		for c, v := range x {
			d := v - mean
			y[c] = d
			ss += float64(d * d)
		}
		rs := float32(1 / math.Sqrt(float64(float32(ss/float64(w))+eps)))
		for c, d := range y {
			y[c] = scale[c]*rs*d + bias[c]
		}
	}
}

// fillRows sets every row of dst to row (len(dst) is a multiple of it).
func fillRows(dst, row []float32) {
	for i := 0; i < len(dst); i += len(row) {
		copy(dst[i:i+len(row)], row)
	}
}

// flops returns the arithmetic of embedding one sequence of n tokens: two
// operations per multiply-add of the dense layers and of attention (the
// small element-wise steps are not counted).
func flops(n int) float64 {
	dense := 0
	for _, d := range []int{embDim, Dim} {
		dense += d*3*d + d*Dim + Dim*ffDim + ffDim*Dim // qkv, output, feed-forward
	}
	dense += embDim * Dim               // layer 0's residual projection
	attention := 2 * n * (embDim + Dim) // q k^T and softmax v, per key
	return 2*float64(n)*float64(dense+attention) + 2*float64(Dim*Dim)
}

package uselite

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/engramhq/engram"
)

// Embed returns one L2-normalised vector of Dim floats per text, in order.
//
// A text of up to MaxTokens tokens gets the model's own embedding. A longer
// text is cut into consecutive, non-overlapping windows of MaxTokens tokens
// (the last one shorter); each window is embedded on its own and the text's
// vector is the sum of the window vectors weighted by their token counts,
// L2-normalised. The empty text (and any text NFKC-normalising to nothing)
// has no tokens and gets the model's vector for an empty sequence,
// normalise(tanh(bias)), as the original graph computes it.
//
// Texts are packed into batches of up to 256 tokens that run on GOMAXPROCS
// goroutines; with fewer batches than processors each matrix product is split
// instead. Concurrent calls share GOMAXPROCS forward-pass slots. Embed checks
// ctx before every batch and, once ctx is done, returns an error wrapping
// ctx.Err() and no vectors.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("uselite: embed: %w", err)
	}
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*Dim)
	for i := range out {
		out[i] = backing[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}
	var seqs [][]int32
	var dst [][]float32
	type multi struct {
		text       int
		first, num int // seqs[first:first+num] are its windows
	}
	var long []multi
	for i, text := range texts {
		ids := m.tok.encode(text)
		if len(ids) <= MaxTokens {
			seqs = append(seqs, ids)
			dst = append(dst, out[i])
			continue
		}
		w := multi{text: i, first: len(seqs)}
		for s := 0; s < len(ids); s += MaxTokens {
			seqs = append(seqs, ids[s:min(s+MaxTokens, len(ids))])
			dst = append(dst, make([]float32, Dim))
			w.num++
		}
		long = append(long, w)
	}
	if err := m.run(ctx, seqs, dst); err != nil {
		return nil, err
	}
	for _, w := range long {
		var acc [Dim]float64
		for s := w.first; s < w.first+w.num; s++ {
			n := float64(len(seqs[s]))
			for c, v := range dst[s] {
				acc[c] += n * float64(v)
			}
		}
		normalizeInto(out[w.text], acc[:])
	}
	return out, nil
}

// EmbedIDs embeds token sequences produced by Tokenize (or TokenizeAll cut to
// MaxTokens), one vector per sequence. A sequence longer than MaxTokens or an
// id outside the vocabulary is an EINVALID *engram.Error. It checks ctx as
// Embed does.
func (m *Model) EmbedIDs(ctx context.Context, seqs [][]int32) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("uselite: embed: %w", err)
	}
	for i, s := range seqs {
		if len(s) > MaxTokens {
			return nil, engram.Errorf(engram.EINVALID, "token sequence %d has %d ids; the model takes at most %d", i, len(s), MaxTokens)
		}
		for _, id := range s {
			if id < 0 || int(id) >= len(m.tok.pieces) {
				return nil, engram.Errorf(engram.EINVALID, "token sequence %d holds id %d, outside the vocabulary [0, %d)", i, id, len(m.tok.pieces))
			}
		}
	}
	out := make([][]float32, len(seqs))
	backing := make([]float32, len(seqs)*Dim)
	for i := range out {
		out[i] = backing[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}
	if err := m.run(ctx, seqs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// normalizeInto writes v / |v| into dst.
func normalizeInto(dst []float32, v []float64) {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	r := 1 / math.Sqrt(max(ss, 1e-24))
	for c, x := range v {
		dst[c] = float32(x * r)
	}
}

// run embeds seqs (each at most MaxTokens ids) into dst, batch by batch.
func (m *Model) run(ctx context.Context, seqs [][]int32, dst [][]float32) error {
	type batch struct{ lo, hi int }
	var batches []batch
	lo, tokens := 0, 0
	for i, s := range seqs {
		if i > lo && (tokens+len(s) > batchTokens || i-lo == batchTokens) {
			batches = append(batches, batch{lo, i})
			lo, tokens = i, 0
		}
		tokens += len(s)
	}
	if lo < len(seqs) {
		batches = append(batches, batch{lo, len(seqs)})
	}
	if len(batches) == 0 {
		return nil
	}
	procs := runtime.GOMAXPROCS(0)
	workers := min(procs, len(batches))
	par := max(1, procs/workers)

	var next atomic.Int64
	var failed atomic.Pointer[error]
	fail := func(err error) { failed.CompareAndSwap(nil, &err) }
	work := func() {
		for {
			b := int(next.Add(1) - 1)
			if b >= len(batches) || failed.Load() != nil {
				return
			}
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			ws, err := m.acquire(ctx)
			if err != nil {
				fail(err)
				return
			}
			m.forward(ws, seqs[batches[b].lo:batches[b].hi], dst[batches[b].lo:batches[b].hi], par)
			m.release(ws)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if p := failed.Load(); p != nil {
		return fmt.Errorf("uselite: embed: %w", *p)
	}
	return nil
}

// acquire takes one of the model's GOMAXPROCS forward-pass slots, waiting
// while concurrent calls hold them all, and returns its workspace (made on
// first use, about 7 MB). Bounding the slots bounds memory and keeps
// concurrent callers from oversubscribing the processors; slots are taken
// per batch, so callers take turns batch by batch.
func (m *Model) acquire(ctx context.Context) (*workspace, error) {
	select {
	case ws := <-m.slots:
		if ws == nil {
			ws = newWorkspace(m.prec == Int8)
		}
		return ws, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *Model) release(ws *workspace) { m.slots <- ws }

var _ engram.Embedder = (*Model)(nil)

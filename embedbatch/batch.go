// Package embedbatch coalesces concurrent embedding calls into one call of
// the embedder it wraps. A model such as USE-lite embeds a batch of texts
// for about half the processor time per text that it spends on texts one
// at a time (its matrix products fill its kernels), and a server under
// load receives many small calls at once: each add and each search embeds
// one or two short texts. The Batcher runs one inner call at a time;
// calls that arrive while it runs wait and go together into the next one,
// so an idle server answers a lone call at once and a busy one batches.
package embedbatch

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/engramhq/engram"
)

// MaxTexts is the most texts one inner call takes; a caller with more
// texts is still served in one call of its own.
const MaxTexts = 64

// Batcher is an engram.Embedder over an inner one; see the package
// comment. It is safe for concurrent use.
type Batcher struct {
	inner engram.Embedder

	mu      sync.Mutex
	queue   []*request
	running bool
}

// request is one caller's texts and, once done is closed, its answer.
type request struct {
	ctx   context.Context
	texts []string
	vecs  [][]float32
	err   error
	done  chan struct{}
}

// New returns a Batcher over inner. Its inner calls mix the texts of
// callers with different contexts and carry the values of only one of
// them, so inner must not key on context values (engram.WithEmbedPartition):
// wrap a model with it, and put a cache above it, not below.
func New(inner engram.Embedder) *Batcher { return &Batcher{inner: inner} }

// Name returns the inner embedder's Name.
func (b *Batcher) Name() string { return b.inner.Name() }

// Dim returns the inner embedder's Dim.
func (b *Batcher) Dim() int { return b.inner.Dim() }

// Languages implements engram.LanguageCoverer with the inner embedder's
// languages, or none (every language) when the inner one lacks the
// optional capability (openai does).
func (b *Batcher) Languages() []string {
	if lc, ok := b.inner.(engram.LanguageCoverer); ok {
		return lc.Languages()
	}
	return nil
}

// Embed returns one vector per text, in order, from an inner call that may
// also embed other callers' texts. It fails with the inner call's error
// (which then fails every caller of that call), or with ctx's error when
// ctx ends first: the inner call then runs on for the others.
func (b *Batcher) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedbatch: %w", err)
	}
	r := &request{ctx: ctx, texts: texts, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		go b.drain()
	}
	select {
	case <-r.done:
		return r.vecs, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("embedbatch: %w", ctx.Err())
	}
}

// drain makes inner calls until the queue is empty.
func (b *Batcher) drain() {
	for {
		b.mu.Lock()
		batch := b.take()
		if len(batch) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.embed(batch)
	}
}

// take removes from the queue the requests of the next inner call: the
// first, and those after it while they fit in MaxTexts. Requests whose
// caller has gone are dropped. b.mu must be held.
func (b *Batcher) take() []*request {
	var batch []*request
	n, i := 0, 0
	for ; i < len(b.queue); i++ {
		r := b.queue[i]
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("embedbatch: %w", err)
			close(r.done)
			continue
		}
		if len(batch) > 0 && n+len(r.texts) > MaxTexts {
			break
		}
		batch = append(batch, r)
		n += len(r.texts)
	}
	b.queue = append(b.queue[:0], b.queue[i:]...)
	return batch
}

// embed makes one inner call for the distinct texts of batch and answers
// each request with its vectors (a text asked for twice gets a copy the
// second time, so no two callers share a slice). The call
// carries the first request's context values but none of the callers'
// cancellation, since it serves them all.
func (b *Batcher) embed(batch []*request) {
	var texts []string
	at := map[string]int{}
	for _, r := range batch {
		for _, t := range r.texts {
			if _, ok := at[t]; !ok {
				at[t] = len(texts)
				texts = append(texts, t)
			}
		}
	}
	vecs, err := b.inner.Embed(context.WithoutCancel(batch[0].ctx), texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedbatch: %s returned %d vectors for %d texts", b.inner.Name(), len(vecs), len(texts))
	}
	given := make([]bool, len(texts))
	for _, r := range batch {
		if err != nil {
			r.err = err
		} else {
			r.vecs = make([][]float32, len(r.texts))
			for i, t := range r.texts {
				j := at[t]
				r.vecs[i] = vecs[j]
				if given[j] {
					r.vecs[i] = slices.Clone(vecs[j])
				}
				given[j] = true
			}
		}
		close(r.done)
	}
}

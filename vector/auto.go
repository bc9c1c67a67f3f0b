package vector

import (
	"context"
	"log/slog"
	"sync"
)

// DefaultThreshold is the number of 512-dimensional vectors above which
// Auto switches to the graph. BenchmarkFlatSearch on this shared two-core
// machine: 10,000 vectors (20 MB, inside the CPU cache) searched in p50
// 0.5 ms, p95 0.7 ms; at 20,000 the scan leaves the cache and took p50
// 1.5 ms, p95 5 ms under load; 40,000 p50 3.7 ms. For other dimensions
// Auto scales it to the same number of floats.
const DefaultThreshold = 20_000

// AutoConfig tunes an Auto index. Zero fields take the defaults.
type AutoConfig struct {
	// Threshold is the size above which the approximate index is built.
	// Default DefaultThreshold·512/dim.
	Threshold int
	// HNSW configures the approximate index.
	HNSW HNSWConfig
}

// Auto is exact while small and approximate when large. It starts as a
// Flat; when an Add takes it past the threshold it builds an HNSW from a
// snapshot of the vectors in the background, keeps answering exactly from the
// Flat meanwhile, replays the writes made during the build onto the graph
// and then switches to it. Dropping below half the threshold switches back
// to a Flat at once.
type Auto struct {
	mu        sync.RWMutex
	dim       int
	threshold int
	hnsw      HNSWConfig
	flat      *Flat // set while exact
	ann       *HNSW // set once switched
	building  bool
	held      bool          // Hold: Add does not start a build
	pending   []op          // writes made while building
	done      chan struct{} // closed when the running build ends
}

// op is a write made during a build: v nil means delete.
type op struct {
	id string
	v  []float32
}

// NewAuto returns an empty Auto index of vectors of length dim. It panics
// if dim < 1.
func NewAuto(dim int, c AutoConfig) *Auto {
	if c.Threshold <= 0 {
		c.Threshold = max(1, DefaultThreshold*512/dim)
	}
	return &Auto{dim: dim, threshold: c.Threshold, hnsw: c.HNSW, flat: NewFlat(dim)}
}

// Dim returns the length of every vector.
func (a *Auto) Dim() int { return a.dim }

// Len returns the number of stored vectors.
func (a *Auto) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.cur().Len()
}

// Approximate reports whether searches are answered by the graph.
func (a *Auto) Approximate() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.ann != nil
}

func (a *Auto) cur() Index {
	if a.ann != nil {
		return a.ann
	}
	return a.flat
}

// Add stores v under id, replacing id's previous vector. It fails with
// EINVALID, storing nothing, if v has the wrong length, a non-finite
// component or is not normalised, or if id is empty.
func (a *Auto) Add(id string, v []float32) error {
	if err := checkVector(a.dim, id, v); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.cur().Add(id, v); err != nil {
		return err
	}
	if a.building {
		a.pending = append(a.pending, op{id, append([]float32(nil), v...)})
	} else if !a.held && a.flat != nil && a.flat.Len() > a.threshold {
		a.startBuild()
	}
	return nil
}

// Hold makes Add leave the switch to the graph to Release. A caller adding
// many vectors at once (loading an index from a store) holds the index
// meanwhile, so that the graph is built once, from all of them, instead of
// from the first threshold's worth while every later vector is kept a
// second time as a write to replay onto it.
func (a *Auto) Hold() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held = true
}

// Release ends Hold and starts building the graph in the background if the
// index is past its threshold.
func (a *Auto) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held = false
	if !a.building && a.flat != nil && a.flat.Len() > a.threshold {
		a.startBuild()
	}
}

// Delete removes id and reports whether it was stored.
func (a *Auto) Delete(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := a.cur().Delete(id)
	if ok && a.building {
		a.pending = append(a.pending, op{id: id})
	}
	if ok && a.ann != nil && a.ann.Len() < a.threshold/2 {
		ids, vecs := a.ann.snapshot()
		f := NewFlat(a.dim)
		for i, id := range ids {
			_ = f.Add(id, vecs[i]) // validated when first added
		}
		a.flat, a.ann = f, nil
	}
	return ok
}

// Search returns up to k stored vectors most similar to q that keep
// admits, best first; see Index.Search. While the index is exact the
// answer is exact.
func (a *Auto) Search(q []float32, k int, keep func(id string) bool) []Result {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.cur().Search(q, k, keep)
}

// Wait blocks until no background build is running, or ctx ends.
func (a *Auto) Wait(ctx context.Context) error {
	for {
		a.mu.RLock()
		building, done := a.building, a.done
		a.mu.RUnlock()
		if !building {
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// startBuild copies the Flat's vectors and builds the graph from them in
// the background. The caller holds a.mu.
func (a *Auto) startBuild() {
	ids, vecs := a.flat.snapshot()
	a.building = true
	a.pending = nil
	a.done = make(chan struct{})
	go a.build(ids, vecs)
}

// catchUpBatch is how few pending writes are replayed while holding the
// lock, blocking writers and searches, at the end of a build.
const catchUpBatch = 256

func (a *Auto) build(ids []string, vecs [][]float32) {
	h := NewHNSW(a.dim, a.hnsw)
	if err := h.AddBatch(ids, vecs); err != nil {
		// Unreachable: the vectors were validated when added. Stay exact.
		slog.Error("vector: building the approximate index failed", "err", err)
		a.mu.Lock()
		a.building, a.pending = false, nil
		a.threshold *= 2 // do not rebuild on the very next Add
		close(a.done)
		a.mu.Unlock()
		return
	}
	for {
		a.mu.Lock()
		ops := a.pending
		a.pending = nil
		if len(ops) <= catchUpBatch {
			replay(h, ops)
			a.ann, a.flat, a.building = h, nil, false
			close(a.done)
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		replay(h, ops) // the graph is still private: no lock needed
	}
}

// replay applies writes in order; the last write of an id wins, so only
// that one is applied, and new vectors go in as one parallel batch.
func replay(h *HNSW, ops []op) {
	last := make(map[string]int, len(ops))
	for i, o := range ops {
		last[o.id] = i
	}
	var ids []string
	var vecs [][]float32
	for i, o := range ops {
		if last[o.id] != i {
			continue
		}
		if o.v == nil {
			h.Delete(o.id)
			continue
		}
		ids = append(ids, o.id)
		vecs = append(vecs, o.v)
	}
	if err := h.AddBatch(ids, vecs); err != nil {
		slog.Error("vector: replaying writes onto the approximate index failed", "err", err)
	}
}

package vector

import (
	"runtime"
	"sync"
)

// parallelFloats is the scan size (vectors × dim) from which a Flat search
// is split over two goroutines. Below about 4,000 vectors of 512 the split
// lost on this shared two-core machine, since the second goroutine waits
// for a core; from 16,000 it won 1.1-3.5x (BenchmarkFlatSplit). A variable
// so that tests can force either path.
var parallelFloats = 1 << 22

// Flat is an exact index: a search scores every stored vector. Vectors sit
// in one contiguous slice so the scan streams through memory; a delete
// moves the last vector into the freed slot to keep it dense.
type Flat struct {
	mu   sync.RWMutex
	dim  int
	data []float32         // len(ids)*dim floats, slot i at data[i*dim:]
	ids  []string          // slot -> id
	slot map[string]uint32 // id -> slot
	// shared is how many floats of data a snapshot may still read: a
	// write below it copies data first (own), so a snapshot costs no copy.
	shared int
}

// NewFlat returns an empty exact index of vectors of length dim. It panics
// if dim < 1, a programming error.
func NewFlat(dim int) *Flat {
	if dim < 1 {
		panic("vector: dimension must be at least 1")
	}
	return &Flat{dim: dim, slot: make(map[string]uint32)}
}

// Dim returns the length of every vector.
func (f *Flat) Dim() int { return f.dim }

// Len returns the number of stored vectors.
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.ids)
}

// Add stores v under id, replacing id's previous vector. It fails with
// EINVALID, storing nothing, if v has the wrong length, a non-finite
// component or is not normalised, or if id is empty.
func (f *Flat) Add(id string, v []float32) error {
	if err := checkVector(f.dim, id, v); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.slot[id]; ok {
		f.own(int(s) * f.dim)
		copy(f.data[int(s)*f.dim:], v)
		return nil
	}
	if len(f.data)+f.dim > cap(f.data) {
		f.grow(1)
	}
	f.own(len(f.data))
	f.slot[id] = uint32(len(f.ids))
	f.ids = append(f.ids, id)
	f.data = append(f.data, v...)
	return nil
}

// minFlatCap is how many vectors a Flat index makes room for at first.
const minFlatCap = 32

// grow makes room for at least more vectors. append's growth for big
// slices is 1.25x, which copies a large index several times over while it
// is loaded; 1.5x copies it about twice in total. The first allocation
// holds minFlatCap vectors: an engine keeps an index per tenant and user,
// most of them small, and room for 1,024 vectors of 512 dimensions (2 MiB
// each) made 1,000 tenants of 100 memories hold 2.2 GiB of heap.
func (f *Flat) grow(more int) {
	need := len(f.data) + more*f.dim
	c := max(need, cap(f.data)+cap(f.data)/2, minFlatCap*f.dim)
	d := make([]float32, len(f.data), c)
	copy(d, f.data)
	f.data, f.shared = d, 0
}

// own gives f a copy of data of its own before a write at offset off, when
// a snapshot may read there. The caller holds f.mu for writing.
func (f *Flat) own(off int) {
	if off < f.shared {
		f.data = append(make([]float32, 0, cap(f.data)), f.data...)
		f.shared = 0
	}
}

// Delete removes id and reports whether it was stored.
func (f *Flat) Delete(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.slot[id]
	if !ok {
		return false
	}
	delete(f.slot, id)
	last := uint32(len(f.ids) - 1)
	if s != last {
		f.own(int(s) * f.dim)
		moved := f.ids[last]
		f.ids[s] = moved
		f.slot[moved] = s
		copy(f.data[int(s)*f.dim:int(s+1)*f.dim], f.data[int(last)*f.dim:])
	}
	f.ids[last] = "" // let the string be collected
	f.ids = f.ids[:last]
	f.data = f.data[:int(last)*f.dim]
	return true
}

// Search returns the k stored vectors with the highest dot product with q
// that keep admits, best first. See Index.Search.
func (f *Flat) Search(q []float32, k int, keep func(id string) bool) []Result {
	if k <= 0 || !validQuery(f.dim, q) {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := len(f.ids)
	if n == 0 {
		return nil
	}
	var top minHeap
	if n*f.dim >= parallelFloats && n >= 2 && runtime.GOMAXPROCS(0) > 1 {
		half := n / 2
		var other minHeap
		var wg sync.WaitGroup
		wg.Go(func() { other = f.scan(q, k, keep, half, n) })
		top = f.scan(q, k, keep, 0, half)
		wg.Wait()
		for _, c := range other {
			if len(top) < k {
				top.push(c)
			} else if c.score > top[0].score {
				top.replaceTop(c)
			}
		}
	} else {
		top = f.scan(q, k, keep, 0, n)
	}
	return f.results(top)
}

// scan scores slots [from, to) and keeps the best k that keep admits. keep
// is consulted only for vectors that would enter the top k, which spares
// the caller's filter most of the calls.
func (f *Flat) scan(q []float32, k int, keep func(string) bool, from, to int) minHeap {
	top := make(minHeap, 0, min(k, to-from))
	dim := f.dim
	for s := from; s < to; s++ {
		sc := dot(q, f.data[s*dim:(s+1)*dim])
		if len(top) == k && sc <= top[0].score {
			continue
		}
		if keep != nil && !keep(f.ids[s]) {
			continue
		}
		if len(top) < k {
			top.push(cand{sc, uint32(s)})
		} else {
			top.replaceTop(cand{sc, uint32(s)})
		}
	}
	return top
}

func (f *Flat) results(top minHeap) []Result {
	sortDesc(top)
	out := make([]Result, len(top))
	for i, c := range top {
		out[i] = Result{ID: f.ids[c.slot], Score: c.score}
	}
	return out
}

// snapshot returns a copy of the ids and the vectors as they are now. The
// vectors are f's own, not copied: f copies them before it next writes
// where the snapshot reads (own), so a snapshot taken to build a graph
// does not double the memory of an index that is only added to meanwhile.
func (f *Flat) snapshot() ([]string, [][]float32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := append([]string(nil), f.ids...)
	data := f.data[:len(f.data):len(f.data)]
	f.shared = len(f.data)
	vecs := make([][]float32, len(ids))
	for i := range vecs {
		vecs[i] = data[i*f.dim : (i+1)*f.dim : (i+1)*f.dim]
	}
	return ids, vecs
}

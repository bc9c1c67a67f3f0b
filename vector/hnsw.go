package vector

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// HNSWConfig tunes an HNSW index. Zero fields take the defaults, chosen on
// the benchmark data (see cmd/vectorbench): recall@10 0.97 at a million
// 512-dimensional vectors with searches of about a millisecond, and a
// build that two cores finish in ten to twenty minutes.
type HNSWConfig struct {
	// M is the number of neighbours a node keeps on the upper layers; the
	// bottom layer keeps 2M. Default 16.
	M int
	// EfConstruction is the width of the search that picks a new node's
	// neighbours. Wider builds a better graph, slower. Default 100.
	EfConstruction int
	// EfSearch is the width of a query's search (at least k is used).
	// Wider finds more true neighbours, slower. Default 100.
	EfSearch int
	// Workers is how many goroutines AddBatch links nodes with. Default
	// GOMAXPROCS.
	Workers int
	// Seed makes the random layer assignment reproducible.
	Seed uint64
}

func (c HNSWConfig) withDefaults() HNSWConfig {
	if c.M <= 0 {
		c.M = 16
	}
	if c.M < 2 {
		c.M = 2
	}
	if c.EfConstruction <= 0 {
		c.EfConstruction = 100
	}
	if c.EfSearch <= 0 {
		c.EfSearch = 100
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

const (
	chunkBits  = 12 // nodes per storage chunk: 1<<12, 8 MiB of vectors at dim 512
	chunkSize  = 1 << chunkBits
	chunkMask  = chunkSize - 1
	maxLayers  = 16
	lockStripe = 1 << 12
)

// HNSW is an approximate index: a hierarchical navigable small-world graph
// (Malkov & Yashunin) over dot-product similarity.
//
// A deleted node stays in the graph as a tombstone: searches route through
// it but never return it. The next Add reuses the tombstone's slot for the
// new vector and repairs the links of the old neighbours, so memory is
// recycled rather than returned. Replacing an id's vector re-links its node
// in place, so the node is found by its new vector only.
//
// Storage grows in chunks, so adding never copies the whole index.
type HNSW struct {
	mu      sync.RWMutex // searches share it; writers take it exclusively
	dim     int
	m, m0   int
	efc     int
	efs     int
	workers int
	ml      float64
	rng     *rand.Rand

	vecs   [][]float32 // chunks of chunkSize*dim floats
	links0 [][]uint32  // chunks of chunkSize*(m0+1): count, then neighbours
	upper  [][]uint32  // slot -> layers 1..level, m+1 words each
	levels []uint8
	// indeg counts the bottom-layer links into each node. Pruning a full
	// list could otherwise drop a node's last incoming link and make it
	// unreachable; see keepReachable. Updated atomically while AddBatch
	// links in parallel.
	indeg []int32
	ids   []string // slot -> id, "" for a tombstone
	dead  []bool
	slots map[string]uint32
	free  []uint32 // tombstones waiting to be reused
	n     int      // slots allocated
	live  int

	// entryMu guards entry and top while AddBatch links nodes in parallel.
	entryMu sync.Mutex
	entry   uint32
	top     int // layer of entry; -1 while the graph is empty

	// locks guard neighbour lists while AddBatch links nodes in parallel;
	// a node's list is guarded by locks[slot%lockStripe]. At most one is
	// held at a time, so striping cannot deadlock.
	locks   [lockStripe]sync.Mutex
	scratch sync.Pool
}

// NewHNSW returns an empty graph index of vectors of length dim. It panics
// if dim < 1, a programming error.
func NewHNSW(dim int, c HNSWConfig) *HNSW {
	if dim < 1 {
		panic("vector: dimension must be at least 1")
	}
	c = c.withDefaults()
	h := &HNSW{
		dim:     dim,
		m:       c.M,
		m0:      2 * c.M,
		efc:     c.EfConstruction,
		efs:     c.EfSearch,
		workers: c.Workers,
		ml:      1 / math.Log(float64(c.M)),
		rng:     rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15)),
	}
	h.reset()
	return h
}

func (h *HNSW) reset() {
	h.vecs, h.links0, h.upper, h.levels, h.indeg = nil, nil, nil, nil, nil
	h.ids, h.dead, h.free = nil, nil, nil
	h.slots = make(map[string]uint32)
	h.n, h.live = 0, 0
	h.entry, h.top = 0, -1
}

// Dim returns the length of every vector.
func (h *HNSW) Dim() int { return h.dim }

// Len returns the number of stored (not deleted) vectors.
func (h *HNSW) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.live
}

// SetEfSearch changes the search width; values below 1 are ignored.
func (h *HNSW) SetEfSearch(ef int) {
	if ef < 1 {
		return
	}
	h.mu.Lock()
	h.efs = ef
	h.mu.Unlock()
}

func (h *HNSW) vec(s uint32) []float32 {
	c := h.vecs[s>>chunkBits]
	o := int(s&chunkMask) * h.dim
	return c[o : o+h.dim : o+h.dim]
}

// linkSlot returns node s's list on layer l: a count, then room for the
// maximum number of neighbours.
func (h *HNSW) linkSlot(s uint32, l int) []uint32 {
	if l == 0 {
		c := h.links0[s>>chunkBits]
		o := int(s&chunkMask) * (h.m0 + 1)
		return c[o : o+h.m0+1 : o+h.m0+1]
	}
	o := (l - 1) * (h.m + 1)
	return h.upper[s][o : o+h.m+1 : o+h.m+1]
}

func (h *HNSW) maxLinks(l int) int {
	if l == 0 {
		return h.m0
	}
	return h.m
}

// neighbours returns s's neighbours on layer l. With locked set it copies
// them into buf under the node's lock, for use while other goroutines may
// be rewriting the list.
func (h *HNSW) neighbours(s uint32, l int, locked bool, buf []uint32) []uint32 {
	if !locked {
		ls := h.linkSlot(s, l)
		return ls[1 : 1+ls[0]]
	}
	mu := &h.locks[s%lockStripe]
	mu.Lock()
	ls := h.linkSlot(s, l)
	buf = append(buf[:0], ls[1:1+ls[0]]...)
	mu.Unlock()
	return buf
}

// scratch is one search's working memory, pooled so that searches do not
// allocate.
type scratch struct {
	marks  []uint32 // marks[s] == gen: visited in this pass
	gen    uint32
	cands  maxHeap
	found  minHeap
	eps    []cand
	sel    []cand
	chosen []cand
	pool   []cand
	nb     []uint32
}

func (h *HNSW) getScratch() *scratch {
	sc, _ := h.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	sc.fit(h.n)
	return sc
}

// fit makes the visited set cover n slots.
func (sc *scratch) fit(n int) {
	if len(sc.marks) < n {
		sc.marks = make([]uint32, n+n/8+chunkSize)
		sc.gen = 0
	}
}

func (h *HNSW) putScratch(sc *scratch) { h.scratch.Put(sc) }

// newPass starts a fresh visited set.
func (sc *scratch) newPass() {
	sc.gen++
	if sc.gen == 0 {
		clear(sc.marks)
		sc.gen = 1
	}
}

// Add stores v under id, replacing id's previous vector. It fails with
// EINVALID, storing nothing, if v has the wrong length, a non-finite
// component or is not normalised, or if id is empty.
func (h *HNSW) Add(id string, v []float32) error {
	return h.AddBatch([]string{id}, [][]float32{v})
}

// AddBatch stores vecs[i] under ids[i], as Add would in order, linking new
// nodes on Workers goroutines. It is the fast way to build an index. It
// fails with EINVALID, storing nothing, if the slices differ in length or
// any pair is invalid.
func (h *HNSW) AddBatch(ids []string, vecs [][]float32) error {
	if len(ids) != len(vecs) {
		return invalidf("vector: %d ids but %d vectors", len(ids), len(vecs))
	}
	for i := range ids {
		if err := checkVector(h.dim, ids[i], vecs[i]); err != nil {
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// The last vector given for an id wins, as with sequential Adds.
	var last map[string]int
	if len(ids) > 1 {
		last = make(map[string]int, len(ids))
		for i, id := range ids {
			last[id] = i
		}
	}
	sc := h.getScratch()
	var fresh []uint32
	for i, id := range ids {
		if last != nil && last[id] != i {
			continue
		}
		if s, ok := h.slots[id]; ok {
			h.replace(s, id, vecs[i], sc)
			continue
		}
		if k := len(h.free); k > 0 {
			s := h.free[k-1]
			h.free = h.free[:k-1]
			h.replace(s, id, vecs[i], sc)
			continue
		}
		fresh = append(fresh, h.alloc(id, vecs[i]))
	}
	h.putScratch(sc)
	h.linkParallel(fresh)
	return nil
}

// Delete removes id and reports whether it was stored. Its node stays as a
// tombstone until an Add reuses the slot.
func (h *HNSW) Delete(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.slots[id]
	if !ok {
		return false
	}
	delete(h.slots, id)
	h.ids[s] = ""
	h.dead[s] = true
	h.live--
	if h.live == 0 {
		h.reset() // nothing left to route through: give the memory back
		return true
	}
	h.free = append(h.free, s)
	return true
}

// Search returns up to k stored vectors most similar to q that keep
// admits, best first; see Index.Search. The answer is approximate, but it
// honours deletes, updates and keep exactly: when the graph search cannot
// find k admitted nodes (a very selective keep), it falls back to scoring
// every node.
func (h *HNSW) Search(q []float32, k int, keep func(id string) bool) []Result {
	if k <= 0 || !validQuery(h.dim, q) {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.live == 0 {
		return nil
	}
	sc := h.getScratch()
	defer h.putScratch(sc)
	ef := max(h.efs, k)
	sc.eps = append(sc.eps[:0], cand{dot(q, h.vec(h.entry)), h.entry})
	h.descend(q, sc.eps, h.top, 0, false, math.MaxUint32, sc)
	admit := func(x uint32) bool { return !h.dead[x] && (keep == nil || keep(h.ids[x])) }
	// Past a quarter of the index a graph walk costs more than a scan.
	budget := max(h.n/4, ef)
	done := h.searchLayer(q, sc.eps, ef, 0, false, admit, budget, sc)
	top := sc.found
	if !done || len(top) < min(k, h.live) {
		top = h.scan(q, k, admit, sc.found[:0])
	}
	sortDesc(top)
	top = top[:min(k, len(top))]
	out := make([]Result, len(top))
	for i, c := range top {
		out[i] = Result{ID: h.ids[c.slot], Score: c.score}
	}
	sc.found = top[:0]
	return out
}

// snapshot returns a copy of the live ids and vectors.
func (h *HNSW) snapshot() ([]string, [][]float32) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ids := make([]string, 0, h.live)
	data := make([]float32, 0, h.live*h.dim)
	for s := range uint32(h.n) {
		if !h.dead[s] {
			ids = append(ids, h.ids[s])
			data = append(data, h.vec(s)...)
		}
	}
	vecs := make([][]float32, len(ids))
	for i := range vecs {
		vecs[i] = data[i*h.dim : (i+1)*h.dim : (i+1)*h.dim]
	}
	return ids, vecs
}

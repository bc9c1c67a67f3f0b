package vector

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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

// upperEf is the beam width on the layers above the target layer. The
// classic greedy walk (width 1) can stop in the wrong cluster when the data
// has many well-separated ones; a narrow beam costs little up there, where
// the layers are sparse, and measurably cuts such misses.
const upperEf = 8

// descend searches layers from top down to stop+1, starting from the
// entries in sc.eps, and leaves the best entries for layer stop in sc.eps.
// Node self is skipped (the node being linked).
func (h *HNSW) descend(q []float32, eps []cand, top, stop int, locked bool, self uint32, sc *scratch) {
	notSelf := func(x uint32) bool { return x != self }
	for l := top; l > stop; l-- {
		h.searchLayer(q, eps, upperEf, l, locked, notSelf, math.MaxInt, sc)
		if len(sc.found) > 0 {
			eps = append(eps[:0], sc.found...)
		}
	}
	sc.eps = eps
}

// searchLayer is the beam search of layer l from eps: it returns, in
// sc.found, up to ef of the best nodes admit accepts. Nodes admit rejects
// are still expanded, so tombstones and filtered-out nodes keep the graph
// connected. The search gives up, returning false, once it has scored more
// than budget nodes without filling its beam.
func (h *HNSW) searchLayer(q []float32, eps []cand, ef, l int, locked bool, admit func(uint32) bool, budget int, sc *scratch) bool {
	sc.newPass()
	sc.cands = sc.cands[:0]
	sc.found = sc.found[:0]
	for _, e := range eps {
		if sc.marks[e.slot] == sc.gen {
			continue
		}
		sc.marks[e.slot] = sc.gen
		sc.cands.push(e)
		if admit(e.slot) {
			sc.found.push(e)
			if len(sc.found) > ef {
				sc.found.pop()
			}
		}
	}
	scored := len(eps)
	for len(sc.cands) > 0 {
		c := sc.cands.pop()
		if len(sc.found) >= ef && c.score < sc.found[0].score {
			break
		}
		if scored > budget && len(sc.found) < ef {
			return false
		}
		var nb []uint32
		if locked {
			sc.nb = h.neighbours(c.slot, l, true, sc.nb)
			nb = sc.nb
		} else {
			nb = h.neighbours(c.slot, l, false, nil)
		}
		for _, n := range nb {
			if sc.marks[n] == sc.gen {
				continue
			}
			sc.marks[n] = sc.gen
			scored++
			s := dot(q, h.vec(n))
			if len(sc.found) < ef || s > sc.found[0].score {
				sc.cands.push(cand{s, n})
				if admit(n) {
					sc.found.push(cand{s, n})
					if len(sc.found) > ef {
						sc.found.pop()
					}
				}
			}
		}
	}
	return true
}

// selectNeighbours applies the HNSW heuristic to cands, sorted best first
// by similarity to the node being linked: a candidate is kept only if it is
// more similar to that node than to every candidate already kept. This
// spreads links across directions instead of spending them all inside one
// dense cluster, which is what keeps clustered data navigable.
func (h *HNSW) selectNeighbours(cands []cand, m int, out []cand) []cand {
	out = out[:0]
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		vc := h.vec(c.slot)
		ok := true
		for _, r := range out {
			if dot(vc, h.vec(r.slot)) > c.score {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// addLink adds s, with similarity score to e, to e's list on layer l,
// re-selecting e's neighbours when the list is full.
func (h *HNSW) addLink(e, s uint32, score float32, l int, sc *scratch) {
	mu := &h.locks[e%lockStripe]
	mu.Lock()
	defer mu.Unlock()
	ls := h.linkSlot(e, l)
	cnt := int(ls[0])
	for _, x := range ls[1 : 1+cnt] {
		if x == s {
			return
		}
	}
	if mx := h.maxLinks(l); cnt < mx {
		ls[1+cnt] = s
		ls[0]++
		if l == 0 {
			atomic.AddInt32(&h.indeg[s], 1)
		}
		return
	}
	ve := h.vec(e)
	pool := append(sc.pool[:0], cand{score, s})
	for _, x := range ls[1 : 1+cnt] {
		pool = append(pool, cand{dot(ve, h.vec(x)), x})
	}
	sortDesc(pool)
	sc.pool = pool
	h.writeLinks(e, l, h.maxLinks(l), pool, sc)
}

// writeLinks replaces e's list on layer l by the heuristic's choice of at
// most mx from pool, sorted best first. The caller holds e's lock.
func (h *HNSW) writeLinks(e uint32, l, mx int, pool []cand, sc *scratch) {
	sc.sel = h.selectNeighbours(pool, mx, sc.sel)
	ls := h.linkSlot(e, l)
	if l > 0 {
		ls[0] = uint32(len(sc.sel))
		for i, c := range sc.sel {
			ls[1+i] = c.slot
		}
		return
	}
	old := ls[1 : 1+ls[0]]
	sc.sel = h.keepReachable(old, pool, sc.sel, mx)
	for _, x := range old {
		if !hasSlot(sc.sel, x) {
			atomic.AddInt32(&h.indeg[x], -1)
		}
	}
	for _, c := range sc.sel {
		if !slices.Contains(old, c.slot) {
			atomic.AddInt32(&h.indeg[c.slot], 1)
		}
	}
	ls[0] = uint32(len(sc.sel))
	for i, c := range sc.sel {
		ls[1+i] = c.slot
	}
}

// keepReachable puts back into sel any live candidate that the new list
// would leave with no incoming link at all, in place of a chosen node that
// other nodes also link to (or in a free place). The heuristic alone
// strands a few nodes in every build; a stranded node is never found,
// not even by its own vector.
func (h *HNSW) keepReachable(old []uint32, pool, sel []cand, mx int) []cand {
	// after is a node's in-degree if the list became sel.
	after := func(x uint32, inSel bool) int32 {
		d := atomic.LoadInt32(&h.indeg[x])
		if slices.Contains(old, x) {
			d--
		}
		if inSel {
			d++
		}
		return d
	}
	for _, c := range pool {
		if h.dead[c.slot] || hasSlot(sel, c.slot) || after(c.slot, false) > 0 {
			continue
		}
		if len(sel) < mx {
			sel = append(sel, c)
			continue
		}
		for i := len(sel) - 1; i >= 0; i-- {
			if after(sel[i].slot, true) >= 2 {
				sel[i] = c
				break
			}
		}
	}
	return sel
}

func hasSlot(cs []cand, s uint32) bool {
	for _, c := range cs {
		if c.slot == s {
			return true
		}
	}
	return false
}

// link connects the stored node s into the graph. It is safe to run for
// different nodes in parallel.
func (h *HNSW) link(s uint32, sc *scratch) {
	sc.fit(h.n) // AddBatch may have allocated slots since sc was taken
	q := h.vec(s)
	level := int(h.levels[s])
	h.entryMu.Lock()
	if h.top < 0 {
		h.entry, h.top = s, level
		h.entryMu.Unlock()
		return
	}
	ep, top := h.entry, h.top
	h.entryMu.Unlock()

	sc.eps = append(sc.eps[:0], cand{dot(q, h.vec(ep)), ep})
	h.descend(q, sc.eps, top, level, true, s, sc)
	eps := sc.eps
	admit := func(x uint32) bool { return x != s && !h.dead[x] }
	for l := min(level, top); l >= 0; l-- {
		h.searchLayer(q, eps, h.efc, l, true, admit, math.MaxInt, sc)
		if len(sc.found) == 0 {
			continue
		}
		eps = append(eps[:0], sc.found...)
		sortDesc(eps)
		mu := &h.locks[s%lockStripe]
		mu.Lock()
		// A parallel insert that found s on a higher layer may already
		// have linked itself here; those links compete with the found.
		pool := append(sc.pool[:0], eps...)
		ls := h.linkSlot(s, l)
		for _, x := range ls[1 : 1+ls[0]] {
			if !hasSlot(pool, x) {
				pool = append(pool, cand{dot(q, h.vec(x)), x})
			}
		}
		if len(pool) > len(eps) {
			sortDesc(pool)
		}
		sc.pool = pool
		h.writeLinks(s, l, h.m, pool, sc)
		mu.Unlock()
		// addLink reuses sc.sel, so walk a copy of the selection.
		sc.chosen = append(sc.chosen[:0], sc.sel...)
		for _, c := range sc.chosen {
			h.addLink(c.slot, s, c.score, l, sc)
		}
	}
	sc.eps = eps
	if level > top {
		h.entryMu.Lock()
		if level > h.top {
			h.entry, h.top = s, level
		}
		h.entryMu.Unlock()
	}
}

// alloc stores v under id in a new slot, not yet linked.
func (h *HNSW) alloc(id string, v []float32) uint32 {
	s := uint32(h.n)
	if h.n>>chunkBits >= len(h.vecs) {
		h.vecs = append(h.vecs, make([]float32, chunkSize*h.dim))
		h.links0 = append(h.links0, make([]uint32, chunkSize*(h.m0+1)))
	}
	copy(h.vec(s), v)
	level := min(int(-math.Log(1-h.rng.Float64())*h.ml), maxLayers-1)
	h.levels = append(h.levels, uint8(level))
	h.indeg = append(h.indeg, 0)
	var up []uint32
	if level > 0 {
		up = make([]uint32, level*(h.m+1))
	}
	h.upper = append(h.upper, up)
	h.ids = append(h.ids, id)
	h.dead = append(h.dead, false)
	h.slots[id] = s
	h.n++
	h.live++
	return s
}

// replace puts v under id into the existing slot s (id's own slot, or a
// tombstone) and re-links it. The old neighbours that pointed at s get
// links to s's other old neighbours instead, so the graph stays connected
// around the hole; nodes that still point at s now reach the new vector,
// which costs a detour but never a wrong result.
func (h *HNSW) replace(s uint32, id string, v []float32, sc *scratch) {
	level := int(h.levels[s])
	var old [maxLayers][]uint32
	for l := 0; l <= level; l++ {
		ls := h.linkSlot(s, l)
		old[l] = append([]uint32(nil), ls[1:1+ls[0]]...)
		if l == 0 {
			for _, x := range old[l] {
				atomic.AddInt32(&h.indeg[x], -1)
			}
		}
		ls[0] = 0
	}
	if h.dead[s] {
		h.dead[s] = false
		h.live++
	}
	h.ids[s] = id
	h.slots[id] = s
	copy(h.vec(s), v)
	for l := 0; l <= level; l++ {
		for _, n := range old[l] {
			h.repair(n, s, old[l], l, sc)
		}
	}
	if h.entry == s && h.top >= 0 {
		// Link s from some other node; it takes the entry back below if
		// it is still the highest.
		h.top = -1
		for x := range h.n {
			if x != int(s) && (h.top < 0 || int(h.levels[x]) > h.top) {
				h.entry, h.top = uint32(x), int(h.levels[x])
			}
		}
	}
	h.link(s, sc)
}

// repair drops s from n's list on layer l and re-selects n's neighbours
// from what remains plus sNb, the nodes s linked to.
func (h *HNSW) repair(n, s uint32, sNb []uint32, l int, sc *scratch) {
	ls := h.linkSlot(n, l)
	cnt := int(ls[0])
	has := false
	for _, x := range ls[1 : 1+cnt] {
		if x == s {
			has = true
			break
		}
	}
	if !has {
		return
	}
	vn := h.vec(n)
	pool := sc.pool[:0]
	add := func(x uint32) {
		if x == s || x == n {
			return
		}
		for _, c := range pool {
			if c.slot == x {
				return
			}
		}
		pool = append(pool, cand{dot(vn, h.vec(x)), x})
	}
	for _, x := range ls[1 : 1+cnt] {
		add(x)
	}
	for _, x := range sNb {
		add(x)
	}
	sortDesc(pool)
	sc.pool = pool
	h.writeLinks(n, l, h.maxLinks(l), pool, sc)
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

// linkParallel links the freshly allocated slots on h.workers goroutines.
func (h *HNSW) linkParallel(slots []uint32) {
	workers := min(h.workers, len(slots))
	if workers <= 1 {
		sc := h.getScratch()
		for _, s := range slots {
			h.link(s, sc)
		}
		h.putScratch(sc)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			sc := h.getScratch()
			defer h.putScratch(sc)
			for {
				i := next.Add(1) - 1
				if i >= int64(len(slots)) {
					return
				}
				h.link(slots[i], sc)
			}
		})
	}
	wg.Wait()
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

// scan is the exact fallback: the best k admitted nodes of all.
func (h *HNSW) scan(q []float32, k int, admit func(uint32) bool, top minHeap) minHeap {
	for s := range uint32(h.n) {
		if h.dead[s] {
			continue
		}
		sc := dot(q, h.vec(s))
		if len(top) == k && sc <= top[0].score {
			continue
		}
		if !admit(s) {
			continue
		}
		if len(top) < k {
			top.push(cand{sc, s})
		} else {
			top.replaceTop(cand{sc, s})
		}
	}
	return top
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

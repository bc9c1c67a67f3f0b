package vector

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

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

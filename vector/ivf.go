package vector

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// IVFConfig tunes an IVF index. Zero fields take the defaults.
type IVFConfig struct {
	// Lists is the number of partitions k-means makes at build time.
	// Default √n for n build vectors, which balances scoring centroids
	// against scanning lists and keeps training time linear in n.
	Lists int
	// NProbe is how many of the partitions nearest to a query are
	// scanned. Default 32.
	NProbe int
	// Iterations of k-means. Default 10.
	Iterations int
	// Workers is how many goroutines build and large searches use.
	// Default GOMAXPROCS.
	Workers int
	// Seed makes training reproducible.
	Seed uint64
}

func (c IVFConfig) withDefaults(n int) IVFConfig {
	if c.Lists <= 0 {
		c.Lists = int(math.Round(math.Sqrt(float64(n))))
	}
	c.Lists = max(1, min(c.Lists, n))
	if c.NProbe <= 0 {
		c.NProbe = 32
	}
	if c.Iterations <= 0 {
		c.Iterations = 10
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// IVF is an approximate index: an inverted file of flat lists. k-means
// partitions the vectors around centroids at build time; a search scores
// the centroids and scans the lists of the NProbe best. Lists are
// contiguous, so a search streams through memory, which on this hardware
// is several times faster per vector than the random reads of a graph.
//
// Adds go to the list of the nearest centroid, deletes remove the vector
// from its list, so both are exact at once. The centroids stay those of
// the build: rebuild (Auto does, in the background) when the data has
// grown or shifted much.
type IVF struct {
	mu        sync.RWMutex
	dim       int
	nprobe    int
	workers   int
	centroids []float32 // len(lists)*dim
	lists     []ivfList
	where     map[string]ivfLoc
}

type ivfList struct {
	data []float32
	ids  []string
}

type ivfLoc struct{ list, pos uint32 }

// BuildIVF trains an IVF index on vecs and stores them under ids. Training
// is k-means on a sample of up to 64 vectors a list, spread over Workers
// goroutines. It fails with EINVALID, building nothing, if the slices
// differ in length, an id repeats or a vector is invalid (see Index.Add).
// It panics if dim < 1.
func BuildIVF(dim int, ids []string, vecs [][]float32, c IVFConfig) (*IVF, error) {
	if dim < 1 {
		panic("vector: dimension must be at least 1")
	}
	if len(ids) != len(vecs) {
		return nil, invalidf("vector: %d ids but %d vectors", len(ids), len(vecs))
	}
	seen := make(map[string]struct{}, len(ids))
	for i, id := range ids {
		if err := checkVector(dim, id, vecs[i]); err != nil {
			return nil, err
		}
		if _, dup := seen[id]; dup {
			return nil, invalidf("vector: id %q appears twice", id)
		}
		seen[id] = struct{}{}
	}
	c = c.withDefaults(len(vecs))
	x := &IVF{dim: dim, nprobe: c.NProbe, workers: c.Workers, where: make(map[string]ivfLoc, len(ids))}
	x.centroids = kmeans(dim, vecs, c)
	x.lists = make([]ivfList, len(x.centroids)/dim)
	assign := x.nearestAll(vecs)
	counts := make([]int, len(x.lists))
	for _, l := range assign {
		counts[l]++
	}
	for l := range x.lists {
		x.lists[l].data = make([]float32, 0, counts[l]*dim)
		x.lists[l].ids = make([]string, 0, counts[l])
	}
	for i, l := range assign {
		x.put(l, ids[i], vecs[i])
	}
	return x, nil
}

// NewIVF returns an empty IVF with a single list, which behaves like Flat
// until rebuilt with BuildIVF. It panics if dim < 1.
func NewIVF(dim int, c IVFConfig) *IVF {
	x, _ := BuildIVF(dim, nil, nil, c)
	return x
}

// kmeans returns c.Lists unit centroids for vecs: spherical k-means, which
// maximises the dot product of each vector with its centroid.
func kmeans(dim int, vecs [][]float32, c IVFConfig) []float32 {
	k := c.Lists
	cent := make([]float32, k*dim)
	if len(vecs) == 0 {
		return cent // one zero centroid: every vector lands in list 0
	}
	r := rand.New(rand.NewPCG(c.Seed, 0x6a09e667f3bcc908))
	sample := vecs
	if limit := 64 * k; len(vecs) > limit {
		sample = make([][]float32, limit)
		for i, j := range r.Perm(len(vecs))[:limit] {
			sample[i] = vecs[j]
		}
	}
	for i, j := range r.Perm(len(sample))[:k] {
		copy(cent[i*dim:], sample[j])
	}
	workers := max(1, min(c.Workers, len(sample)/1024+1))
	type part struct {
		sums   []float64
		counts []int
	}
	parts := make([]part, workers)
	for i := range parts {
		parts[i] = part{make([]float64, k*dim), make([]int, k)}
	}
	assign := make([]int32, len(sample))
	for range c.Iterations {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				p := parts[w]
				clear(p.sums)
				clear(p.counts)
				for i := w; i < len(sample); i += workers {
					v := sample[i]
					best, _ := nearest(cent, dim, v)
					assign[i] = int32(best)
					p.counts[best]++
					s := p.sums[best*dim : (best+1)*dim]
					for j, x := range v {
						s[j] += float64(x)
					}
				}
			})
		}
		wg.Wait()
		for l := range k {
			n := 0
			for _, p := range parts {
				n += p.counts[l]
			}
			cv := cent[l*dim : (l+1)*dim]
			if n == 0 {
				// An empty list wastes a probe: restart it at a random
				// sample so that it takes over part of a crowded region.
				copy(cv, sample[r.IntN(len(sample))])
				continue
			}
			var ss float64
			for j := range cv {
				var s float64
				for _, p := range parts {
					s += p.sums[l*dim+j]
				}
				cv[j] = float32(s)
				ss += s * s
			}
			if ss == 0 {
				continue
			}
			inv := 1 / math.Sqrt(ss)
			for j := range cv {
				cv[j] = float32(float64(cv[j]) * inv)
			}
		}
	}
	return cent
}

// nearest returns the index and score of the centroid with the highest
// dot product with v.
func nearest(cent []float32, dim int, v []float32) (int, float32) {
	best, bs := 0, float32(math.Inf(-1))
	for l := 0; l*dim < len(cent); l++ {
		if s := dot(v, cent[l*dim:(l+1)*dim]); s > bs {
			best, bs = l, s
		}
	}
	return best, bs
}

// nearestAll assigns every vector to its nearest list, in parallel.
func (x *IVF) nearestAll(vecs [][]float32) []int {
	out := make([]int, len(vecs))
	var wg sync.WaitGroup
	workers := max(1, min(x.workers, len(vecs)/1024+1))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(vecs); i += workers {
				out[i], _ = nearest(x.centroids, x.dim, vecs[i])
			}
		})
	}
	wg.Wait()
	return out
}

func (x *IVF) put(l int, id string, v []float32) {
	li := &x.lists[l]
	x.where[id] = ivfLoc{uint32(l), uint32(len(li.ids))}
	li.ids = append(li.ids, id)
	li.data = append(li.data, v...)
}

// remove swap-removes id's vector from its list.
func (x *IVF) remove(id string, at ivfLoc) {
	delete(x.where, id)
	li := &x.lists[at.list]
	last := uint32(len(li.ids) - 1)
	if at.pos != last {
		moved := li.ids[last]
		li.ids[at.pos] = moved
		x.where[moved] = at
		copy(li.data[int(at.pos)*x.dim:int(at.pos+1)*x.dim], li.data[int(last)*x.dim:])
	}
	li.ids[last] = ""
	li.ids = li.ids[:last]
	li.data = li.data[:int(last)*x.dim]
}

// Dim returns the length of every vector.
func (x *IVF) Dim() int { return x.dim }

// Len returns the number of stored vectors.
func (x *IVF) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.where)
}

// Lists returns the number of partitions.
func (x *IVF) Lists() int { return len(x.lists) }

// SetNProbe changes how many lists a search scans; values below 1 are
// ignored.
func (x *IVF) SetNProbe(n int) {
	if n < 1 {
		return
	}
	x.mu.Lock()
	x.nprobe = n
	x.mu.Unlock()
}

// Add stores v under id, in the list of its nearest centroid, replacing
// id's previous vector. It fails with EINVALID, storing nothing, if v has
// the wrong length, a non-finite component or is not normalised, or if id
// is empty.
func (x *IVF) Add(id string, v []float32) error {
	if err := checkVector(x.dim, id, v); err != nil {
		return err
	}
	l, _ := nearest(x.centroids, x.dim, v) // centroids never change after the build
	x.mu.Lock()
	defer x.mu.Unlock()
	if at, ok := x.where[id]; ok {
		x.remove(id, at)
	}
	x.put(l, id, v)
	return nil
}

// Delete removes id and reports whether it was stored.
func (x *IVF) Delete(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	at, ok := x.where[id]
	if ok {
		x.remove(id, at)
	}
	return ok
}

// Search returns up to k stored vectors most similar to q that keep
// admits, best first; see Index.Search. It scans the NProbe lists whose
// centroids are nearest to q, and further lists in order of nearness
// while fewer than k admitted vectors have been found, so a selective keep
// costs time, never results.
func (x *IVF) Search(q []float32, k int, keep func(id string) bool) []Result {
	if k <= 0 || !validQuery(x.dim, q) {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.where) == 0 {
		return nil
	}
	order := make([]cand, len(x.lists))
	for l := range x.lists {
		order[l] = cand{dot(q, x.centroids[l*x.dim:(l+1)*x.dim]), uint32(l)}
	}
	// Fully sorting a few thousand centroid scores costs less than one
	// list scan, and the order is needed anyway when a filter forces
	// probing past nprobe.
	sortDesc(order)
	var top resultHeap
	next := 0
	for probe := min(x.nprobe, len(order)); ; probe = len(order) {
		top = x.scanLists(q, k, keep, order[next:probe], top)
		next = probe
		if len(top) >= k || next == len(order) {
			break
		}
	}
	return top.sorted()
}

// parallelIVF is the number of floats from which a list scan is split
// over goroutines.
const parallelIVF = 1 << 18

// scanLists scans the given lists into top.
func (x *IVF) scanLists(q []float32, k int, keep func(string) bool, lists []cand, top resultHeap) resultHeap {
	total := 0
	for _, c := range lists {
		total += len(x.lists[c.slot].data)
	}
	workers := x.workers
	if total < parallelIVF || workers < 2 || len(lists) < 2 {
		for _, c := range lists {
			top = x.scanList(q, k, keep, &x.lists[c.slot], top)
		}
		return top
	}
	// Deal lists round-robin: the probe order puts the biggest hits
	// first, and alternating keeps the halves of similar size.
	tops := make([]resultHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var t resultHeap
			for i := w; i < len(lists); i += workers {
				t = x.scanList(q, k, keep, &x.lists[lists[i].slot], t)
			}
			tops[w] = t
		})
	}
	wg.Wait()
	for _, t := range tops {
		for _, r := range t {
			top = top.offer(k, r)
		}
	}
	return top
}

func (x *IVF) scanList(q []float32, k int, keep func(string) bool, li *ivfList, top resultHeap) resultHeap {
	dim := x.dim
	for i, id := range li.ids {
		s := dot(q, li.data[i*dim:(i+1)*dim])
		if len(top) == k && s <= top[0].Score {
			continue
		}
		if keep != nil && !keep(id) {
			continue
		}
		top = top.offer(k, Result{id, s})
	}
	return top
}

// resultHeap is a min-heap of results by score: the worst kept result on
// top.
type resultHeap []Result

// offer adds r if fewer than k results are kept or r beats the worst.
func (h resultHeap) offer(k int, r Result) resultHeap {
	if len(h) < k {
		h = append(h, r)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if h[p].Score <= h[i].Score {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if r.Score <= h[0].Score {
		return h
	}
	h[0] = r
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if rr := l + 1; rr < len(h) && h[rr].Score < h[l].Score {
			m = rr
		}
		if h[i].Score <= h[m].Score {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return h
}

// sorted returns the results best first.
func (h resultHeap) sorted() []Result {
	out := []Result(h)
	slicesSortResults(out)
	return out
}

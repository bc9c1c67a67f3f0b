package vector

import (
	"cmp"
	"math"
	"slices"

	"github.com/engramhq/engram"
)

// Result is one hit of a search. Score is the dot product of the query and
// the stored vector: cosine similarity for unit vectors, higher is better.
type Result struct {
	ID    string
	Score float32
}

// Index is the method set every index of this package implements.
type Index interface {
	// Add inserts v under id, replacing any vector id had. It fails with
	// EINVALID, storing nothing, if v is not a unit vector of length Dim()
	// or id is empty.
	Add(id string, v []float32) error
	// Delete removes id and reports whether it was present.
	Delete(id string) bool
	// Search returns at most k results, best first. keep, when not nil,
	// admits ids: no id it rejects is returned, and k results are returned
	// whenever at least k stored ids pass it. keep may be called from
	// several goroutines at once and must not call back into the index. A
	// query of the wrong length or with a NaN or infinite component
	// matches nothing.
	Search(q []float32, k int, keep func(id string) bool) []Result
	// Len is the number of stored vectors.
	Len() int
	// Dim is the length of every vector.
	Dim() int
}

// normTolerance bounds |‖v‖² - 1|. Embedders normalise in float32, which is
// accurate to about 1e-6; anything further off is a caller that forgot to
// normalise, and dot products of such vectors are not cosines.
const normTolerance = 1e-3

// checkVector returns an EINVALID error describing why v cannot be stored
// in an index of dimension dim.
func checkVector(dim int, id string, v []float32) error {
	if id == "" {
		return engram.Errorf(engram.EINVALID, "vector: id is required")
	}
	if len(v) != dim {
		return engram.Errorf(engram.EINVALID, "vector: %q has %d dimensions, the index has %d", id, len(v), dim)
	}
	var ss float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return engram.Errorf(engram.EINVALID, "vector: %q has a non-finite component at index %d", id, i)
		}
		ss += f * f
	}
	if math.Abs(ss-1) > normTolerance {
		return engram.Errorf(engram.EINVALID, "vector: %q is not L2-normalised (its norm is %.4f)", id, math.Sqrt(ss))
	}
	return nil
}

// validQuery reports whether q can be scored against vectors of length dim.
func validQuery(dim int, q []float32) bool {
	if len(q) != dim || dim == 0 {
		return false
	}
	for _, x := range q {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// cand is a scored internal slot.
type cand struct {
	score float32
	slot  uint32
}

// minHeap keeps the best candidates seen so far with the worst at the top,
// so a scan can cheaply test whether a new score gets in.
type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].score <= s[i].score {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// replaceTop swaps the worst candidate for c and restores the heap.
func (h minHeap) replaceTop(c cand) {
	h[0] = c
	h.down(0)
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	(*h).down(0)
	return top
}

func (h minHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].score < h[l].score {
			m = r
		}
		if h[i].score <= h[m].score {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// maxHeap pops the best candidate first; the graph search expands from it.
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].score >= s[i].score {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	*h = s
	n := len(s)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].score > s[l].score {
			m = r
		}
		if s[i].score >= s[m].score {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return top
}

// sortDesc orders candidates best first.
func sortDesc(c []cand) {
	slices.SortFunc(c, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
}

func invalidf(format string, args ...any) error {
	return engram.Errorf(engram.EINVALID, format, args...)
}

func slicesSortResults(r []Result) {
	slices.SortFunc(r, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
}

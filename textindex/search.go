package textindex

import (
	"math"
	"slices"
	"strings"
)

// BM25 parameters, FTS5's.
const (
	k1 = 1.2
	b  = 0.75
)

// Hit is one document a search found, with its BM25 score (higher is
// better).
type Hit struct {
	ID    string
	Score float64
}

// Search ranks the documents of the indexes parts that match any term of
// query and that keep accepts by id and attribute (keep nil accepts all) by BM25, best first,
// equal scores by id from the greatest, at most k of them. The statistics
// (document count, average length, document frequencies) are those of
// parts together and of nothing else. A query without terms, or k < 1,
// finds nothing.
func Search[A any](parts []*Index[A], query string, k int, keep func(string, *A) bool) []Hit {
	return search(parts, query, k, keep, blockMax)
}

// strategy is how a search walks the postings: all give the same hits.
type strategy int

const (
	blockMax   strategy = iota // block-max WAND: skips runs of postings
	wandOnly                   // WAND on whole lists' bounds, the reference for blockMax's speed
	exhaustive                 // every posting scored, the reference for both
)

func search[A any](parts []*Index[A], query string, k int, keep func(string, *A) bool, how strategy) []Hit {
	hits, _ := searchCounting(parts, query, k, keep, how)
	return hits
}

// searchCounting is search that also returns how many documents it
// scored, which measures its pruning.
func searchCounting[A any](parts []*Index[A], query string, k int, keep func(string, *A) bool, how strategy) ([]Hit, int) {
	terms := queryTerms(query)
	st := statsOf(parts)
	if len(terms) == 0 || k < 1 || st.docs == 0 {
		return nil, 0
	}
	lists := make([][]termList, len(parts)) // by part, then term
	dfs := make([]int, len(terms))
	for i, p := range parts {
		lists[i] = make([]termList, len(terms))
		for j, t := range terms {
			lists[i][j] = p.postingsOf(t)
			dfs[j] += lists[i][j].df
		}
	}
	idf := make([]float64, len(terms))
	for j, df := range dfs {
		idf[j] = st.idf(df)
	}
	top := &topK{k: k}
	for i, p := range parts {
		s := &scorer[A]{ix: p, st: st, idf: idf, keep: keep, top: top}
		switch how {
		case exhaustive:
			s.all(lists[i])
		case wandOnly:
			s.wand(lists[i])
		default:
			s.blockMax(lists[i])
		}
	}
	return top.sorted(), top.offers
}

// stats are the collection statistics of one search.
type stats struct {
	docs  int
	avgdl float64
}

func statsOf[A any](parts []*Index[A]) stats {
	var st stats
	var tokens int64
	for _, p := range parts {
		st.docs += p.live
		tokens += p.tokens
	}
	if st.docs > 0 {
		st.avgdl = float64(tokens) / float64(st.docs)
	}
	return st
}

// idf is FTS5's: log((N - n + 0.5) / (n + 0.5)), and a tiny positive
// number where that is not positive (a term in most documents), so a
// match always counts for something.
func (st stats) idf(df int) float64 {
	v := math.Log((float64(st.docs) - float64(df) + 0.5) / (float64(df) + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// tfPart is BM25's saturating term-frequency part for a weighted frequency
// f in a document of length dl.
func (st stats) tfPart(f float32, dl uint32) float64 {
	ff := float64(f)
	return ff * (k1 + 1) / (ff + k1*(1-b+b*float64(dl)/st.avgdl))
}

// termList is the postings of one query term in one index, with the
// bounds of their frequencies and lengths and how many are live.
type termList struct {
	ps     []posting
	blocks []block
	df     int
	maxF   float32
	minLen uint32
}

// postingsOf returns the postings of a query term: its token's list, or,
// for a run of several tokens, the documents that have all of them, each
// with the smallest of their frequencies.
func (x *Index[A]) postingsOf(toks []string) termList {
	n, ok := x.terms[toks[0]]
	if !ok {
		return termList{}
	}
	l := &x.lists[n]
	if len(toks) == 1 {
		return termList{l.ps, l.blocks, int(l.df), l.maxF, l.minLen}
	}
	ps := l.ps
	for _, t := range toks[1:] {
		m, ok := x.terms[t]
		if !ok {
			return termList{}
		}
		ps = intersect(ps, x.lists[m].ps)
	}
	out := termList{ps: ps, minLen: math.MaxUint32}
	for i, p := range ps {
		d := &x.docs[p.doc]
		out.blocks = addBlock(out.blocks, i, p, d.len)
		if d.alive {
			out.df++
			out.maxF = max(out.maxF, p.f)
			out.minLen = min(out.minLen, d.len)
		}
	}
	return out
}

func intersect(a, b []posting) []posting {
	var out []posting
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].doc < b[j].doc:
			i++
		case a[i].doc > b[j].doc:
			j++
		default:
			out = append(out, posting{a[i].doc, min(a[i].f, b[j].f)})
			i++
			j++
		}
	}
	return out
}

// scorer scores one index's documents for a search.
type scorer[A any] struct {
	ix   *Index[A]
	st   stats
	idf  []float64
	keep func(string, *A) bool
	top  *topK
	part []float64 // per term, the contribution to the document scored
}

// accepts reports whether document d is live and kept.
func (s *scorer[A]) accepts(d uint32) bool {
	dc := &s.ix.docs[d]
	return dc.alive && (s.keep == nil || s.keep(dc.id, &dc.attr))
}

// score sums the contributions of the terms present (has) in query order,
// so that every way of finding a document adds the same numbers in the
// same order.
func (s *scorer[A]) score(has []bool) float64 {
	var sum float64
	for j, ok := range has {
		if ok {
			sum += s.part[j]
		}
	}
	return sum
}

// all scores every posting: the reference that WAND must agree with.
func (s *scorer[A]) all(lists []termList) {
	found := map[uint32][]bool{}
	for j, l := range lists {
		for _, p := range l.ps {
			if found[p.doc] == nil {
				found[p.doc] = make([]bool, len(lists))
			}
			found[p.doc][j] = true
		}
	}
	s.part = make([]float64, len(lists))
	for d, has := range found {
		if !s.accepts(d) {
			continue
		}
		dl := s.ix.docs[d].len
		for j, ok := range has {
			if ok {
				i, _ := slices.BinarySearchFunc(lists[j].ps, d, func(p posting, d uint32) int { return cmpDoc(p.doc, d) })
				s.part[j] = s.idf[j] * s.st.tfPart(lists[j].ps[i].f, dl)
			}
		}
		s.top.offer(s.ix.docs[d].id, s.score(has))
	}
}

// cursor walks one term's postings.
type cursor struct {
	ps     []posting
	blocks []block
	i      int
	term   int     // position of the term in the query
	ub     float64 // no posting scores more for this term
	idf    float64
	bi     int     // the block whose bound bub is, -1 before the first
	bub    float64 // no posting of block bi scores more
}

// cursors returns a cursor on each list that has postings.
func (s *scorer[A]) cursors(lists []termList) []*cursor {
	var cs []*cursor
	for j, l := range lists {
		if len(l.ps) > 0 {
			cs = append(cs, &cursor{ps: l.ps, blocks: l.blocks, term: j, idf: s.idf[j],
				ub: s.idf[j] * s.st.tfPart(l.maxF, l.minLen), bi: -1})
		}
	}
	return cs
}

// blockFor returns the bound of the first block of c, from its position
// on, whose last document is d or after, and that last document; past the
// last block, 0 and end.
func (c *cursor) blockFor(d uint32, st stats) (float64, uint32) {
	i := max(c.bi, c.i/blockSize)
	for i < len(c.blocks) && c.blocks[i].last < d {
		i++
	}
	if i == len(c.blocks) {
		return 0, end
	}
	if i != c.bi {
		bl := &c.blocks[i]
		c.bi, c.bub = i, c.idf*st.tfPart(bl.maxF, bl.minLen)
	}
	return c.bub, c.blocks[i].last
}

const end = math.MaxUint32

func (c *cursor) doc() uint32 {
	if c.i < len(c.ps) {
		return c.ps[c.i].doc
	}
	return end
}

// seek moves to the first posting of document d or after, galloping then
// searching, so that skipping far costs a logarithm of the distance.
func (c *cursor) seek(d uint32) {
	if c.doc() >= d {
		return
	}
	step, hi := 1, c.i+1
	for hi < len(c.ps) && c.ps[hi].doc < d {
		c.i = hi
		step *= 2
		hi = c.i + step
	}
	hi = min(hi, len(c.ps))
	j, _ := slices.BinarySearchFunc(c.ps[c.i:hi], d, func(p posting, d uint32) int {
		if p.doc < d {
			return -1
		}
		if p.doc > d {
			return 1
		}
		return 0
	})
	c.i += j
}

// begin returns the cursors over lists and the per-term flags scoreAt
// fills, and sizes s.part for them.
func (s *scorer[A]) begin(lists []termList) ([]*cursor, []bool) {
	cs := s.cursors(lists)
	s.part = make([]float64, len(lists))
	return cs, make([]bool, len(lists))
}

// nextPivot sorts cs by document and returns the pivot (see pivot) and
// its document; the pivot is negative when no document left can reach
// the threshold.
func (s *scorer[A]) nextPivot(cs []*cursor) (int, uint32) {
	slices.SortFunc(cs, func(a, b *cursor) int { return cmpDoc(a.doc(), b.doc()) })
	p := s.pivot(cs)
	if p < 0 {
		return p, 0
	}
	return p, cs[p].doc()
}

// wand scores, among the documents of lists, only those whose terms'
// upper bounds together could reach the current k-th best score (Broder
// et al., WAND): with a common word in the query, the documents that have
// nothing else stop being scored once k better ones are found.
func (s *scorer[A]) wand(lists []termList) {
	cs, has := s.begin(lists)
	for p, d := s.nextPivot(cs); p >= 0; p, d = s.nextPivot(cs) {
		s.step(cs, p, d, has)
	}
}

// step moves the cursors before the pivot p to its document d or, when
// they are all on d already, scores d.
func (s *scorer[A]) step(cs []*cursor, p int, d uint32, has []bool) {
	if cs[0].doc() != d {
		seekAll(cs[:p], d)
		return
	}
	s.scoreAt(cs, d, has)
}

// seekAll moves each of cs to its first document at or after d.
func seekAll(cs []*cursor, d uint32) {
	for _, c := range cs {
		c.seek(d)
	}
}

// scoreAt scores document d, which the first cursors of cs are on, and
// moves them past it. Whether d is live and kept is asked only of a score
// the top k would take: the attributes a keep function reads lie apart
// from the postings, and most documents WAND scores fall short.
func (s *scorer[A]) scoreAt(cs []*cursor, d uint32, has []bool) {
	clear(has)
	n := s.ix.lens[d]
	for _, c := range cs {
		if c.doc() != d {
			break
		}
		has[c.term] = true
		s.part[c.term] = s.idf[c.term] * s.st.tfPart(c.ps[c.i].f, n)
		c.i++
	}
	score := s.score(has)
	if theta, full := s.top.threshold(); full && score < theta {
		s.top.offers++
		return
	}
	if s.accepts(d) {
		s.top.offer(s.ix.docs[d].id, score)
	}
}

// blockMax is WAND that, at the pivot, also checks the bounds of the
// blocks the pivot document falls in (Ding and Suel, block-max WAND): when
// they cannot reach the threshold together, no document up to the end of
// the first of those blocks can, and the cursors jump past it. A query
// with a common word thus skips runs of its postings WAND would score.
func (s *scorer[A]) blockMax(lists []termList) {
	cs, has := s.begin(lists)
	for p, d := s.nextPivot(cs); p >= 0; p, d = s.nextPivot(cs) {
		for p+1 < len(cs) && cs[p+1].doc() == d {
			p++ // every term the pivot document has counts in its bound
		}
		if next, skip := s.skipTo(cs[:p+1], d, cs[p+1:]); skip {
			seekAll(cs[:p+1], next)
			continue
		}
		s.step(cs, p, d, has)
	}
}

// skipTo reports whether the documents from d on that only the cursors
// upto have cannot reach the threshold by their blocks' bounds, and the
// first document that may: just past the nearest block end, or the next
// document of the cursors after.
func (s *scorer[A]) skipTo(upto []*cursor, d uint32, after []*cursor) (uint32, bool) {
	theta, full := s.top.threshold()
	if !full {
		return 0, false
	}
	next := uint32(end)
	if len(after) > 0 {
		next = after[0].doc()
	}
	var bound float64
	for _, c := range upto {
		ub, last := c.blockFor(d, s.st)
		bound += ub
		if last != end {
			next = min(next, last+1)
		}
	}
	// The same margin as pivot's: a document at the threshold may still
	// win on its id.
	return next, bound < theta-1e-9*math.Abs(theta)
}

// pivot returns the first cursor (in document order) at which the upper
// bounds of it and those before it could reach the threshold, or -1 when
// none can and the search is over.
func (s *scorer[A]) pivot(cs []*cursor) int {
	theta, full := s.top.threshold()
	var acc float64
	for i, c := range cs {
		if c.doc() == end {
			return -1
		}
		acc += c.ub
		// A document scoring exactly the threshold may still win on its
		// id, and sums in another order differ in the last bits: keep a
		// margin.
		if !full || acc >= theta-1e-9*math.Abs(theta) {
			return i
		}
	}
	return -1
}

func cmpDoc(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// topK keeps the k best hits seen: a min-heap whose root is the worst.
type topK struct {
	k      int
	hs     []Hit
	offers int // documents scored: offered, or short of the threshold
}

// worse reports whether a ranks below b: a lower score, or the same score
// and a smaller id (ids of equal scores rank from the greatest, the
// newest, as the stores order them).
func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return strings.Compare(a.ID, b.ID) < 0
}

func (t *topK) offer(id string, score float64) {
	h := Hit{id, score}
	t.offers++
	if len(t.hs) < t.k {
		t.hs = append(t.hs, h)
		t.up(len(t.hs) - 1)
		return
	}
	if worse(t.hs[0], h) {
		t.hs[0] = h
		t.down(0)
	}
}

// up moves the hit at i towards the root while it is worse than its
// parent.
func (t *topK) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(t.hs[i], t.hs[parent]) {
			return
		}
		t.hs[i], t.hs[parent] = t.hs[parent], t.hs[i]
		i = parent
	}
}

// down moves the hit at i away from the root while a child is worse.
func (t *topK) down(i int) {
	n := len(t.hs)
	for {
		w := i
		if l := 2*i + 1; l < n && worse(t.hs[l], t.hs[w]) {
			w = l
		}
		if r := 2*i + 2; r < n && worse(t.hs[r], t.hs[w]) {
			w = r
		}
		if w == i {
			return
		}
		t.hs[i], t.hs[w] = t.hs[w], t.hs[i]
		i = w
	}
}

// threshold returns the worst kept score and whether k hits are kept.
func (t *topK) threshold() (float64, bool) {
	if len(t.hs) < t.k {
		return 0, false
	}
	return t.hs[0].Score, true
}

// sorted returns the kept hits, best first.
func (t *topK) sorted() []Hit {
	out := slices.Clone(t.hs)
	slices.SortFunc(out, func(a, b Hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return out
}

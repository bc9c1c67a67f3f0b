package textindex

import (
	"math"
	"slices"
	"strings"
	"unsafe"
)

// Index is the full-text index of one namespace: documents with their
// weighted term frequencies, posting lists in document order, and the
// statistics BM25 needs. A document carries an attribute of type A that a
// search's keep function looks at (its status, its time, its agent). An
// Index is not safe for concurrent use: callers guard it (many readers or
// one writer).
type Index[A any] struct {
	terms map[string]uint32 // token -> term number
	names []string          // by term number
	lists []plist           // by term number
	docs  []doc[A]          // by document number, in order of addition
	lens  []uint32          // docs[d].len, apart: scoring reads 4 bytes a document, not its whole record
	byID  map[string]uint32 // id -> document number of its live version

	live     int   // live documents
	tokens   int64 // tokens of the live documents
	postings int   // postings of live documents
	dead     int   // postings of removed documents, until compact
	strBytes int64 // bytes of the ids and term names
}

type doc[A any] struct {
	id    string
	len   uint32 // tokens in value, abstraction and cues
	alive bool
	terms []tf // distinct terms, for removal
	attr  A
}

// tf is one term's weighted frequency in a document: its occurrences in
// each field times the field's weight.
type tf struct {
	term uint32
	f    float32
}

type posting struct {
	doc uint32
	f   float32
}

// plist is one term's postings. maxF and minLen bound the score any of its
// postings can reach (a higher frequency and a shorter document score
// more), and blocks bound each run of blockSize postings the same way;
// removals leave them loose, never wrong.
type plist struct {
	ps     []posting
	blocks []block // postings ps[i*blockSize:(i+1)*blockSize] are blocks[i]'s
	df     int32   // live documents with the term
	maxF   float32
	minLen uint32
}

// blockSize is how many postings share one score bound: small enough that
// a bound is tight, large enough that block-max WAND skips far. 16 postings
// of 8 bytes cost 12 bytes of bounds; in BenchmarkSearchMix 16 scored half
// the documents WAND scores at 100k memories, 32 and 64 a third and a
// fifth fewer.
const blockSize = 16

// block bounds a run of postings: the last document in it, the highest
// frequency and the shortest document.
type block struct {
	last   uint32
	maxF   float32
	minLen uint32
}

// addBlock extends the bounds of blocks with posting p of a document of
// length n, appended after all the others.
func addBlock(blocks []block, i int, p posting, n uint32) []block {
	if i%blockSize == 0 {
		return append(blocks, block{p.doc, p.f, n})
	}
	bl := &blocks[len(blocks)-1]
	bl.last, bl.maxF, bl.minLen = p.doc, max(bl.maxF, p.f), min(bl.minLen, n)
	return blocks
}

// New returns an empty Index.
func New[A any]() *Index[A] {
	return &Index[A]{terms: map[string]uint32{}, byID: map[string]uint32{}}
}

// Len returns the number of documents in the index.
func (x *Index[A]) Len() int { return x.live }

// Bytes estimates the heap the index takes: its postings, their block
// bounds, its documents (an attribute counted as its own size, not what
// it points to), its terms, and the maps that find them. It does not count
// the spare capacity of growing slices, so the heap is somewhat more.
func (x *Index[A]) Bytes() int64 {
	const mapEntry = 40 // a Swiss-table slot with its control byte and load slack
	var (
		d doc[A]
		l plist
	)
	stored := int64(x.postings + x.dead)
	n := stored * int64(unsafe.Sizeof(posting{}))
	n += (stored/blockSize + int64(len(x.lists))) * int64(unsafe.Sizeof(block{}))
	n += int64(x.postings) * int64(unsafe.Sizeof(tf{}))
	n += int64(len(x.docs)) * int64(unsafe.Sizeof(d)+4)
	n += int64(x.live) * (int64(unsafe.Sizeof("")) + 4 + mapEntry)
	n += int64(len(x.lists)) * (int64(unsafe.Sizeof(l)) + 2*int64(unsafe.Sizeof("")) + 4 + mapEntry)
	return n + x.strBytes
}

// Add indexes the document id with its fields, replacing the one with the
// same id if there is one. It cannot fail.
func (x *Index[A]) Add(id, value, abstraction string, cues []string, attr A) {
	x.Remove(id)
	freq := map[string]float32{}
	var n uint32
	for _, fld := range []struct {
		text string
		w    float32
	}{{value, WeightValue}, {abstraction, WeightAbstraction}, {strings.Join(cues, "\n"), WeightCues}} {
		for _, t := range Tokens(fld.text) {
			freq[t] += fld.w
			n++
		}
	}
	terms := make([]tf, 0, len(freq))
	for t, f := range freq {
		terms = append(terms, tf{x.term(t), f})
	}
	slices.SortFunc(terms, func(a, b tf) int { return int(a.term) - int(b.term) })
	x.insert(id, n, terms, attr)
}

// term returns the number of token t, giving it one if it has none.
func (x *Index[A]) term(t string) uint32 {
	n, ok := x.terms[t]
	if !ok {
		n = uint32(len(x.lists))
		x.terms[t] = n
		x.names = append(x.names, t)
		x.strBytes += int64(len(t))
		x.lists = append(x.lists, plist{minLen: math.MaxUint32})
	}
	return n
}

// insert appends a document with its analysed terms.
func (x *Index[A]) insert(id string, n uint32, terms []tf, attr A) {
	d := uint32(len(x.docs))
	x.docs = append(x.docs, doc[A]{id: id, len: n, alive: true, terms: terms, attr: attr})
	x.lens = append(x.lens, n)
	x.byID[id] = d
	x.strBytes += int64(len(id))
	for _, t := range terms {
		l := &x.lists[t.term]
		l.blocks = addBlock(l.blocks, len(l.ps), posting{d, t.f}, n)
		l.ps = append(l.ps, posting{d, t.f})
		l.df++
		l.maxF = max(l.maxF, t.f)
		l.minLen = min(l.minLen, n)
	}
	x.live++
	x.tokens += int64(n)
	x.postings += len(terms)
}

// Remove drops the document id from the index and its statistics; an
// unknown id is ignored.
func (x *Index[A]) Remove(id string) {
	d, ok := x.byID[id]
	if !ok {
		return
	}
	delete(x.byID, id)
	dc := &x.docs[d]
	for _, t := range dc.terms {
		x.lists[t.term].df--
	}
	x.live--
	x.tokens -= int64(dc.len)
	x.postings -= len(dc.terms)
	x.dead += len(dc.terms)
	var zero A
	x.strBytes -= int64(len(dc.id))
	dc.alive, dc.terms, dc.attr, dc.id = false, nil, zero, ""
	if x.dead > 1024 && x.dead > x.postings {
		x.compact()
	}
}

// compact rebuilds the index from its live documents, dropping the
// postings of removed ones and terms no document has any more.
func (x *Index[A]) compact() {
	fresh := New[A]()
	for _, d := range x.docs {
		if !d.alive {
			continue
		}
		terms := make([]tf, len(d.terms))
		for i, t := range d.terms {
			terms[i] = tf{fresh.term(x.names[t.term]), t.f}
		}
		slices.SortFunc(terms, func(a, b tf) int { return int(a.term) - int(b.term) })
		fresh.insert(d.id, d.len, terms, d.attr)
	}
	*x = *fresh
}

package textindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// An index is saved as its live documents with their analysed terms, so
// that loading it neither reads the memories nor analyses their text
// again; the posting lists and statistics are derived while loading.
// Layout, little-endian, after whatever framing the caller adds:
//
//	term count (uint32), then each term (uint32 length, bytes), in
//	increasing term number;
//	document count (uint32), then each document: id (string), length in
//	tokens (uint32), its attribute (string, as the caller encodes it),
//	term count (uint32) and each term's number (uint32) and weighted
//	frequency (float32 bits), term numbers increasing.
//
// Only terms some live document holds are written: a removed document's
// words never reach the file.

// maxString bounds a string read from a saved index, so that a corrupted
// length cannot make Load allocate gigabytes.
const maxString = 1 << 20

// Save writes the live documents of x to w; attr appends the encoding of
// a document's attribute to b and returns it. It fails with w's error.
func (x *Index[A]) Save(w io.Writer, attr func(b []byte, a *A) []byte) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	renum := make([]uint32, len(x.lists)) // old term number -> new + 1; 0 for unused
	for _, d := range x.docs {
		if d.alive {
			for _, t := range d.terms {
				renum[t.term] = 1
			}
		}
	}
	var b []byte
	n := uint32(0)
	for t, used := range renum {
		if used != 0 {
			n++
			renum[t] = n
		}
	}
	b = binary.LittleEndian.AppendUint32(b, n)
	for t, r := range renum {
		if r != 0 {
			b = appendString(b, x.names[t])
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(x.live))
	bw.Write(b)
	var ab []byte
	for i := range x.docs {
		d := &x.docs[i]
		if !d.alive {
			continue
		}
		b = appendString(b[:0], d.id)
		b = binary.LittleEndian.AppendUint32(b, d.len)
		ab = attr(ab[:0], &d.attr)
		b = appendString(b, string(ab))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d.terms)))
		for _, t := range d.terms {
			b = binary.LittleEndian.AppendUint32(b, renum[t.term]-1)
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(t.f))
		}
		bw.Write(b)
	}
	return bw.Flush()
}

// Load reads an index Save wrote; attr decodes the bytes Save's attr
// appended, which it must not keep (Load reuses them). It fails with r's error (io.ErrUnexpectedEOF when the data
// ends early), attr's, or a descriptive one when the data is not what
// Save writes (a term number out of range, terms out of order, a
// document twice).
func Load[A any](r io.Reader, attr func(b []byte) (A, error)) (*Index[A], error) {
	br := bufio.NewReaderSize(r, 1<<20)
	x := New[A]()
	nt, err := x.loadTerms(br)
	if err != nil {
		return nil, err
	}
	nd, err := readUint32(br)
	if err != nil {
		return nil, fmt.Errorf("read the document count: %w", err)
	}
	// Documents are read first and inserted after, so that each posting
	// list and the maps are allocated once at their final size. The
	// counts only size allocations: a damaged one costs memory, not
	// correctness.
	docs, df, err := loadDocs(br, nd, nt, attr)
	if err != nil {
		return nil, err
	}
	if err := x.insertSaved(docs, df); err != nil {
		return nil, err
	}
	return x, nil
}

// savedDoc is one document as Load reads it, before it is inserted.
type savedDoc[A any] struct {
	id    string
	n     uint32
	terms []tf
	attr  A
}

// loadTerms reads the term count and the terms into x and returns the
// count; it fails on a short read or a term saved twice.
func (x *Index[A]) loadTerms(br *bufio.Reader) (uint32, error) {
	nt, err := readUint32(br)
	if err != nil {
		return 0, fmt.Errorf("read the term count: %w", err)
	}
	for range nt {
		s, err := readString(br)
		if err != nil {
			return 0, fmt.Errorf("read the terms: %w", err)
		}
		if _, dup := x.terms[s]; dup {
			return 0, fmt.Errorf("term %q is saved twice", s)
		}
		x.term(s)
	}
	return nt, nil
}

// loadDocs reads nd documents over nt terms and returns them with each
// term's document frequency; it fails on the first damaged document.
func loadDocs[A any](br *bufio.Reader, nd, nt uint32, attr func(b []byte) (A, error)) ([]savedDoc[A], []int, error) {
	docs := make([]savedDoc[A], 0, min(nd, 1<<20))
	df := make([]int, nt)
	var (
		buf [8]byte
		b   []byte // of the id, then of the attributes
	)
	for range nd {
		var d savedDoc[A]
		var err error
		if d, b, err = loadDoc(br, b, &buf, nt, df, attr); err != nil {
			return nil, nil, err
		}
		docs = append(docs, d)
	}
	return docs, df, nil
}

// loadDoc reads one document (id, length, attributes, term frequencies),
// reusing b for the bytes of its id and attributes and buf for each term
// frequency, and counting its terms in df; it fails on a short read, an empty id, attributes attr rejects or
// term numbers out of range or order.
func loadDoc[A any](br *bufio.Reader, b []byte, buf *[8]byte, nt uint32, df []int, attr func(b []byte) (A, error)) (savedDoc[A], []byte, error) {
	var err error
	if b, err = readBytes(br, b); err != nil {
		return savedDoc[A]{}, b, fmt.Errorf("read a document: %w", err)
	}
	if len(b) == 0 {
		return savedDoc[A]{}, b, errors.New("a document has no id")
	}
	id := string(b)
	n, err := readUint32(br)
	if err != nil {
		return savedDoc[A]{}, b, fmt.Errorf("read document %s: %w", id, err)
	}
	if b, err = readBytes(br, b); err != nil {
		return savedDoc[A]{}, b, fmt.Errorf("read document %s: %w", id, err)
	}
	a, err := attr(b)
	if err != nil {
		return savedDoc[A]{}, b, fmt.Errorf("read document %s: %w", id, err)
	}
	terms, err := loadTermFreqs(br, buf, id, nt, df)
	if err != nil {
		return savedDoc[A]{}, b, err
	}
	return savedDoc[A]{id, n, terms, a}, b, nil
}

// loadTermFreqs reads the term frequencies of document id and counts them
// in df; it fails on a short read or term numbers out of range or order.
func loadTermFreqs(br *bufio.Reader, buf *[8]byte, id string, nt uint32, df []int) ([]tf, error) {
	k, err := readUint32(br)
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", id, err)
	}
	if k > nt {
		return nil, fmt.Errorf("document %s has %d terms of %d", id, k, nt)
	}
	terms := make([]tf, k)
	for i := range terms {
		if _, err := io.ReadFull(br, buf[:]); err != nil {
			return nil, fmt.Errorf("read document %s: %w", id, noEOF(err))
		}
		terms[i] = tf{binary.LittleEndian.Uint32(buf[:]), math.Float32frombits(binary.LittleEndian.Uint32(buf[4:]))}
		if terms[i].term >= nt || (i > 0 && terms[i].term <= terms[i-1].term) {
			return nil, fmt.Errorf("document %s: term numbers out of range or order", id)
		}
		df[terms[i].term]++
	}
	return terms, nil
}

// insertSaved sizes x's maps and posting lists from df, then inserts
// docs, releasing each as it goes; it fails on a document saved twice.
func (x *Index[A]) insertSaved(docs []savedDoc[A], df []int) error {
	x.byID = make(map[string]uint32, len(docs))
	x.docs = make([]doc[A], 0, len(docs))
	x.lens = make([]uint32, 0, len(docs))
	for t, n := range df {
		x.lists[t].ps = make([]posting, 0, n)
		x.lists[t].blocks = make([]block, 0, (n+blockSize-1)/blockSize)
	}
	for i := range docs {
		d := &docs[i]
		x.insert(d.id, d.n, d.terms, d.attr)
		if len(x.byID) != len(x.docs) {
			return fmt.Errorf("document %q is saved twice", d.id)
		}
		*d = savedDoc[A]{}
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func readUint32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, noEOF(err)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func readString(r io.Reader) (string, error) {
	b, err := readBytes(r, nil)
	return string(b), err
}

// readBytes reads a string Save wrote into buf, grown if it must be, and
// returns it.
func readBytes(r io.Reader, buf []byte) ([]byte, error) {
	n, err := readUint32(r)
	if err != nil {
		return buf[:0], err
	}
	if n > maxString {
		return buf[:0], fmt.Errorf("a string of %d bytes is longer than any Save writes", n)
	}
	if uint32(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf[:0], noEOF(err)
	}
	return buf, nil
}

// noEOF turns a clean end of the data into an unexpected one: Load always
// knows how much more it needs.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

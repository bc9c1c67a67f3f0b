package uselite

import (
	"encoding/json"
	"fmt"
	"sync"

	"golang.org/x/text/unicode/norm"
)

const (
	// reserved is how many leading vocabulary entries (unknown, <s>, </s>,
	// extra ids) the tokenizer never produces by matching.
	reserved = 6
	unknown  = 0
	boundary = '\u2581' // SentencePiece's word-boundary symbol
)

// tokenizer is the SentencePiece unigram tokenizer of the TF.js USE model,
// reproduced quirk for quirk: scores are summed in float64 as JavaScript
// does, a best score of exactly 0 counts as "not set yet", and a position no
// piece starts at yields one unknown symbol of score 0.
type tokenizer struct {
	pieces []int32   // by id: length in UTF-16 units, the walk-back step
	scores []float64 // by id; a null score is 0
	// The trie is a map from (node<<21 | rune) to child node; node 0 is the
	// root. Runes fit in 21 bits.
	children map[uint64]int32
	ends     []int32 // per node: the id of the piece ending there, or -1
}

func newTokenizer(vocab []byte) (*tokenizer, error) {
	var entries [][2]json.RawMessage
	if err := json.Unmarshal(vocab, &entries); err != nil {
		return nil, fmt.Errorf("parse vocab.json: %w", err)
	}
	if len(entries) <= reserved {
		return nil, fmt.Errorf("vocab.json has %d entries, want more than %d", len(entries), reserved)
	}
	t := &tokenizer{
		pieces:   make([]int32, len(entries)),
		scores:   make([]float64, len(entries)),
		children: make(map[uint64]int32, 4*len(entries)),
		ends:     []int32{-1},
	}
	for id, e := range entries {
		var piece string
		if err := json.Unmarshal(e[0], &piece); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: piece: %w", id, err)
		}
		var score *float64
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: score: %w", id, err)
		}
		if score != nil {
			t.scores[id] = *score
		}
		// The walk back from the end steps by a piece's length; JavaScript
		// measures it in UTF-16 units, which equals runes for this
		// vocabulary (no piece lies outside the BMP).
		n := 0
		for _, r := range piece {
			n++
			if r > 0xFFFF {
				n++
			}
		}
		t.pieces[id] = int32(n)
		if id >= reserved {
			t.insert(piece, int32(id))
		}
	}
	t.scores[unknown] = 0 // an unmatched symbol scores 0 whatever the entry says
	return t, nil
}

func (t *tokenizer) insert(piece string, id int32) {
	node := int32(0)
	for _, r := range piece {
		key := uint64(node)<<21 | uint64(r)
		child, ok := t.children[key]
		if !ok {
			child = int32(len(t.ends))
			t.ends = append(t.ends, -1)
			t.children[key] = child
		}
		node = child
	}
	if node != 0 {
		t.ends[node] = id // a later duplicate piece wins, as in the JS trie
	}
}

// scratch holds the per-call buffers of encode.
type scratch struct {
	sym   []rune
	best  []float64
	words []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// prepare NFKC-normalises text and marks word boundaries into sym.
func prepare(sym []rune, text string) []rune {
	sym = sym[:0]
	if !norm.NFKC.IsNormalString(text) {
		text = norm.NFKC.String(text)
	}
	if text == "" {
		return sym
	}
	sym = append(sym, boundary)
	for _, r := range text {
		if r == ' ' {
			r = boundary
		}
		sym = append(sym, r)
	}
	return sym
}

// encode returns every token id of text (no truncation).
func (t *tokenizer) encode(text string) []int32 {
	sc := scratchPool.Get().(*scratch)
	defer func() {
		if cap(sc.sym) <= 1<<16 { // let huge texts' buffers go
			scratchPool.Put(sc)
		}
	}()
	sc.sym = prepare(sc.sym, text)
	sym := sc.sym
	n := len(sym)
	if n == 0 {
		return []int32{}
	}
	best := resize(sc.best, n+1)
	words := resize(sc.words, n+1)
	sc.best, sc.words = best, words
	// The JS code visits candidates by end position, then by ascending
	// start, the later one winning ties, and treats a best score of exactly
	// 0 as unset. Relaxing edges in ascending start order performs the same
	// updates per end in the same order, and best[i] is final once every
	// start below i is done, since only those end at i.
	for i := 0; i < n; i++ {
		node := int32(0)
		matched := false
		for j := i; j < n; j++ {
			child, ok := t.children[uint64(node)<<21|uint64(sym[j])]
			if !ok {
				break
			}
			node = child
			if id := t.ends[node]; id >= 0 {
				t.relax(best, words, i, j+1, id)
				matched = true
			}
		}
		if !matched {
			t.relax(best, words, i, i+1, unknown)
		}
	}
	count := 0
	prevUnk := false
	for i := n; i > 0; i -= int(t.pieces[words[i]]) {
		id := words[i]
		if !(prevUnk && id == unknown) {
			count++
		}
		prevUnk = id == unknown
	}
	// Walk back from the end, merging runs of unknowns, filling from the
	// back so the ids come out in text order.
	out := make([]int32, count)
	prevUnk = false
	k := count
	for i := n; i > 0; i -= int(t.pieces[words[i]]) {
		id := words[i]
		if !(prevUnk && id == unknown) {
			k--
			out[k] = id
		}
		prevUnk = id == unknown
	}
	return out
}

func (t *tokenizer) relax(best []float64, words []int32, start, end int, id int32) {
	score := t.scores[id] + best[start] // the unknown id scores 0
	if best[end] == 0 || score >= best[end] {
		best[end] = score
		words[end] = id
	}
}

// resize returns s with length n and every element zero, reusing its array.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// Tokenize returns the ids the model sees for text: NFKC-normalised,
// SentencePiece-tokenised exactly as the TF.js USE tokenizer, truncated to
// MaxTokens. The empty text has no tokens.
func (m *Model) Tokenize(text string) []int32 {
	ids := m.tok.encode(text)
	if len(ids) > MaxTokens {
		ids = ids[:MaxTokens]
	}
	return ids
}

// TokenizeAll is Tokenize without the truncation; Embed cuts its result into
// windows of MaxTokens.
func (m *Model) TokenizeAll(text string) []int32 { return m.tok.encode(text) }

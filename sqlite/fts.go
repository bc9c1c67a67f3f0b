package sqlite

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Column weights of bm25() over memories_fts (value, abstraction, cues). The
// abstraction is a curated one-line summary, so a term there says more about
// what the memory is about than the same term in the value: weight 2. Cues
// are short anchor phrases (names, places); BM25's length normalisation
// already favours a match in a short field, so they get a smaller boost.
const (
	weightValue       = 1.0
	weightAbstraction = 2.0
	weightCues        = 1.5
)

// maxQueryTerms bounds the OR-query built from free text, so that a long
// pasted paragraph cannot make one search arbitrarily expensive.
const maxQueryTerms = 64

// isCJK reports whether r belongs to a script written without spaces between
// words. The unicode61 tokenizer keeps a whole run of such characters as one
// token, so they are split into bigrams before indexing (see ftsText).
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r == 0x30FC, r == 0xFF70: // prolonged sound marks, used inside katakana words
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// ftsText returns s with every run of CJK characters replaced by its
// overlapping bigrams ("東京都" becomes "東京 京都"; a lone character stays
// as it is), separated from the surrounding text by spaces. Both indexed text
// and query terms go through it, so a CJK word inside a sentence is found as
// the phrase of its bigrams.
func ftsText(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isCJK(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s // the common case: nothing to rewrite
	}

	var b strings.Builder
	b.Grow(len(s) * 2)
	b.WriteString(s[:i])
	var run []rune
	flush := func() {
		switch len(run) {
		case 0:
			return
		case 1:
			b.WriteByte(' ')
			b.WriteRune(run[0])
		default:
			for j := 0; j+1 < len(run); j++ {
				b.WriteByte(' ')
				b.WriteRune(run[j])
				b.WriteRune(run[j+1])
			}
		}
		b.WriteByte(' ')
		run = run[:0]
	}
	for _, r := range s[i:] {
		if isCJK(r) {
			run = append(run, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

// cuesText is the text indexed for a memory's cues.
func cuesText(cues []string) string { return ftsText(strings.Join(cues, "\n")) }

// stopWords are English function words dropped from queries: they occur in
// almost every memory, so they only add cost and noise to an OR-query (each
// matching row is scored, so a term in half the corpus makes a search score
// half the corpus).
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a about after all also am an and any are as at be because been
		before being but by can could did do does doing done for from had has have having he her here
		hers him his how i if in into is it its just me more most my no nor not now of off on once only
		or other our ours out over own same she should so some such than that the their theirs them then
		there these they this those through to too under until up very was we were what when where which
		while who whom why will with would you your yours
		s t d ll m re ve`) { // what tokenising "Ana's", "don't", "we'll" leaves behind
		m[w] = true
	}
	return m
}()

// queryTerms splits free text into the distinct search terms the way the
// unicode61 tokenizer would: letters, digits and combining marks make up
// terms, everything else separates them. English stop words are dropped
// unless nothing else remains.
func queryTerms(q string) []string {
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	})
	seen := make(map[string]bool, len(words))
	var all, kept []string
	for _, w := range words {
		lw := strings.ToLower(w)
		if seen[lw] {
			continue
		}
		seen[lw] = true
		all = append(all, lw)
		if !stopWords[lw] {
			kept = append(kept, lw)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	if len(kept) > maxQueryTerms {
		kept = kept[:maxQueryTerms]
	}
	return kept
}

// matchQuery builds an FTS5 MATCH expression from free text: every term is a
// double-quoted string, so nothing a user types can be read as FTS5 syntax
// (NEAR, column filters, prefix stars, boolean operators), and the terms are
// ORed so that any of them can match while BM25 rewards documents matching
// more. It returns "" when q has no terms.
func matchQuery(q string) string {
	terms := queryTerms(q)
	if len(terms) == 0 {
		return ""
	}
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		// A CJK term becomes several bigrams inside one string: FTS5 reads
		// that as a phrase, which matches the bigrams only when adjacent.
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(ftsText(t)), `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

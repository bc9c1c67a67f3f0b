package textindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/engramhq/engram/textsearch"
)

// Column weights, as bm25() weighs the SQLite store's columns: a term in
// the curated one-line abstraction says most about what a memory is about,
// a cue (a name, a place) more than a word of the value.
const (
	WeightValue       = 1.0
	WeightAbstraction = 2.0
	WeightCues        = 1.5
)

// Tokens returns the indexed tokens of s in order: CJK runs become their
// bigrams (textsearch.Segment), everything but letters, digits and marks
// separates tokens (textsearch.IsSeparator), and tokens are lower-cased
// with the diacritics of Latin letters removed, as SQLite's unicode61
// tokenizer with remove_diacritics does.
func Tokens(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(textsearch.Segment(s)), textsearch.IsSeparator)
	for i, w := range words {
		words[i] = fold(w)
	}
	return words
}

// fold removes the combining marks that follow a Latin letter ("é" becomes
// "e"); marks of other scripts (Japanese voicing marks, Devanagari vowel
// signs) change the word and stay.
func fold(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	d := norm.NFD.String(w)
	var b strings.Builder
	b.Grow(len(d))
	latin := false
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			if latin {
				continue
			}
		} else {
			latin = r < 0x250 || (r >= 0x1E00 && r <= 0x1EFF)
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// queryTerms returns the terms of a free-text query as token sequences:
// one token for a word, several for a CJK run that was not split into its
// bigrams (matched as a phrase would be: all of them in one memory).
func queryTerms(q string) [][]string {
	var out [][]string
	for _, t := range textsearch.Terms(q) {
		if toks := Tokens(t); len(toks) > 0 {
			out = append(out, toks)
		}
	}
	return out
}

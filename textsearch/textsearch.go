package textsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/lang"
)

// MaxTerms bounds the terms taken from one query, so that a long pasted
// paragraph cannot make one search arbitrarily expensive.
const MaxTerms = 64

// IsCJK reports whether r belongs to a script written without spaces between
// words, whose runs Segment splits into bigrams.
func IsCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r == 0x30FC, r == 0xFF70: // prolonged sound marks, used inside katakana words
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Segment returns s with every run of CJK characters replaced by its
// overlapping bigrams ("東京都" becomes "東京 京都"; a lone character stays as
// it is), separated from the surrounding text by spaces. Both indexed text
// and query terms go through it, so a CJK word inside a sentence is found as
// the phrase of its bigrams. Text without CJK characters is returned as is.
func Segment(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if IsCJK(r) {
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
		if IsCJK(r) {
			run = append(run, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

// SegmentCues is the text indexed for a memory's cues: one per line, so a
// phrase never spans two cues.
func SegmentCues(cues []string) string { return Segment(strings.Join(cues, "\n")) }

// IsStopWord reports whether the lower-case word w is an English stop word
// (see lang.IsStopWord), dropped from queries that have other terms.
func IsStopWord(w string) bool { return lang.IsStopWord(lang.English, w) }

// IsSeparator reports whether r separates terms: punctuation, symbols,
// spaces and control and format characters do; letters, digits, combining
// marks, private-use characters and code points Unicode leaves unassigned
// do not. SQLite's unicode61 tokenizer reads private-use and unassigned
// code points as parts of words too, so a word of them is one term in
// both; it reads marks as separators, so a term holding one is a phrase
// there, which matches the same text all the same.
func IsSeparator(r rune) bool {
	if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r) {
		return false
	}
	return unicode.In(r, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Cs) // else unassigned
}

// Terms splits free text into its distinct lower-case search terms, in order
// of first appearance: letters, digits and combining marks make up terms,
// everything else separates them, so no character a user types survives as
// query syntax. English stop words are dropped unless nothing else remains,
// and at most MaxTerms are kept. A CJK term is returned whole; pass it
// through Segment to get its bigrams.
func Terms(q string) []string { return TermsLang(lang.English, q) }

// TermsLang is Terms for text in language tag: the stop words dropped are
// that language's (see lang.IsStopWord; "" and languages without a list
// drop English's).
func TermsLang(tag, q string) []string {
	words := strings.FieldsFunc(q, IsSeparator)
	seen := make(map[string]bool, len(words))
	var all, kept []string
	for _, w := range words {
		lw := strings.ToLower(w)
		if seen[lw] {
			continue
		}
		seen[lw] = true
		all = append(all, lw)
		if !lang.IsStopWord(tag, lw) {
			kept = append(kept, lw)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	if len(kept) > MaxTerms {
		kept = kept[:MaxTerms]
	}
	return kept
}

// Words returns the words of Segment(s), lower-cased, one space between
// them: the text a backend whose tokenizer has rules of its own (e-mail
// addresses, URLs, version numbers and hyphenated words kept whole)
// indexes, so that it finds exactly the terms Terms takes from a query.
func Words(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(Segment(s)), IsSeparator), " ")
}

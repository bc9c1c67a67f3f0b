package sqlite

import (
	"strings"

	"github.com/engramhq/engram/textsearch"
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

// ftsText is the text indexed for s: CJK runs become bigrams (see
// textsearch.Segment), since the unicode61 tokenizer would keep a whole run
// as one token.
func ftsText(s string) string { return textsearch.Segment(s) }

// cuesText is the text indexed for a memory's cues.
func cuesText(cues []string) string { return textsearch.SegmentCues(cues) }

// matchQuery builds an FTS5 MATCH expression from free text: every term is a
// double-quoted string, so nothing a user types can be read as FTS5 syntax
// (NEAR, column filters, prefix stars, boolean operators), and the terms are
// ORed so that any of them can match while BM25 rewards documents matching
// more. It returns "" when q has no terms.
func matchQuery(q string) string {
	terms := textsearch.Terms(q)
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

package retrieval

import (
	"context"
	"slices"
	"strings"
	"unicode"
)

// ChannelThesaurus is the channel of query expansion by a thesaurus (see
// Expansion).
const ChannelThesaurus = "thesaurus"

// Thesaurus gives the English words related to a word: its synonyms and
// the more specific and more general words of its senses (package wordnet
// implements it). It returns nil for a word it does not know, and when it
// cannot be read.
type Thesaurus interface {
	Related(word string) []string
}

// Expansion is the channel of the words related to an English query's
// content words: a full-text search for them (and their inflections),
// leaving out the query's own terms, which the bm25 channel searches, so
// that a question phrased more generally than what was said ("outdoor
// activities") finds the memories that name the thing ("surfing"). Its
// weight in fusion, below bm25's, weighs the related words below the
// query's own. It fires only on English queries whose terms are plain
// Latin words: the thesaurus is English, and a German or Spanish word
// spelled like an English one means something else. Names are not
// expanded.
type Expansion struct {
	Thesaurus Thesaurus
	// Max is the most related words searched for in all (0 means 24),
	// taken round-robin from the query's terms so that each contributes.
	Max int
	// WithQuery searches the related words together with the full-text
	// query (Gathering.Lexical) instead of on their own: a memory must
	// then match both to rank first.
	WithQuery bool
}

// Name implements Channel.
func (Expansion) Name() string { return ChannelThesaurus }

// Prepare implements Channel: the expansion has nothing to prepare.
func (x Expansion) Prepare(context.Context, *Gathering) (Gatherer, error) { return x, nil }

// Prefetch implements Gatherer; the expansion has nothing to prefetch.
func (Expansion) Prefetch(*Gathering) {}

// Gather implements Gatherer; it fails with the store's error.
func (x Expansion) Gather(ctx context.Context, g *Gathering) ([]Find, error) {
	if x.Thesaurus == nil || !english(g.Query.Lang) {
		return nil, nil
	}
	words := x.words(g.Query)
	if len(words) == 0 {
		return nil, nil
	}
	var text []string
	if x.WithQuery {
		text = append(text, g.Lexical())
	}
	for _, w := range words {
		text = append(text, strings.Fields(w)...)
		if g.Config.Inflect && !strings.Contains(w, " ") {
			text = append(text, Inflections(w)...)
		}
	}
	hits, err := g.SearchText(ctx, strings.Join(text, " "), g.Filter, g.Pool)
	if err != nil {
		return nil, err
	}
	return textFinds(hits), nil
}

// words returns the related words of q's expandable terms, round-robin,
// at most Max, leaving out the query's terms and their inflections.
func (x Expansion) words(q *Query) []string {
	limit := x.Max
	if limit <= 0 {
		limit = 24
	}
	own := map[string]bool{}
	for _, n := range q.Names {
		for _, w := range strings.Fields(strings.ToLower(n)) {
			own[w] = true
		}
	}
	var terms []string
	for _, t := range q.Terms {
		if !own[t] && plainWord(t) {
			terms = append(terms, t)
		}
	}
	for _, t := range q.Terms {
		own[t] = true
		for _, f := range Inflections(t) {
			own[f] = true
		}
	}
	if len(terms) == 0 {
		return nil
	}
	lists := make([][]string, len(terms))
	for i, t := range terms {
		lists[i] = x.Thesaurus.Related(t)
	}
	var out []string
	for depth := 0; len(out) < limit; depth++ {
		more := false
		for _, l := range lists {
			if depth >= len(l) {
				continue
			}
			more = true
			if w := l[depth]; !own[w] && !slices.Contains(out, w) && len(out) < limit {
				out = append(out, w)
			}
		}
		if !more {
			break
		}
	}
	return out
}

// plainWord reports whether t is a lower-case ASCII word of three letters
// or more, the only kind the thesaurus is asked about.
func plainWord(t string) bool {
	if len(t) < 3 {
		return false
	}
	for _, r := range t {
		if r > unicode.MaxASCII || !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

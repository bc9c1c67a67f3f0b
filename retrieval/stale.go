package retrieval

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// yieldStale orders a memory that states a fact a newer one replaced
// (see boost) right after that newer fact, when a fact memory that
// replaced it is among the candidates (see replaces), instead of lowering
// it by Config.Stale: the best of those facts takes the better of the two
// scores, and the stale memory the score just below it. The current state
// thus ranks where the channels placed the best of its states, first of
// them, and the older state follows it rather than leaving the question's
// reach: a question about a change ("how many have I done so far?")
// still finds what it was before. A stale memory whose replacement no
// channel found keeps the factor. The share of the score the stale memory
// lost is recorded as FactorStale, and a lifted fact's score before as
// FactorCurrent.
func yieldStale(q *Query, cs []*Candidate, cfg Config) {
	if cfg.Stale >= 0 || cfg.Stale <= -1 {
		return // no demotion, or one that left nothing to give back
	}
	for _, c := range cs {
		if _, stale := c.Factors[FactorStale]; !stale {
			continue
		}
		terms, tags := staleAsked(q, c.Memory, cfg.AsOf)
		var r *Candidate
		for _, o := range cs {
			if o != c && replaces(o, c, terms, tags) && (r == nil || o.Score > r.Score) {
				r = o
			}
		}
		if r == nil {
			continue
		}
		own := c.Score / (1 + cfg.Stale)
		if own > r.Score {
			if _, lifted := r.Factors[FactorCurrent]; !lifted {
				r.Factors[FactorCurrent] = r.Score
			}
			r.Score = own
		}
		c.Score = min(own, math.Nextafter(r.Score, math.Inf(-1)))
		if own > 0 {
			c.Factors[FactorStale] = c.Score/own - 1
		}
	}
}

// replaces reports whether r is a fact memory that may have replaced what
// stale states: a fact of the party stale speaks for (see partyOf), true
// since after stale, not itself stale for the question, and meeting one of
// terms (the stale words the question asks, in one of tags' languages) in
// its value or its attribute's question words.
func replaces(r, stale *Candidate, terms, tags []string) bool {
	k, fact := factKey(r.Memory)
	if !fact || !strings.HasPrefix(k, strings.ToLower(partyOf(stale.Memory))+"\x00") {
		return false
	}
	if _, old := r.Factors[FactorStale]; old || !since(r.Memory).After(since(stale.Memory)) {
		return false
	}
	words := slices.Concat(lang.Words(strings.ToLower(r.Memory.Value)), r.Memory.FactTerms())
	for _, w := range words {
		for _, tag := range tags {
			if slices.ContainsFunc(terms, func(t string) bool { return formOf(tag, w, t) }) {
				return true
			}
		}
	}
	return false
}

// asksStale reports whether the query has a word of a fact that m states
// and a newer memory replaced, by event time at when it is not nil (see
// staleAsked).
func asksStale(q *Query, m *engram.Memory, at *time.Time) bool {
	terms, _ := staleAsked(q, m, at)
	return len(terms) > 0
}

// staleAsked returns the stale terms of m, by event time at when it is
// not nil, that the query has: the word itself or another form of it, by
// the stem of the query's language, else of m's, else of any of stemLangs
// ("wohnte" asks what "wohnt" does, "vivía" what "vive" does); and the
// languages it read them in.
func staleAsked(q *Query, m *engram.Memory, at *time.Time) (asked, tags []string) {
	terms := m.StaleTermsAt(at)
	if len(terms) == 0 {
		return nil, nil
	}
	tags = []string{cmp.Or(q.Lang, m.Language)} // a short question's language may be undecided
	if tags[0] == "" {
		tags = stemLangs // and so may a short turn's
	}
	// The query's terms split what its words join ("habitait-elle").
	words := slices.Concat(lang.Words(strings.ToLower(q.Text)), q.Terms)
	for _, t := range terms {
		if slices.ContainsFunc(words, func(w string) bool {
			return slices.ContainsFunc(tags, func(tag string) bool { return formOf(tag, w, t) })
		}) {
			asked = append(asked, t)
		}
	}
	return asked, tags
}

// formOf reports whether w is t or another form of it in language tag:
// the same stem, in German the same but for the ge- of a participle
// ("gewohnt", "wohnt"), or, for Chinese, t within w (see hanWithin).
func formOf(tag, w, t string) bool {
	if w == t || hanWithin(w, t) || lang.Stem(tag, w) == lang.Stem(tag, t) {
		return true
	}
	return tag == lang.German && strings.HasPrefix(w, "ge") && lang.Stem(tag, w[2:]) == lang.Stem(tag, t)
}

// stemLangs are the languages whose stems asksStale tries when neither
// the question's nor the turn's language is decided.
var stemLangs = []string{lang.English, lang.German, lang.Spanish, lang.French}

// hanWithin reports whether t, a word in Han script, is within w: Chinese
// writes no spaces between words, so a question's run of characters
// ("wei现在住在哪里") holds the words it asks with ("住在").
func hanWithin(w, t string) bool {
	return t != "" && strings.ContainsFunc(t, func(r rune) bool { return unicode.Is(unicode.Han, r) }) && strings.Contains(w, t)
}

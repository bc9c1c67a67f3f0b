package retrieval

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
	"github.com/engramhq/engram/textsearch"
)

// wordGroups returns, for a question that names a person (or asks about
// the user) and asks with words of its own ("where does Bob work?":
// work), the memories among cs of that person that hold every one of
// those words, when they were said at different times: the states of
// what the words name. A question in a language written without spaces
// is left to the other groups: its words are not known.
func wordGroups(q *Query, cs []*Candidate) [][]*Candidate {
	lead, ok := leadingWords[q.Lang]
	if !ok {
		lead = leadingWords[lang.English]
	}
	words := slices.DeleteFunc(queryWords(q), func(w string) bool {
		return lead[w] || frameWords[w] || tenseWord(q.Lang, w) || strings.ContainsFunc(w, textsearch.IsCJK)
	})
	if len(words) == 0 || len(q.Names) == 0 && !q.AsksUser {
		return nil
	}
	names := nameKeys(q.Names)
	var g []*Candidate
	for _, c := range cs {
		if ofAsked(q, names, c.Memory) && holdsAll(q.Lang, words, c.Memory.Value) {
			g = append(g, c)
		}
	}
	if len(g) < 2 || !changed(g) {
		return nil
	}
	return [][]*Candidate{g}
}

// frameWords are words of a question's frame, not of what it asks about:
// the unit a question about time asks for ("which day"), and light verbs
// ("go swimming").
var frameWords = wordSet(`day days date time year month week weekday go goes do does get gets
	tag tage datum zeit jahr monat woche wochentag
	día días fecha hora año mes semana
	jour jours heure année mois semaine`)

// ofAsked reports whether m is about whom the question asks: said by a
// person it names or, for a fact, of that person; or said by the user for
// a question about the user that names no one.
func ofAsked(q *Query, names []string, m *engram.Memory) bool {
	subj, _ := m.Metadata[engram.MetaFactSubject].(string)
	for _, who := range []string{m.Speaker(), subj} {
		if who != "" && len(names) > 0 && matchesName(who, names) {
			return true
		}
	}
	return len(names) == 0 && q.AsksUser && m.Role() == "user"
}

// holdsAll reports whether text has a word like each of words (see
// sameWord).
func holdsAll(tag string, words []string, text string) bool {
	have := lang.Words(strings.ToLower(text))
	for _, w := range words {
		if !slices.ContainsFunc(have, func(h string) bool { return sameWord(tag, w, h) }) {
			return false
		}
	}
	return true
}

// tenseWord reports whether w alone says when ("now", "früher"): a word
// of the question's time, not of what it asks about.
func tenseWord(tag string, w string) bool {
	for _, set := range []map[string]*regexp.Regexp{pastMarkers, nowMarkers} {
		re, ok := set[tag]
		if !ok {
			re = set[lang.English]
		}
		if re.MatchString(w) {
			return true
		}
	}
	return false
}

// formGroups returns the groups of memories among cs that state no fact
// and read as states of one thing: texts of the same form (SameFormAt),
// no source in common, said at different times.
func formGroups(cs []*Candidate) [][]*Candidate {
	sets := make([]map[string]bool, len(cs))
	for i, c := range cs {
		if _, fact := factKey(c.Memory); !fact {
			sets[i] = formWords(c.Memory.Value)
		}
	}
	parent := make([]int, len(cs))
	for i := range parent {
		parent[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			if sameForm(cs[i], cs[j], sets[i], sets[j]) {
				parent[root(j)] = root(i)
			}
		}
	}
	by := map[int][]*Candidate{}
	var roots []int
	for i, c := range cs {
		r := root(i)
		if by[r] == nil {
			roots = append(roots, r)
		}
		by[r] = append(by[r], c)
	}
	var out [][]*Candidate
	for _, r := range roots {
		if g := by[r]; len(g) > 1 && changed(g) {
			out = append(out, g)
		}
	}
	return out
}

// minFormWords is the fewest words a text needs to be compared by form: a
// greeting is the same whenever it is said.
const minFormWords = 4

// sameForm reports whether two memories, with word sets a and b, state
// the same thing at different times.
func sameForm(x, y *Candidate, a, b map[string]bool) bool {
	if len(a) < minFormWords || len(b) < minFormWords || sharesSource(x.Memory, y.Memory) {
		return false
	}
	if since(x.Memory).Sub(since(y.Memory)).Abs() < time.Hour {
		return false // said together: one statement in two memories, not two states
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) >= SameFormAt*float64(len(a)+len(b)-both)
}

// formWords returns the words of a text, lower case, a run of CJK
// characters as its character pairs.
func formWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range lang.Words(strings.ToLower(text)) {
		for _, p := range strings.Fields(textsearch.Segment(w)) {
			out[p] = true
		}
	}
	return out
}

func sharesSource(a, b *engram.Memory) bool {
	return slices.ContainsFunc(a.Sources, func(s string) bool { return slices.Contains(b.Sources, s) })
}

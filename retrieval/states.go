package retrieval

import (
	"cmp"
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
// is read by its characters (see cjkWords).
func wordGroups(q *Query, cs []*Candidate) [][]*Candidate {
	cjk := strings.ContainsFunc(q.Text, textsearch.IsCJK)
	words := askedWords(q)
	if cjk {
		words = cjkWords(q.Text)
	}
	if len(words) == 0 {
		return nil
	}
	names := nameKeys(q.Names)
	var g []*Candidate
	for _, c := range cs {
		if !ofAsked(q, names, c.Memory) {
			continue
		}
		if cjk && holdsEvery(words, c.Memory.Value) || !cjk && holdsAll(cmp.Or(q.Lang, c.Memory.Language), words, c.Memory.Value) {
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

// askedWords returns the words a question asks with: its content words
// without the names, the question words and auxiliaries of its language,
// the words of its frame and those that say when.
func askedWords(q *Query) []string {
	lead, ok := leadingWords[q.Lang]
	if !ok {
		lead = leadingWords[lang.English]
	}
	return slices.DeleteFunc(queryWords(q), func(w string) bool {
		return lead[w] || frameWords[w] || tenseWord(q.Lang, w)
	})
}

// ofAsked reports whether m is about whom the question asks: said by a
// person it names (or, in a language written without spaces, whose name
// its text holds) or, for a fact, of that person; or said by the user for
// a question about the user that names no one.
func ofAsked(q *Query, names []string, m *engram.Memory) bool {
	subj, _ := m.Metadata[engram.MetaFactSubject].(string)
	text := strings.ToLower(q.Text)
	for _, who := range []string{m.Speaker(), subj} {
		switch {
		case who == "":
		case len(names) > 0 && matchesName(who, names):
			return true
		case strings.ContainsFunc(text, textsearch.IsCJK) && strings.Contains(text, strings.ToLower(who)):
			return true
		}
	}
	return len(names) == 0 && q.AsksUser && m.Role() == "user"
}

// cjkSeparators are the characters and words of a Chinese question that
// say how it asks, not what about: question words, particles, the frame
// of a question about time ("星期几") and the words that say when.
var cjkSeparators = []string{"哪", "里", "裡", "儿", "什", "么", "麼", "谁", "誰", "几", "幾", "吗", "嗎", "呢", "吧",
	"多少", "怎", "样", "樣", "的", "是", "了", "星期", "礼拜", "时候", "時候",
	"现在", "現在", "目前", "如今", "当前", "以前", "之前", "原来", "原來", "过去", "過去", "曾经", "曾經", "最近", "还", "還"}

// cjkWords returns the words a question in Chinese asks with: its runs of
// CJK characters split at cjkSeparators, as character pairs ("Wei在哪里工作"
// asks with 工作), or as single characters when no run is longer ("喝什么":
// 喝).
func cjkWords(text string) []string {
	for _, sep := range cjkSeparators {
		text = strings.ReplaceAll(text, sep, " ")
	}
	var pairs, singles []string
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !textsearch.IsCJK(r) }) {
		rs := []rune(run)
		if len(rs) == 1 {
			singles = append(singles, run)
		}
		for i := 0; i+1 < len(rs); i++ {
			pairs = append(pairs, string(rs[i:i+2]))
		}
	}
	if len(pairs) > 0 {
		return pairs
	}
	return singles
}

// holdsEvery reports whether text holds every one of parts.
func holdsEvery(parts []string, text string) bool {
	return !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(text, p) })
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

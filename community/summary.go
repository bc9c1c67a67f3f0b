package community

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/engramhq/engram"
)

// Summary limits.
const (
	MaxNames     = 5 // names a summary opens with
	MaxSentences = 3 // sentences it quotes, from as many memories
)

// Member is an entity of a community with what ranks it.
type Member struct {
	ID       string
	Name     string
	Keys     []string // normalised name and aliases (engram.Entity.Keys)
	Degree   float64  // summed weight of its edges within the community
	Mentions int
}

// Source is a memory that mentions members.
type Source struct {
	ID      string
	Text    string
	Members int // how many members it mentions
	At      int64
}

// Central sorts ms most central first: by degree within the community,
// then mentions, then id.
func Central(ms []Member) {
	slices.SortStableFunc(ms, func(a, b Member) int {
		return cmp.Or(cmp.Compare(b.Degree, a.Degree), cmp.Compare(b.Mentions, a.Mentions), cmp.Compare(a.ID, b.ID))
	})
}

// Summarize returns the names of the most central members (ms sorted by
// Central), the extractive summary, and the ids of the sources it quotes
// (sorted): the names, then from each of the sources naming the most
// members (newest first on a tie) its sentence naming the most, each
// sentence once.
func Summarize(ms []Member, srcs []Source) (names []string, summary string, quoted []string) {
	for _, m := range ms[:min(len(ms), MaxNames)] {
		names = append(names, m.Name)
	}
	var keys []string
	for _, m := range ms {
		keys = append(keys, m.Keys...)
	}
	srcs = slices.Clone(srcs)
	slices.SortStableFunc(srcs, func(a, b Source) int {
		return cmp.Or(cmp.Compare(b.Members, a.Members), cmp.Compare(b.At, a.At), cmp.Compare(b.ID, a.ID))
	})
	var sents []string
	for _, s := range srcs {
		if len(sents) == MaxSentences {
			break
		}
		best := BestSentence(s.Text, keys)
		if best == "" || slices.Contains(sents, best) {
			continue
		}
		sents = append(sents, best)
		quoted = append(quoted, s.ID)
	}
	slices.Sort(quoted)
	summary = strings.Join(names, ", ")
	if len(sents) > 0 {
		summary += ": " + strings.Join(sents, " ")
	}
	return names, truncate(summary, engram.MaxContentBytes), quoted
}

// BestSentence returns the sentence of text that names the most of keys
// (normalised names), the first on a tie; "" for an empty text.
func BestSentence(text string, keys []string) string {
	best, bestN := "", -1
	for _, s := range Sentences(text) {
		n := 0
		norm := " " + engram.NormalizeName(s) + " "
		for _, k := range keys {
			if names(norm, k) {
				n++
			}
		}
		if n > bestN {
			best, bestN = s, n
		}
	}
	return best
}

// names reports whether the normalised text (padded with spaces) holds the
// key as whole words, or anywhere for a key in a script written without
// spaces.
func names(norm, key string) bool {
	if key == "" {
		return false
	}
	if strings.IndexFunc(key, func(r rune) bool {
		return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
	}) >= 0 {
		return strings.Contains(norm, key)
	}
	return strings.Contains(norm, " "+key+" ")
}

// Sentences splits text after '.', '!', '?' followed by a space or the end,
// and after the full-width '。', '！', '？'; sentences are trimmed and
// empty ones dropped.
func Sentences(text string) []string {
	var out []string
	rs := []rune(text)
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(string(rs[start:end])); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i, r := range rs {
		switch r {
		case '。', '！', '？':
			flush(i + 1)
		case '.', '!', '?':
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				flush(i + 1)
			}
		case '\n':
			flush(i + 1)
		}
	}
	flush(len(rs))
	return out
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

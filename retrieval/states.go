package retrieval

import (
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
	"github.com/engramhq/engram/textsearch"
)

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

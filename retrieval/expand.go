package retrieval

import (
	"github.com/engramhq/engram"
)

// Dedup drops every episodic candidate whose cited episodes are all cited
// by candidates ranked above it: it would add no source a reader has not
// seen. Candidates without sources are kept, and so are the other kinds: a
// fact or preference distilled from an episode says what the episode's
// words do not.
func Dedup(cs []*Candidate) []*Candidate {
	seen := map[string]bool{}
	out := cs[:0]
	for _, c := range cs {
		src := c.Memory.Sources
		covered := len(src) > 0 && c.Memory.Kind == engram.KindEpisodic
		for _, s := range src {
			if !seen[s] {
				covered = false
				break
			}
		}
		if covered {
			continue
		}
		for _, s := range src {
			seen[s] = true
		}
		out = append(out, c)
	}
	return out
}

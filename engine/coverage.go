package engine

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine/index"
)

// The thresholds of the warning about languages the embedder does not
// cover: it is given once more than half of at least coverageMin recent
// memories of a namespace are in such languages. Counts are halved when a
// namespace reaches coverageWindow memories, so that old memories weigh
// less than recent ones.
const (
	coverageMin     = 20
	coverageWindow  = 200
	coverageTracked = 10000 // namespaces counted at once; beyond, new ones are not
)

// coverage counts, in memory, the languages of the memories each tenant
// and user writes, to warn once per namespace and process when most of
// them are in languages the embedder does not declare (see
// engram.LanguageCoverer): the dense channel is weighed down for those,
// and the operator should know to configure a multilingual embedder. It
// reads nothing from the store.
type coverage struct {
	emb    string
	covers func(tag string) bool
	log    *slog.Logger

	mu     sync.Mutex
	counts map[engram.Namespace]*langCounts
	warned map[engram.Namespace]bool
}

// langCounts are the recent memories of one namespace: all of them, and
// per language those the embedder does not cover.
type langCounts struct {
	total     int
	uncovered map[string]int
}

// newCoverage returns the counter for an engine's vectors, or nil when
// there is no embedder or it declares no languages (it covers them all).
func newCoverage(v *index.Vectors, log *slog.Logger) *coverage {
	if v == nil {
		return nil
	}
	// Optional on the embedder: uselite declares its languages (and
	// embedcache and embedbatch pass them on); one that lacks it (openai)
	// covers every language, so there is nothing to count.
	if lc, ok := v.Embedder().(engram.LanguageCoverer); !ok || len(lc.Languages()) == 0 {
		return nil
	}
	return &coverage{emb: v.Embedder().Name(), covers: v.Covers, log: log,
		counts: map[engram.Namespace]*langCounts{}, warned: map[engram.Namespace]bool{}}
}

// note counts memories written to namespace n and warns when the
// namespace has just crossed the threshold.
func (c *coverage) note(n engram.Namespace, ms []engram.Memory) {
	if c == nil || len(ms) == 0 {
		return
	}
	key := engram.Namespace{Org: n.Org, Project: n.Project, User: n.User}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned[key] {
		return
	}
	lc := c.counts[key]
	if lc == nil {
		if len(c.counts) >= coverageTracked {
			return
		}
		lc = &langCounts{uncovered: map[string]int{}}
		c.counts[key] = lc
	}
	for i := range ms {
		lc.add(ms[i].Language, c.covers)
	}
	if !lc.mostlyUncovered() {
		return
	}
	c.warned[key] = true
	delete(c.counts, key)
	c.log.Warn(fmt.Sprintf("most memories of namespace %s are in languages the embedder %s does not cover (%s); "+
		"dense retrieval is weighed down for them; configure a multilingual embedder with --embedder openai",
		nsLabel(key), c.emb, lc.shares()),
		"namespace", nsLabel(key), "embedder", c.emb)
}

// add counts one memory in language tag; "" (undecided) counts as
// covered.
func (lc *langCounts) add(tag string, covers func(string) bool) {
	if lc.total >= coverageWindow {
		lc.total /= 2
		for k, v := range lc.uncovered {
			lc.uncovered[k] = v / 2
		}
	}
	lc.total++
	if tag != "" && !covers(tag) {
		lc.uncovered[tag]++
	}
}

// mostlyUncovered reports whether more than half of at least coverageMin
// memories are uncovered.
func (lc *langCounts) mostlyUncovered() bool {
	n := 0
	for _, v := range lc.uncovered {
		n += v
	}
	return lc.total >= coverageMin && 2*n > lc.total
}

// shares renders the uncovered languages with their share of the
// memories, most frequent first: "de 80%, fr 5%".
func (lc *langCounts) shares() string {
	tags := make([]string, 0, len(lc.uncovered))
	for t, v := range lc.uncovered {
		if v > 0 {
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool {
		a, b := lc.uncovered[tags[i]], lc.uncovered[tags[j]]
		return a > b || a == b && tags[i] < tags[j]
	})
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = fmt.Sprintf("%s %d%%", t, 100*lc.uncovered[t]/lc.total)
	}
	return strings.Join(parts, ", ")
}

// nsLabel names a tenant and user as org/project/user.
func nsLabel(n engram.Namespace) string {
	s := n.Org + "/" + n.Project
	if n.User != "" {
		s += "/" + n.User
	}
	return s
}

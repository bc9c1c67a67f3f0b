package retrieval

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// recordingText is a text index that records the queries it is asked and
// ranks "said" first for a query naming Caroline, "other" first otherwise.
type recordingText struct {
	mu      sync.Mutex
	queries []string
}

func (x *recordingText) SearchText(query string, _ engram.MemoryFilter, limit int) []TextScore {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.queries = append(x.queries, query)
	if strings.Contains(query, "caroline") {
		return []TextScore{{ID: "said", Score: 2}, {ID: "other", Score: 1}}
	}
	return []TextScore{{ID: "other", Score: 2}, {ID: "said", Score: 1}}
}

func (x *recordingText) Judge(*engram.Memory, engram.MemoryFilter) (bool, bool) { return true, true }

func (x *recordingText) Memories(ids []string, _ map[string]*engram.Memory) []string { return ids }

func (x *recordingText) Remember([]engram.Memory) {}

func (x *recordingText) asked() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.queries)
}

// TestPrefetchText: the full-text channel takes the ranking PrefetchText
// started when its query is the same once other channels have found
// candidates, and ranks again, with the query it has, when it is not (a
// speaker of a candidate named in the question is dropped from it).
func TestPrefetchText(t *testing.T) {
	ctx := context.Background()
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	said := engram.Memory{ID: "said", Namespace: ns, Value: "Caroline went hiking in the Alps",
		Metadata: map[string]any{engram.MetaSpeaker: "Caroline"}}
	other := engram.Memory{ID: "other", Namespace: ns, Value: "a hike"}
	r := &countingReader{ms: map[string]engram.Memory{"said": said, "other": other}}
	q := Analyze("What did Caroline say about hiking?", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name        string
		found       []engram.Memory // by the channels before the full-text one
		wantQueries int
		wantFirst   string // by the full-text channel
	}{
		{"same query", []engram.Memory{other}, 1, "said"},
		{"speaker dropped", []engram.Memory{said}, 2, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := &recordingText{}
			g := NewGathering(r, engram.ScopeOf(ns), engram.MemoryFilter{}, q, &Config{DropSpeakers: true}, 10)
			g.Text = idx
			BM25{}.Prefetch(g)
			for i := range tc.found {
				g.Add(ChannelDense, []Find{{Memory: &tc.found[i], Rank: i + 1, Score: 1}})
			}
			finds, err := BM25{}.Gather(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			g.Add(ChannelBM25, finds)
			if pf := g.prefetch; pf != nil {
				<-pf.found // a ranking not taken still runs to its end
			}
			asked := idx.asked()
			if len(asked) != tc.wantQueries {
				t.Fatalf("the index was asked %q, want %d queries", asked, tc.wantQueries)
			}
			if !slices.Contains(asked, g.Lexical()) {
				t.Errorf("the index was asked %q, never the channel's query %q", asked, g.Lexical())
			}
			for id, c := range g.byID {
				i := slices.IndexFunc(c.Ranks, func(h engram.ChannelHit) bool { return h.Channel == ChannelBM25 })
				if i < 0 {
					t.Errorf("%s has no full-text rank", id)
				} else if first := c.Ranks[i].Rank == 1; first != (id == tc.wantFirst) {
					t.Errorf("full-text rank of %s = %d, want %s first: the ranking of another query served", id, c.Ranks[i].Rank, tc.wantFirst)
				}
			}
		})
	}
}

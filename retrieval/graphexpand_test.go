package retrieval_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// fakeGraph is a store's graph: mentions by entity and relations. Only
// the methods an expansion calls are implemented.
type fakeGraph struct {
	engram.Reader
	mentions  map[string][]string // entity → memories, newest first
	relations []engram.Relation
}

func (f *fakeGraph) MemoryMentions(_ context.Context, _ engram.Scope, ids []string) ([]engram.Mention, error) {
	var out []engram.Mention
	for e, ms := range f.mentions {
		for _, m := range ms {
			if slices.Contains(ids, m) {
				out = append(out, engram.Mention{EntityID: e, MemoryID: m})
			}
		}
	}
	return out, nil
}

func (f *fakeGraph) EntityMentions(_ context.Context, _ engram.Scope, ids []string, limit int) ([]engram.Mention, error) {
	var out []engram.Mention
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range ids {
		for i, m := range f.mentions[e] {
			out = append(out, engram.Mention{EntityID: e, MemoryID: m, At: at.Add(-time.Duration(i) * time.Hour)})
		}
	}
	return out[:min(limit, len(out))], nil
}

func (f *fakeGraph) Relations(_ context.Context, _ engram.Scope, ids []string, _ engram.RelationFilter) ([]engram.Relation, error) {
	var out []engram.Relation
	for _, r := range f.relations {
		if slices.Contains(ids, r.Source) || slices.Contains(ids, r.Target) {
			out = append(out, r)
		}
	}
	return out, nil
}

// TestEntitiesExpand checks what an expansion through the graph reaches
// from a hit: the other memories of its entity, those of a related
// entity (the heavier relation's more strongly), nothing through a hub
// entity, and at most Limit memories.
func TestEntitiesExpand(t *testing.T) {
	hub := make([]string, retrieval.GraphHub+1)
	for i := range hub {
		hub[i] = "h" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	hub[0] = "hit"
	f := &fakeGraph{
		mentions: map[string][]string{
			"clara":   {"hit", "m-clara"},
			"cello":   {"m-cello"},
			"porto":   {"m-porto"},
			"speaker": hub,
		},
		relations: []engram.Relation{
			{Source: "clara", Target: "cello", Weight: 3},
			{Source: "porto", Target: "clara", Weight: 1},
		},
	}
	g := retrieval.NewGathering(f, engram.Scope{Org: "o", Project: "p", User: "u"}, engram.MemoryFilter{}, nil, nil, 10)
	from := []*retrieval.Candidate{{Memory: &engram.Memory{ID: "hit"}, Score: 1}}
	links, err := retrieval.Entities{MentionShare: 0.9, RelationShare: 0.6, Limit: 10}.Expand(context.Background(), g, from)
	if err != nil {
		t.Fatal(err)
	}
	share := map[string]float64{}
	for _, l := range links {
		if l.From != "hit" || l.Via != retrieval.ChannelEntity {
			t.Errorf("link %+v", l)
		}
		share[l.ID] = l.Share
	}
	if len(share) != 3 || share["m-clara"] == 0 || share["m-cello"] == 0 || share["m-porto"] == 0 {
		t.Fatalf("reached %v, want m-clara, m-cello, m-porto and nothing through the hub", share)
	}
	if !(share["m-cello"] > share["m-porto"]) {
		t.Errorf("heavier relation's memory %v <= lighter's %v", share["m-cello"], share["m-porto"])
	}
	links, _ = retrieval.Entities{MentionShare: 0.9, RelationShare: 0.6, Limit: 1}.Expand(context.Background(), g, from)
	if len(links) != 1 {
		t.Errorf("Limit 1: %d links", len(links))
	}
	links, _ = retrieval.Entities{MentionShare: 0.9, Limit: 10}.Expand(context.Background(), g, from)
	if len(links) != 1 || links[0].ID != "m-clara" {
		t.Errorf("without relations: %+v, want m-clara only", links)
	}
}

package enginetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// testGraphChannel: the graph channel finds, two relations away from the
// entity the query names, a memory sharing no word with the query, within
// the caller's user only: bob's memories about his own Maria, and those of
// another tenant, never reach alice.
func testGraphChannel(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Channels: []retrieval.Channel{retrieval.Graph{}}})
	add := func(ns engram.Namespace, values ...string) []string {
		var ids []string
		for _, v := range values {
			ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: v}}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, ms[0].ID)
		}
		return ids
	}
	mine := add(nsA, "At the bakery Maria works with Tomás.", "Last year Tomás went hiking with Lucía.", "Yesterday Lucía bought a new kayak.")
	theirs := add(nsB, "At the bakery Maria works with Tomás.", "Yesterday Tomás bought a canoe.")
	other := engram.Namespace{Org: "globex", Project: "p", User: "alice"}
	theirs = append(theirs, add(other, "At the port Maria met Tomás.")...)
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "What does Maria like?", K: 20, Channels: []string{retrieval.ChannelGraph}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Memory.ID)
	}
	for _, id := range mine {
		if !slices.Contains(got, id) {
			t.Errorf("alice's memory %s not found by the graph: %v", id, got)
		}
	}
	for _, id := range theirs {
		if slices.Contains(got, id) {
			t.Errorf("the graph found another user's or tenant's memory %s", id)
		}
	}
}

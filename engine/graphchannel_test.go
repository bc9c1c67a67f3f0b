package engine_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/sqlite"
)

// graphEngine opens an engine over a fresh SQLite store with the graph
// channel, spreading with walk.
func graphEngine(t *testing.T, walk func(map[string]float64, []retrieval.Edge) map[string]float64) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, db, engine.Options{Channels: []retrieval.Channel{retrieval.Graph{Walk: walk}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	return e
}

// addValues adds one memory per value in ns and returns their ids.
func addValues(t *testing.T, e *engine.Engine, ns engram.Namespace, meta map[string]any, values ...string) []string {
	t.Helper()
	ctx := engram.WithActor(context.Background(), "test")
	var ids []string
	for _, v := range values {
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: v, Metadata: meta}}})
		if err != nil {
			t.Fatalf("add %q: %v", v, err)
		}
		ids = append(ids, ms[0].ID)
	}
	return ids
}

// graphHits searches with the graph channel alone and returns the ids found.
func graphHits(t *testing.T, e *engine.Engine, s engram.Scope, q string, f engram.MemoryFilter) []string {
	t.Helper()
	res, err := e.Search(context.Background(), engram.SearchRequest{Scope: s, Query: q, K: 20, Channels: []string{retrieval.ChannelGraph}, Filter: f})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

var walks = map[string]func(map[string]float64, []retrieval.Edge) map[string]float64{
	"pagerank": retrieval.PageRank, "spread": retrieval.SpreadActivation,
}

// TestGraphChannelHops: a memory sharing no word with the query is found
// when it names an entity one or two relations from the one the query
// names; an unrelated one is not.
func TestGraphChannelHops(t *testing.T) {
	for name, walk := range walks {
		t.Run(name, func(t *testing.T) {
			e := graphEngine(t, walk)
			ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
			ids := addValues(t, e, ns, nil,
				"At the bakery Maria works with Tomás.",
				"Last year Tomás went hiking with Lucía.",
				"Yesterday Lucía bought a new kayak.",
				"In winter Gerhard repairs old clocks.")
			got := graphHits(t, e, engram.ScopeOf(ns), "What does Maria like?", engram.MemoryFilter{})
			for i, want := range ids[:3] {
				if !slices.Contains(got, want) {
					t.Errorf("memory %d (%s hops) not found: %v", i, []string{"0", "1", "2"}[i], got)
				}
			}
			if slices.Contains(got, ids[3]) {
				t.Errorf("an unrelated memory was found: %v", got)
			}
		})
	}
}

// TestGraphChannelScope: two users with an entity of the same name never
// see each other's memories through the graph.
func TestGraphChannelScope(t *testing.T) {
	e := graphEngine(t, nil)
	alice := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	bob := engram.Namespace{Org: "acme", Project: "p", User: "bob"}
	other := engram.Namespace{Org: "globex", Project: "p", User: "alice"}
	mine := addValues(t, e, alice, nil, "In spring Maria met Pablo at the station.")
	theirs := addValues(t, e, bob, nil, "In spring Maria met Pablo at the port.", "At night Pablo plays the cello.")
	theirs = append(theirs, addValues(t, e, other, nil, "In spring Maria met Pablo at the museum.")...)
	got := graphHits(t, e, engram.ScopeOf(alice), "Where is Maria?", engram.MemoryFilter{})
	if !slices.Contains(got, mine[0]) {
		t.Errorf("alice's own memory not found: %v", got)
	}
	for _, id := range theirs {
		if slices.Contains(got, id) {
			t.Errorf("alice's search found another user's or tenant's memory %s", id)
		}
	}
}

// TestGraphChannelSession: a search narrowed to a session walks only
// the part of the graph its own memories make. Session s2 ties Pablo to
// Maria and names Ottokar; s1 names Maria and Pablo apart. In s1, a
// question about Ottokar (whom only s2 names) finds nothing, and one
// about Maria does not reach Pablo's memory through s2's tie, though both
// memories are s1's own.
func TestGraphChannelSession(t *testing.T) {
	for name, walk := range walks {
		t.Run(name, func(t *testing.T) {
			e := graphEngine(t, walk)
			s1 := engram.Namespace{Org: "acme", Project: "p", User: "alice", Session: "s1"}
			s2 := s1
			s2.Session = "s2"
			mine := addValues(t, e, s1, nil, "In spring Maria planted tulips.", "At night Pablo plays the cello.")
			addValues(t, e, s2, nil, "In summer Maria met Pablo and Ottokar at the station.")
			if got := graphHits(t, e, engram.ScopeOf(s1), "Where is Ottokar?", engram.MemoryFilter{}); len(got) != 0 {
				t.Errorf("s1's search for a name only s2 says found %v", got)
			}
			got := graphHits(t, e, engram.ScopeOf(s1), "What did Maria plant?", engram.MemoryFilter{})
			if !slices.Contains(got, mine[0]) {
				t.Errorf("s1's own memory of Maria not found: %v", got)
			}
			if slices.Contains(got, mine[1]) {
				t.Errorf("s1's search for Maria reached Pablo's memory through a tie only s2 makes: %v", got)
			}
		})
	}
}

// TestGraphChannelFilter: the caller's filter bounds what the graph finds.
func TestGraphChannelFilter(t *testing.T) {
	e := graphEngine(t, nil)
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	work := addValues(t, e, ns, map[string]any{"topic": "work"}, "At work Maria and Tomás share an office.")
	home := addValues(t, e, ns, map[string]any{"topic": "home"}, "On Sundays Tomás cooks paella.")
	got := graphHits(t, e, engram.ScopeOf(ns), "Maria", engram.MemoryFilter{Metadata: map[string]any{"topic": "work"}})
	if !slices.Contains(got, work[0]) || slices.Contains(got, home[0]) {
		t.Errorf("filtered graph hits = %v, want %s and not %s", got, work[0], home[0])
	}
}

// TestGraphChannelLanguages: German and Spanish names are found under
// other spellings (transliterated umlaut, no accent, a given name alone).
func TestGraphChannelLanguages(t *testing.T) {
	e := graphEngine(t, nil)
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	ids := addValues(t, e, ns, nil,
		"Seit Jahren arbeitet Jürgen Müller mit Björn zusammen.",
		"Am Abend spielt Björn Geige.",
		"Desde enero José Martínez vive con Inés.",
		"Ahora Inés estudia medicina.")
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"Was macht Juergen Mueller?", ids[:2]},
		{"¿Qué hace Jose Martinez?", ids[2:]},
		{"Qué hace José?", ids[2:]},
	} {
		got := graphHits(t, e, engram.ScopeOf(ns), c.q, engram.MemoryFilter{})
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %s not found in %v", c.q, w, got)
			}
		}
	}
}

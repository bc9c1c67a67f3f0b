package engine_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/sqlite"
)

// fakeThesaurus relates words by a fixed table and records what it is
// asked.
type fakeThesaurus struct {
	mu      sync.Mutex
	related map[string][]string
	asked   []string
}

func (f *fakeThesaurus) Related(w string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, w)
	return f.related[w]
}

func (f *fakeThesaurus) questions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

// thesaurusEngine opens an engine over a fresh SQLite store with the
// query-expansion channel over th.
func thesaurusEngine(t *testing.T, th retrieval.Thesaurus) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, db, engine.Options{Channels: []retrieval.Channel{retrieval.Expansion{Thesaurus: th}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	return e
}

// expansionHits searches with the expansion channel alone.
func expansionHits(t *testing.T, e *engine.Engine, s engram.Scope, q string) []string {
	t.Helper()
	res, err := e.Search(context.Background(), engram.SearchRequest{Scope: s, Query: q, K: 20, Channels: []string{retrieval.ChannelThesaurus}})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

// TestExpansionFindsRelatedWords: an English question phrased more
// generally than the memory ("outdoor activities") finds it through the
// words the thesaurus relates ("surfing"), which share nothing with the
// question; a memory of neither is not found, and the question's names are
// not expanded.
func TestExpansionFindsRelatedWords(t *testing.T) {
	th := &fakeThesaurus{related: map[string][]string{
		"activities": {"surfing", "hiking"},
		"caroline":   {"charlotte"},
	}}
	e := thesaurusEngine(t, th)
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	ids := addValues(t, e, ns, nil,
		"Caroline went surfing at dawn.",
		"She tried hiking in the Alps.",
		"Charlotte repaired the old clock.")
	got := expansionHits(t, e, engram.ScopeOf(ns), "What outdoor activities does Caroline like?")
	for i, want := range ids[:2] {
		if !slices.Contains(got, want) {
			t.Errorf("memory %d not found: hits %v", i, got)
		}
	}
	if slices.Contains(got, ids[2]) {
		t.Errorf("the memory of a name's related word was found: hits %v", got)
	}
	if slices.Contains(th.questions(), "caroline") {
		t.Errorf("the thesaurus was asked about a name: %v", th.questions())
	}
}

// TestExpansionEnglishOnly: the thesaurus is English, so German, Spanish,
// French and Chinese questions are not expanded, even where a word is
// spelled like an English one ("Hund", "animal").
func TestExpansionEnglishOnly(t *testing.T) {
	th := &fakeThesaurus{related: map[string][]string{
		"haustiere": {"dog"}, "mascotas": {"dog"}, "animal": {"dog"}, "animaux": {"dog"}, "宠物": {"dog"},
	}}
	e := thesaurusEngine(t, th)
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	addValues(t, e, ns, nil, "My dog Rex sleeps all day.", "Mein Hund Rex schläft den ganzen Tag.")
	for _, q := range []string{
		"Welche Haustiere hat sie zu Hause und wie heißen die Tiere?",
		"¿Qué mascotas tiene ella en casa y cómo se llama el animal?",
		"Quels animaux de compagnie a-t-elle à la maison?",
		"她家里养了什么宠物？",
	} {
		if got := expansionHits(t, e, engram.ScopeOf(ns), q); len(got) > 0 {
			t.Errorf("%q: expansion found %v", q, got)
		}
	}
	if asked := th.questions(); len(asked) > 0 {
		t.Errorf("the thesaurus was asked about %v", asked)
	}
}

package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
)

// countingStore counts the memories its readers are asked for by id.
type countingStore struct {
	engram.Store
	rows *atomic.Int64
}

func (s countingStore) View(ctx context.Context, fn func(engram.Reader) error) error {
	return s.Store.View(ctx, func(r engram.Reader) error {
		return fn(countingReader{r, s.rows})
	})
}

type countingReader struct {
	engram.Reader
	rows *atomic.Int64
}

func (r countingReader) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	r.rows.Add(int64(len(ids)))
	return r.Reader.GetMemories(ctx, s, ids)
}

// rowEnv is one SQLite store with two engines over it, as two servers:
// cached keeps memories for its searches, plain keeps none. Neither
// flushes access counts unless told to.
type rowEnv struct {
	db            *sqlite.DB
	cached, plain *engine.Engine
	cachedReads   atomic.Int64
	plainReads    atomic.Int64
	ns            engram.Namespace
	ids           []string
}

var rowValues = []string{
	"The spare key is under the blue flower pot.",
	"Anna moved to Lisbon in March for a new job.",
	"The dentist appointment is on Tuesday at nine.",
	"Bring the red umbrella to the football match.",
	"Die Katze schläft am liebsten auf dem Sofa.",
	"El perro juega en el parque cada mañana.",
	"我每天早上喝咖啡。",
	"The train to the coast leaves at nine fifteen.",
	"Anna's sister plays the cello in an orchestra.",
	"The blue car needs new tyres before winter.",
}

var rowClock = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

var rowQueries = []string{"where is the key", "Anna Lisbon job", "Katze Sofa", "perro parque", "咖啡", "train nine", "blue"}

func newRowEnv(t *testing.T) *rowEnv {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	env := &rowEnv{db: db, ns: engram.Namespace{Org: "o", Project: "p", User: "u"}}
	open := func(reads *atomic.Int64, rowBytes int64) *engine.Engine {
		e, err := engine.New(ctx, countingStore{db, reads}, engine.Options{
			Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour, RowCacheBytes: rowBytes,
			// One clock for both, so that recency weighs the same.
			Now: func() time.Time { return rowClock }})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	env.cached, env.plain = open(&env.cachedReads, 0), open(&env.plainReads, -1)
	t.Cleanup(func() { env.cached.Close(); env.plain.Close(); db.Close() })
	var in []engram.Memory
	for i := range 4 {
		for _, v := range rowValues {
			in = append(in, engram.Memory{Value: fmt.Sprintf("%s (%d)", v, i), Cues: []string{"note"},
				Metadata: map[string]any{"n": float64(i), "tags": []any{"a", "b"}}})
		}
	}
	ms, err := env.plain.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: env.ns, Memories: in})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		env.ids = append(env.ids, m.ID)
	}
	return env
}

// same runs every query on both engines and fails unless the hits, whole
// memories and scores, are the same.
func (env *rowEnv) same(t *testing.T, s engram.Scope) [][]engram.Hit {
	t.Helper()
	var all [][]engram.Hit
	for _, q := range rowQueries {
		var got [2][]engram.Hit
		for i, e := range []*engine.Engine{env.cached, env.plain} {
			res, err := e.Search(context.Background(), engram.SearchRequest{Scope: s, Query: q, K: 8})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = res.Hits
		}
		if len(got[0]) == 0 {
			t.Fatalf("%q found nothing", q)
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Fatalf("%q: with the row cache\n%+v\nwithout\n%+v", q, got[0], got[1])
		}
		all = append(all, got[0])
	}
	return all
}

// TestRowCache_SearchesReadNoRows: once a namespace's text index is
// loaded, its searches take their candidates from the cached memories and
// read none from the store by id, and find exactly what an engine
// without the cache finds.
func TestRowCache_SearchesReadNoRows(t *testing.T) {
	env := newRowEnv(t)
	env.same(t, engram.ScopeOf(env.ns))
	if n := env.cachedReads.Load(); n != 0 {
		t.Errorf("with the row cache the searches read %d memories by id, want 0", n)
	}
	if n := env.plainReads.Load(); n == 0 {
		t.Error("without the row cache the searches read no memory by id: the count is broken")
	}
	// A caller changing what a search returned changes nothing cached.
	for _, hs := range env.same(t, engram.ScopeOf(env.ns)) {
		for i := range hs {
			m := &hs[i].Memory
			m.Cues[0] = "changed"
			m.Metadata["n"] = -1.0
			m.Metadata["tags"].([]any)[0] = "changed"
			*m = engram.Memory{}
		}
	}
	env.same(t, engram.ScopeOf(env.ns))
}

// TestRowCache_OtherServerChanges: a memory another server updates or
// deletes is found as it is now, the cache dropping it as the change log
// names it; a memory read again after that is cached again.
func TestRowCache_OtherServerChanges(t *testing.T) {
	ctx := context.Background()
	env := newRowEnv(t)
	s := engram.ScopeOf(env.ns)
	env.same(t, s)
	value := "The spare key is now in the kitchen drawer, not under the pot."
	if _, err := env.plain.UpdateMemory(ctx, s, env.ids[0], engram.MemoryPatch{Value: &value}); err != nil {
		t.Fatal(err)
	}
	if err := env.plain.DeleteMemory(ctx, s, env.ids[10], engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.plain.DeleteMemory(ctx, s, env.ids[20], engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	before := env.cachedReads.Load()
	hits := env.same(t, s)
	found := map[string]string{}
	for _, hs := range hits {
		for _, h := range hs {
			found[h.Memory.ID] = h.Memory.Value
		}
	}
	if found[env.ids[0]] != value {
		t.Errorf("the updated memory was found as %q, want %q", found[env.ids[0]], value)
	}
	for _, id := range []string{env.ids[10], env.ids[20]} {
		if _, ok := found[id]; ok {
			t.Errorf("deleted memory %s was found", id)
		}
	}
	if env.cachedReads.Load() == before {
		t.Error("the changed memories were not read again")
	}
	before = env.cachedReads.Load()
	env.same(t, s)
	if n := env.cachedReads.Load() - before; n != 0 {
		t.Errorf("searching again read %d memories by id, want 0", n)
	}
}

// TestRowCache_AccessCounts: a flush of access counts drops the memories
// it touched, so the next search finds them with their new counts.
func TestRowCache_AccessCounts(t *testing.T) {
	ctx := context.Background()
	env := newRowEnv(t)
	s := engram.ScopeOf(env.ns)
	search := func() engram.Memory {
		t.Helper()
		res, err := env.cached.Search(ctx, engram.SearchRequest{Scope: s, Query: "Anna Lisbon job", K: 1})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("search: %v, %d hits", err, len(res.Hits))
		}
		return res.Hits[0].Memory
	}
	first := search()
	for want := int64(1); want <= 3; want++ {
		if err := env.cached.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
		m := search()
		if m.ID != first.ID {
			t.Fatalf("the top hit changed from %s to %s", first.ID, m.ID)
		}
		stored, err := env.plain.GetMemory(ctx, s, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.AccessCount != want || stored.AccessCount != want || m.LastAccessed == nil {
			t.Fatalf("after %d flushes the hit has access count %d (stored %d), want %d", want, m.AccessCount, stored.AccessCount, want)
		}
	}
}

// TestRowCacheWarmsAfterFileLoad: when a restart reads a user's text
// index from its file, the user's memories are read into the row cache in
// the background, so that searches then read none from the store by id
// and find exactly what an engine without the cache finds; with a small
// budget, warming stops within it.
func TestRowCache_WarmsAfterFileLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	open := func(st engram.Store, rowBytes int64) *engine.Engine {
		t.Helper()
		e, err := engine.New(ctx, st, engine.Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour,
			IndexDir: filepath.Join(dir, "indexes"), RowCacheBytes: rowBytes,
			Now: func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	s := engram.ScopeOf(ns)
	words := []string{"garden", "kitchen", "station", "harbour", "library", "market", "bridge", "castle"}
	first := open(db, 0)
	// More memories than a page of the warm-up and than a search's
	// candidates.
	for b := range 3 {
		var in []engram.Memory
		for i := range 500 {
			n := b*500 + i
			in = append(in, engram.Memory{Value: fmt.Sprintf("note %d: met Alex near the %s and the %s", n, words[n%8], words[(n/8)%8])})
		}
		if _, err := first.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: in}); err != nil {
			t.Fatal(err)
		}
	}
	search := func(e *engine.Engine, q string) []engram.Hit {
		t.Helper()
		res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	search(first, "garden") // loads the index from the store
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		budget int64
	}{{"default budget", 0}, {"small budget", 64 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			var reads atomic.Int64
			e := open(countingStore{db, &reads}, tc.budget)
			defer e.Close()
			plain, err := engine.New(ctx, db, engine.Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour, RowCacheBytes: -1,
				Now: func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }})
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			search(e, "castle bridge") // reads the index from its file
			engine.WaitRowWarming(e)
			cached, bytes := engine.CachedRows(e, ns)
			if tc.budget > 0 {
				if bytes > tc.budget || cached == 0 || cached >= 1500 {
					t.Errorf("warmed %d memories, %d bytes, with a budget of %d bytes", cached, bytes, tc.budget)
				}
				return
			}
			if cached != 1500 {
				t.Errorf("warmed %d memories, want all 1500", cached)
			}
			before := reads.Load()
			for _, q := range []string{"kitchen station", "harbour", "note 1234", "market library Alex"} {
				got, want := search(e, q), search(plain, q)
				if len(got) == 0 || !reflect.DeepEqual(got, want) {
					t.Errorf("%q after warming:\n%+v\nwithout the cache:\n%+v", q, got, want)
				}
			}
			if n := reads.Load() - before; n != 0 {
				t.Errorf("searches after warming read %d memories by id, want 0", n)
			}
		})
	}
}

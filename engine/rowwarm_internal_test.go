package engine

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
	"github.com/engramhq/engram/sqlite"
)

// byIDCounter counts the memories its readers are asked for by id.
type byIDCounter struct {
	engram.Store
	n *atomic.Int64
}

func (s byIDCounter) View(ctx context.Context, fn func(engram.Reader) error) error {
	return s.Store.View(ctx, func(r engram.Reader) error {
		return fn(byIDReader{r, r.(engram.ChangeLog), s.n})
	})
}

type byIDReader struct {
	engram.Reader
	engram.ChangeLog
	n *atomic.Int64
}

func (r byIDReader) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	r.n.Add(int64(len(ids)))
	return r.Reader.GetMemories(ctx, s, ids)
}

// TestRowCacheWarmsAfterFileLoad: when a restart reads a user's text
// index from its file, the user's memories are read into the row cache in
// the background, so that searches then read none from the store by id
// and find exactly what an engine without the cache finds; with a small
// budget, warming stops within it.
func TestRowCacheWarmsAfterFileLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	open := func(st engram.Store, rowBytes int64) *Engine {
		t.Helper()
		e, err := New(ctx, st, Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour,
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
	search := func(e *Engine, q string) []engram.Hit {
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
			e := open(byIDCounter{db, &reads}, tc.budget)
			defer e.Close()
			plain, err := New(ctx, db, Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour, RowCacheBytes: -1,
				Now: func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }})
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			search(e, "castle bridge") // reads the index from its file
			if e.text.files == nil {
				t.Fatal("no index files")
			}
			e.text.warming.Wait()
			cached := len(e.text.parts[partKey{"o", "p", "u"}].rows.m)
			if tc.budget > 0 {
				if got := e.text.rowTotal.Load(); got > tc.budget || cached == 0 || cached >= 1500 {
					t.Errorf("warmed %d memories, %d bytes, with a budget of %d bytes", cached, got, tc.budget)
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

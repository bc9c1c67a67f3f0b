package engine_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/sqlite"
)

// oneReader is a store that serves one read transaction at a time, as a
// pool whose connections are all taken would: a View waits for the one in
// progress, and gives up when ctx ends.
type oneReader struct {
	*sqlite.DB
	slot chan struct{}
}

func (o *oneReader) View(ctx context.Context, fn func(engram.Reader) error) error {
	select {
	case o.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-o.slot }()
	return o.DB.View(ctx, fn)
}

// TestSearchNeedsOneTransaction: a search, its first one included (which
// loads the vector and text indexes) and ones that catch the indexes up
// after writes, never waits for a second read transaction while it holds
// one; concurrent searches and index saves finish too. Waiting for a
// second transaction deadlocked a server once every read connection was
// held by a search.
func TestSearchNeedsOneTransaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := &oneReader{DB: db, slot: make(chan struct{}, 1)}
	e, err := engine.New(ctx, st, engine.Options{Embedder: &enginetest.BagEmbedder{}, Logger: slog.New(slog.DiscardHandler),
		AccessFlush: time.Hour, IndexDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	add := func(text string) {
		t.Helper()
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	search := func() error {
		res, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "where is the key", K: 5})
		if err == nil && len(res.Hits) == 0 {
			t.Error("the search found nothing")
		}
		return err
	}
	add("The key is under the blue pot.")
	if err := search(); err != nil {
		t.Fatalf("first search: %v", err)
	}
	add("The spare key is with the neighbour.")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() { errs <- search() })
	}
	wg.Go(func() { errs <- e.SaveIndexes(ctx) })
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("with one read transaction at a time: %v", err)
		}
	}
}

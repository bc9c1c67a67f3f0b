package engine_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
)

// gatedStore holds every write transaction at a gate while closed is set,
// so a test can catch a background flush in the middle of its write.
type gatedStore struct {
	engram.Store
	closed  atomic.Bool
	waiting chan struct{} // told when a write reaches the closed gate
	open    chan struct{} // closed to let held writes through
}

func (s *gatedStore) Update(ctx context.Context, fn func(engram.Tx) error) error {
	if s.closed.Load() {
		s.waiting <- struct{}{}
		<-s.open
	}
	return s.Store.Update(ctx, fn)
}

// TestFlushAccessWaitsForBackgroundFlush checks FlushAccess's promise:
// when it returns, the reads recorded before it are stored, even while
// the background flush that took them is still writing.
func TestFlushAccessWaitsForBackgroundFlush(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := &gatedStore{Store: db, waiting: make(chan struct{}, 4), open: make(chan struct{})}
	e, err := engine.New(ctx, st, engine.Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer e.Close()
	var release sync.Once
	let := func() { release.Do(func() { close(st.open) }) }
	defer let() // before Close, whose flush would wait at a closed gate
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	added, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "the blue bicycle is in the garage"}}})
	if err != nil {
		t.Fatal(err)
	}
	st.closed.Store(true)
	if _, err := e.GetMemory(ctx, engram.ScopeOf(ns), added[0].ID); err != nil {
		t.Fatal(err)
	}
	<-st.waiting // the ticker's flush took the read and is held at the gate
	st.closed.Store(false)

	done := make(chan error, 1)
	go func() { done <- e.FlushAccess(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("FlushAccess returned (%v) while the flush holding its read had not written", err)
	case <-time.After(100 * time.Millisecond):
	}
	let()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := storedAccess(t, db, ns, added[0].ID); n != 1 {
		t.Errorf("access count after FlushAccess = %d, want 1", n)
	}
}

// storedAccess reads the access count the store holds for memory id.
func storedAccess(t *testing.T, st engram.Store, ns engram.Namespace, id string) int64 {
	t.Helper()
	var got *engram.Memory
	if err := st.View(context.Background(), func(r engram.Reader) error {
		var err error
		got, err = r.GetMemory(context.Background(), engram.ScopeOf(ns), id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return got.AccessCount
}

// TestWithoutAccess checks that reads under engram.WithoutAccess (a get
// and a search) leave a memory's access count alone, and that the same
// reads without it count.
func TestWithoutAccess(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := engine.New(ctx, db, engine.Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	added, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "die blaue Gitarre steht im Keller"}}})
	if err != nil {
		t.Fatal(err)
	}
	reads := func(ctx context.Context) {
		t.Helper()
		if _, err := e.GetMemory(ctx, engram.ScopeOf(ns), added[0].ID); err != nil {
			t.Fatal(err)
		}
		res, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Gitarre"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 {
			t.Fatalf("search found %d hits, want 1", len(res.Hits))
		}
	}
	count := func() int64 {
		t.Helper()
		if err := e.FlushAccess(ctx); err != nil {
			t.Fatal(err)
		}
		return storedAccess(t, db, ns, added[0].ID)
	}
	reads(engram.WithoutAccess(ctx))
	if n := count(); n != 0 {
		t.Errorf("access count after reads WithoutAccess = %d, want 0", n)
	}
	reads(ctx)
	if n := count(); n != 2 {
		t.Errorf("access count after a counted get and search = %d, want 2", n)
	}
}

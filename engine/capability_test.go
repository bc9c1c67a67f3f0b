package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
)

// coreStore serves a real store through the contract only: every
// transaction reaches fn inside a struct that embeds just engram.Reader or
// engram.Tx, so the engine can use nothing but what those declare (no
// method of a store's own transaction type survives a type assertion).
type coreStore struct{ engram.Store }

func (s coreStore) View(ctx context.Context, fn func(engram.Reader) error) error {
	return s.Store.View(ctx, func(r engram.Reader) error { return fn(struct{ engram.Reader }{r}) })
}

func (s coreStore) Update(ctx context.Context, fn func(engram.Tx) error) error {
	return s.Store.Update(ctx, func(tx engram.Tx) error { return fn(struct{ engram.Tx }{tx}) })
}

func openCoreStore(t *testing.T) engram.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return coreStore{db}
}

// TestCoreStoreServes: an engine needs nothing beyond the contract's
// interfaces to write, search, version and delete.
func TestCoreStoreServes(t *testing.T) {
	ctx := engram.WithActor(context.Background(), "test")
	st := openCoreStore(t)
	e, err := engine.New(ctx, st, engine.Options{})
	if err != nil {
		t.Fatalf("new engine over the core store: %v", err)
	}
	defer e.Close()
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	sc := engram.ScopeOf(ns)
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "Alice is vegetarian."}}})
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	id := ms[0].ID
	res, err := e.Search(ctx, engram.SearchRequest{Scope: sc, Query: "vegetarian"})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != id {
		t.Errorf("search hits = %+v, want the one memory", res.Hits)
	}
	value := "Alice is vegan."
	if _, err := e.UpdateMemory(ctx, sc, id, engram.MemoryPatch{Value: &value}); err != nil {
		t.Fatalf("update: %v", err)
	}
	vs, err := e.History(ctx, sc, id)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	if got, want := len(vs), 2; got != want {
		t.Errorf("versions = %d, want %d", got, want)
	}
	if err := e.DeleteMemory(ctx, sc, id, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := e.GetMemory(ctx, sc, id); !engram.IsNotFound(err) {
		t.Errorf("get after delete: %v, want not found", err)
	}
}

package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
)

// The update formation asks for on the turn before a batch is dropped, not
// applied and not an error, when that memory changed after it was read.
func TestDropStale(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(ctx, db, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	ns := engram.Namespace{Org: "o", Project: "p", User: "u", Session: "s"}
	s := engram.ScopeOf(ns)
	add := func() engram.Memory {
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "the turn before"}}})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0]
	}
	kept := func(read engram.Memory) int {
		var n int
		err := e.store.Update(ctx, func(tx engram.Tx) error {
			ops := []engram.MemoryOp{{Op: engram.OpUpdate, TargetID: read.ID}, {Op: engram.OpAdd}}
			out, err := dropStale(ctx, tx, s, ops, &read)
			n = len(out)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	unchanged := add()
	if n := kept(unchanged); n != 2 {
		t.Errorf("unchanged: %d ops kept, want 2", n)
	}
	edited := add()
	v := "edited by its owner"
	if _, err := e.UpdateMemory(ctx, s, edited.ID, engram.MemoryPatch{Value: &v}); err != nil {
		t.Fatal(err)
	}
	deleted := add()
	if err := e.DeleteMemory(ctx, s, deleted.ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	purged := add()
	if err := e.DeleteMemory(ctx, s, purged.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]engram.Memory{"edited": edited, "soft-deleted": deleted, "purged": purged} {
		if n := kept(m); n != 1 {
			t.Errorf("%s: %d ops kept, want only the add", name, n)
		}
	}
}

package engine

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
)

// TestTextReadEarly: a search reads the file of a text index not loaded
// yet in the background before it loads its vectors, and its load takes
// that read; a memory deleted for good by another server after the read
// began is not found, the load catching the read-early index up like any
// file.
func TestTextReadEarly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opts := Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour, IndexDir: filepath.Join(dir, "indexes")}
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	s := engram.ScopeOf(ns)
	first, err := New(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	var in []engram.Memory
	for i := range 20 {
		in = append(in, engram.Memory{Value: fmt.Sprintf("the violin lesson number %d is on a Tuesday", i)})
	}
	ms, err := first.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: in})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Search(ctx, engram.SearchRequest{Scope: s, Query: "violin"}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil { // saves the text index's file
		t.Fatal(err)
	}

	e, err := New(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.text.readEarly(s)
	p := e.text.parts[partKey{"o", "p", "u"}]
	p.earlyMu.Lock()
	early := p.early
	p.earlyMu.Unlock()
	if early == nil {
		t.Fatal("no early read of a partition that is not loaded")
	}
	<-early.done
	if early.err != nil || early.idx == nil || early.idx.Len() != 20 {
		t.Fatalf("early read: %v, %v", early.idx, early.err)
	}
	// Another server deletes one memory for good after the read.
	other, err := New(ctx, db, Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteMemory(ctx, s, ms[3].ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: "violin lesson number 3", K: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 19 {
		t.Errorf("%d hits, want the 19 memories left", len(res.Hits))
	}
	for _, h := range res.Hits {
		if h.Memory.ID == ms[3].ID {
			t.Error("the memory deleted after the early read was found")
		}
	}
	p.earlyMu.Lock()
	left := p.early
	p.earlyMu.Unlock()
	if left != nil || p.idx != early.idx {
		t.Errorf("the load did not take the early read (left %v)", left)
	}
	e.text.readEarly(s) // loaded now: nothing to read
	if p.early != nil {
		t.Error("an early read of a loaded partition")
	}
}

package index

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// TestTextReadEarly: a search reads the file of a text index not loaded
// yet in the background before it loads its vectors, and its load takes
// that read; a memory deleted for good by another server after the read
// began is not found, the load catching the read-early index up like any
// file.
func TestTextReadEarly(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	dir := filepath.Join(t.TempDir(), "indexes")
	log := slog.New(slog.DiscardHandler)
	open := func() *Texts {
		x := NewTexts(0, 0, 0, log)
		if err := x.SetUpFiles(ctx, db, dir, time.Hour, log); err != nil {
			t.Fatal(err)
		}
		return x
	}
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	s := engram.ScopeOf(ns)
	first := open()
	var in []string
	for i := range 20 {
		in = append(in, fmt.Sprintf("the violin lesson number %d is on a Tuesday", i))
	}
	ms := putMemories(t, db, ns, in...)
	searchText(t, first, db, s, "violin", 10)
	if err := first.Close(); err != nil { // saves the text index's file
		t.Fatal(err)
	}

	e := open()
	defer e.Close()
	e.ReadEarly(s)
	p := e.parts[partKey{"o", "p", "u"}]
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
	if err := db.Update(ctx, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, ns, ms[3].ID) }); err != nil {
		t.Fatal(err)
	}
	ids := searchText(t, e, db, s, "violin lesson number 3", 20)
	if len(ids) != 19 {
		t.Errorf("%d hits, want the 19 memories left", len(ids))
	}
	for _, id := range ids {
		if id == ms[3].ID {
			t.Error("the memory deleted after the early read was found")
		}
	}
	p.earlyMu.Lock()
	left := p.early
	p.earlyMu.Unlock()
	if left != nil || p.idx != early.idx {
		t.Errorf("the load did not take the early read (left %v)", left)
	}
	e.ReadEarly(s) // loaded now: nothing to read
	if p.early != nil {
		t.Error("an early read of a loaded partition")
	}
}

package storetest

import (
	"testing"

	"github.com/engramhq/engram"
)

// testViewSnapshot checks that View's reads see one snapshot, taken at
// its first read: a write committed after that read is seen by neither
// a later read of the same memory nor a read of the new one.
func testViewSnapshot(t *testing.T, open Opener) {
	st := open(t)
	a := Memory(nsU1, "before")
	Put(t, st, a)
	b := Memory(nsU1, "written during the view")
	err := st.View(ctx, func(r engram.Reader) error {
		got, err := readAcrossCommit(t, st, r, a, b)
		if err != nil {
			return err
		}
		if got.Value != "before" {
			t.Errorf("a read after a commit in the same View saw %q, want the snapshot's %q", got.Value, "before")
		}
		if _, err := r.GetMemory(ctx, scU1, b.ID); !engram.IsNotFound(err) {
			t.Errorf("a memory committed after the View's first read: %v, want ENOTFOUND", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testReadFresh checks a store's FreshReader, when it has one: each read
// sees what was committed before it, scopes hold as in View, and writes
// through it are refused.
func testReadFresh(t *testing.T, open Opener) {
	st := open(t)
	f, ok := st.(engram.FreshReader)
	if !ok {
		t.Skipf("%T has no FreshReader", st)
	}
	a, other := Memory(nsU1, "before"), Memory(nsU2, "another user's")
	Put(t, st, a, other)
	b := Memory(nsU1, "written between two reads")
	err := f.ReadFresh(ctx, func(r engram.Reader) error {
		got, err := readAcrossCommit(t, st, r, a, b)
		if err != nil {
			return err
		}
		if got.Value != "after" {
			t.Errorf("a fresh read after a commit saw %q, want %q", got.Value, "after")
		}
		if _, err := r.GetMemory(ctx, scU1, b.ID); err != nil {
			t.Errorf("a memory committed before a fresh read: %v", err)
		}
		if _, err := r.GetMemory(ctx, scU1, other.ID); !engram.IsNotFound(err) {
			t.Errorf("another user's memory through a fresh read: %v, want ENOTFOUND", err)
		}
		ids, _, err := r.Changes(ctx, scU1, 0)
		if err != nil || len(ids) != 2 {
			t.Errorf("Changes through a fresh read = %v, %v; want the user's 2 memories", ids, err)
		}
		// A fresh Reader need not be a Tx; when the backend hands out one
		// that is, its writes must still be refused.
		if tx, ok := r.(engram.Tx); ok {
			if err := tx.InsertMemory(ctx, Memory(nsU1, "sneaked in")); err == nil {
				t.Error("a write through a fresh read was accepted")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readAcrossCommit reads memory a of nsU1 through r, then commits a's new
// value "after" and the memory b, and returns what r reads of a then.
func readAcrossCommit(t *testing.T, st engram.Store, r engram.Reader, a, b *engram.Memory) (*engram.Memory, error) {
	if _, err := r.GetMemory(ctx, scU1, a.ID); err != nil {
		return nil, err
	}
	replaceValue(t, st, a.ID, "after")
	Put(t, st, b)
	return r.GetMemory(ctx, scU1, a.ID)
}

// replaceValue commits a new value for memory id of nsU1.
func replaceValue(t *testing.T, st engram.Store, id, value string) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error {
		m, err := tx.GetMemory(ctx, scU1, id)
		if err != nil {
			return err
		}
		m.Value = value
		return tx.ReplaceMemory(ctx, m)
	})
}

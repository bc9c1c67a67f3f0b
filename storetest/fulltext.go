package storetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// testFullTextSwitch turns the store's full-text index off, writes,
// replaces and deletes memories without it, and turns it on again: the
// index built then holds exactly the memories there are, as they are now,
// each in its own tenant. Whether the store's own search works while the
// index is off is the backend's to say (its tests check it).
func testFullTextSwitch(t *testing.T, open Opener) {
	st := open(t)

	kept := Memory(nsU1, "the lighthouse keeper rows out at dawn")
	changed := Memory(nsU1, "the ferry to the island leaves at nine")
	gone := Memory(nsU1, "the lighthouse lamp was repaired in March")
	theirs := Memory(nsOther, "their lighthouse stands on the cliff")
	Put(t, st, kept, changed, gone, theirs)
	if !indexed(t, st) {
		t.Fatal("a new store has no full-text index")
	}

	for range 2 { // a second switch to the same state does nothing
		if err := st.SetFullTextIndexed(ctx, false); err != nil {
			t.Fatalf("SetFullTextIndexed(false): %v", err)
		}
	}
	if indexed(t, st) {
		t.Fatal("the index is still there after SetFullTextIndexed(false)")
	}
	added := Memory(nsU1, "a new lighthouse guide was printed")
	Put(t, st, added)
	changed.Value = "the lighthouse tour leaves at ten"
	changed.Version++
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, changed) })
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, gone.ID) })
	Put(t, st, Memory(nsU2, "a lighthouse in another user's scope"))
	update(t, st, func(tx engram.Tx) error {
		_, err := tx.PurgeScope(ctx, engram.ScopeOf(nsU2))
		return err
	})

	for range 2 {
		if err := st.SetFullTextIndexed(ctx, true); err != nil {
			t.Fatalf("SetFullTextIndexed(true): %v", err)
		}
	}
	if !indexed(t, st) {
		t.Fatal("no index after SetFullTextIndexed(true)")
	}
	got := hitIDs(search(t, st, scU1, "lighthouse", engram.MemoryFilter{}, 10))
	slices.Sort(got)
	want := []string{kept.ID, changed.ID, added.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after the index was built again, lighthouse finds %v, want %v (kept, changed while off, added while off)", got, want)
	}
	if got := hitIDs(search(t, st, scU1, "ferry", engram.MemoryFilter{}, 10)); len(got) != 0 {
		t.Errorf("the old value of a memory replaced while the index was off is found: %v", got)
	}
	if got := hitIDs(search(t, st, engram.ScopeOf(nsOther), "lighthouse", engram.MemoryFilter{}, 10)); !slices.Equal(got, []string{theirs.ID}) {
		t.Errorf("the other tenant's search finds %v, want only its own memory %s", got, theirs.ID)
	}
	// Writes keep the rebuilt index up to date.
	late := Memory(nsU1, "the harbour master retired")
	Put(t, st, late)
	if got := hitIDs(search(t, st, scU1, "harbour", engram.MemoryFilter{}, 10)); !slices.Equal(got, []string{late.ID}) {
		t.Errorf("a memory written after the rebuild: harbour finds %v, want %s", got, late.ID)
	}
}

// indexed reports FullTextIndexed as a read of st sees it.
func indexed(t *testing.T, st engram.Store) bool {
	t.Helper()
	var on bool
	view(t, st, func(r engram.Reader) error {
		var err error
		on, err = r.FullTextIndexed(ctx)
		return err
	})
	return on
}

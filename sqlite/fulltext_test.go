package sqlite_test

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// TestFullTextOff checks what the conformance suite leaves to the backend:
// without memories_fts the store's own search fails with EUNAVAILABLE
// rather than missing hits, the integrity check passes, the database
// opens again, and a switch made through another handle on the file (as
// engram fulltext does beside a running server) is seen by the next
// transaction of this one.
func TestFullTextOff(t *testing.T) {
	db := openDB(t)
	before := storetest.Memory(nsU1, "the lighthouse keeper rows out at dawn")
	storetest.Put(t, db, before)

	other, err := sqlite.Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := other.SetFullTextIndexed(ctx, false); err != nil {
		t.Fatalf("SetFullTextIndexed(false) through another handle: %v", err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, db)
	if n := count(t, raw, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'memories_fts%'"); n != 0 {
		t.Errorf("%d tables of memories_fts remain after it was turned off", n)
	}

	// This handle prepared its statements with the table there.
	written := storetest.Memory(nsU1, "a new lighthouse guide was printed")
	storetest.Put(t, db, written)
	err = db.View(ctx, func(r engram.Reader) error {
		_, err := r.SearchText(ctx, scU1, "lighthouse", engram.MemoryFilter{}, 10)
		return err
	})
	if engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Errorf("SearchText with the index off: %v, want EUNAVAILABLE", err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Errorf("IntegrityCheck with the index off: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Opened without the table, then switched on by the handle itself.
	db, err = sqlite.Open(ctx, db.Path())
	if err != nil {
		t.Fatalf("open with the index off: %v", err)
	}
	defer db.Close()
	storetest.Put(t, db, storetest.Memory(nsU1, "the lamp was repaired"))
	if err := db.SetFullTextIndexed(ctx, true); err != nil {
		t.Fatalf("SetFullTextIndexed(true): %v", err)
	}
	last := storetest.Memory(nsU1, "lighthouse visitors counted")
	storetest.Put(t, db, last)
	got := hitIDs(search(t, db, "lighthouse", engram.MemoryFilter{}))
	slices.Sort(got)
	want := []string{before.ID, written.ID, last.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("lighthouse finds %v, want %v", got, want)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Errorf("IntegrityCheck after the index was built again: %v", err)
	}
}

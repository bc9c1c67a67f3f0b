package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/storetest"
)

// TestResidue: after a hard delete, an episode delete and a scope purge no
// file of the data directory (database, -wal, -shm) holds the deleted
// text: not in free pages, the write-ahead log, the full-text index's
// segments, old versions or the audit log.
func TestResidue(t *testing.T) {
	db := openDB(t)
	dir := filepath.Dir(db.Path())
	enginetest.RunResidue(t, db, func(t *testing.T) []string { return enginetest.DirFiles(t, dir) })
}

// TestSensitiveResidue: after sealed writes no file of the data directory
// (database, -wal, -shm) nor of the embedding cache and saved indexes
// holds a sealed span.
func TestSensitiveResidue(t *testing.T) {
	db := openDB(t)
	dir := filepath.Dir(db.Path())
	enginetest.RunSensitiveResidue(t, db, func(t *testing.T) []string { return enginetest.DirFiles(t, dir) })
}

// TestScrubWithReader: a reader holding an old snapshot makes Scrub give up
// quickly with EUNAVAILABLE instead of holding the writer; once it is gone
// Scrub empties the write-ahead log.
func TestScrubWithReader(t *testing.T) {
	db := openDB(t)
	storetest.Put(t, db, storetest.Memory(nsU1, "before the reader"))
	err := db.View(ctx, func(r engram.Reader) error {
		if _, err := r.GetMemories(ctx, scU1, []string{"x"}); err != nil {
			return err
		}
		if _, _, err := r.ListMemories(ctx, scU1, engram.MemoryFilter{}); err != nil {
			return err
		}
		storetest.Put(t, db, storetest.Memory(nsU1, "after the reader"))
		start := time.Now()
		err := db.Scrub(ctx)
		if engram.ErrorCode(err) != engram.EUNAVAILABLE {
			t.Errorf("Scrub with an old snapshot open = %v, want EUNAVAILABLE", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Scrub waited %v for the reader", d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Scrub(ctx); err != nil {
		t.Fatalf("Scrub without readers: %v", err)
	}
	if fi, err := os.Stat(db.Path() + "-wal"); err == nil && fi.Size() != 0 {
		t.Fatalf("the write-ahead log holds %d bytes after Scrub", fi.Size())
	}
}

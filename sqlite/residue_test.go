package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/engramhq/engram/enginetest"
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

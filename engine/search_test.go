package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/sqlite"
)

// TestSearchSQLite runs the retrieval behaviour suite over the embedded
// store.
func TestSearchSQLite(t *testing.T) {
	enginetest.RunSearch(t, func(t *testing.T) engram.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

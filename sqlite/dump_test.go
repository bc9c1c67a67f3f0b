package sqlite_test

import (
	"context"
	"testing"

	"github.com/engramhq/engram"
)

// TestDumpSkipsChangeHorizon checks that the change log's horizon, which
// numbers this database's changes only, does not travel with a dump.
func TestDumpSkipsChangeHorizon(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	err := db.Update(ctx, func(tx engram.Tx) error {
		if err := tx.SetMeta(ctx, "changes.horizon", "42"); err != nil {
			return err
		}
		return tx.SetMeta(ctx, "embedder", "use-lite")
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []engram.MetaEntry
	err = db.View(ctx, func(r engram.Reader) error {
		return r.Dump(ctx, func(d engram.DumpRecord) error {
			if d.Meta != nil {
				got = append(got, *d.Meta)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (engram.MetaEntry{Key: "embedder", Value: "use-lite"}) {
		t.Errorf("dumped meta = %+v, want only the embedder", got)
	}
}

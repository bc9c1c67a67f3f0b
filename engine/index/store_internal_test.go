package index

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
)

// openStore opens a SQLite store in a temporary directory, closed when
// the test ends.
func openStore(t testing.TB) engram.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// putMemories stores an active semantic memory of each value in ns, in
// one transaction, and returns them.
func putMemories(t testing.TB, st engram.Store, ns engram.Namespace, values ...string) []engram.Memory {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	ms := make([]engram.Memory, len(values))
	for i, v := range values {
		ms[i] = engram.Memory{ID: engram.NewID(), Namespace: ns, Kind: engram.KindSemantic, Status: engram.StatusActive,
			Value: v, Confidence: 1, CreatedAt: now, UpdatedAt: now}
	}
	err := st.Update(ctx, func(tx engram.Tx) error {
		for i := range ms {
			if err := tx.InsertMemory(ctx, &ms[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// searchText searches t's index of scope s for query as a search's
// full-text channel does: it begins reading the index's file, then opens
// the index in a read transaction of st and asks it for the best k. It
// returns the ids found, best first, or fails the test when the store's
// index would have to serve.
func searchText(tb testing.TB, t *Texts, st engram.Store, s engram.Scope, query string, k int) []string {
	tb.Helper()
	ctx := context.Background()
	t.ReadEarly(s)
	epoch := t.Epoch()
	var ids []string
	err := st.View(ctx, func(r engram.Reader) error {
		idx, err := t.open(ctx, r, s, epoch)
		if err != nil || idx == nil {
			return err
		}
		for _, h := range idx.SearchText(query, engram.MemoryFilter{Limit: k}, k) {
			ids = append(ids, h.ID)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ids
}

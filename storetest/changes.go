package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// testChanges checks the change log that keeps derived caches fresh: every
// kind of memory write is reported to its own (tenant, user) only, in
// order, and a rolled-back transaction reports nothing.
func testChanges(t *testing.T, open Opener) {
	st := open(t)
	changes := func(s engram.Scope, after int64) ([]string, int64) {
		t.Helper()
		var ids []string
		var last int64
		err := st.View(ctx, func(r engram.Reader) error {
			var err error
			ids, last, err = r.Changes(ctx, s, after)
			return err
		})
		if err != nil {
			t.Fatalf("Changes(%d): %v", after, err)
		}
		return ids, last
	}
	update := func(fn func(context.Context, engram.Tx) error) {
		t.Helper()
		if err := st.Update(ctx, func(tx engram.Tx) error { return fn(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
	}
	ids, start := changes(scU1, -1)
	if len(ids) != 0 {
		t.Fatalf("after < 0 returned ids %v", ids)
	}
	m1, m2 := Memory(nsU1, "first"), Memory(nsU1, "second")
	mU2, mOther := Memory(nsU2, "u2's"), Memory(nsOther, "other tenant's")
	Put(t, st, m1, m2, mU2, mOther)
	ids, last := changes(scU1, start)
	if !slices.Contains(ids, m1.ID) || !slices.Contains(ids, m2.ID) || len(ids) != 2 {
		t.Errorf("changes after inserts = %v, want exactly m1 and m2", ids)
	}
	if last <= start {
		t.Errorf("sequence did not grow: %d -> %d", start, last)
	}
	// Agent and session do not narrow the log.
	narrow := scU1
	narrow.Session = "zzz"
	if ids, _ := changes(narrow, start); len(ids) != 2 {
		t.Errorf("session-narrowed scope saw %v", ids)
	}
	if ids, _ := changes(scU1, last); len(ids) != 0 {
		t.Errorf("no new writes, yet changes %v", ids)
	}
	// Each kind of write is logged.
	steps := []struct {
		name string
		fn   func(context.Context, engram.Tx) error
	}{
		{"replace", func(ctx context.Context, tx engram.Tx) error {
			m := *m1
			m.Value = "first, edited"
			return tx.ReplaceMemory(ctx, &m)
		}},
		{"vectors", func(ctx context.Context, tx engram.Tx) error {
			return tx.PutVectors(ctx, nsU1, m1.ID, "e", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{1, 0}}})
		}},
		{"purge", func(ctx context.Context, tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, m1.ID) }},
	}
	for _, st := range steps {
		update(st.fn)
		ids, next := changes(scU1, last)
		if len(ids) != 1 || ids[0] != m1.ID || next <= last {
			t.Errorf("%s: changes = %v (seq %d -> %d), want [m1]", st.name, ids, last, next)
		}
		last = next
	}
	// A rolled-back write is not logged.
	_ = st.Update(ctx, func(tx engram.Tx) error {
		if err := tx.InsertMemory(ctx, Memory(nsU1, "never")); err != nil {
			return err
		}
		return errBoom
	})
	if ids, _ := changes(scU1, last); len(ids) != 0 {
		t.Errorf("rolled-back insert logged: %v", ids)
	}
	// A scope purge reports every memory it removed.
	update(func(ctx context.Context, tx engram.Tx) error { _, err := tx.PurgeScope(ctx, scU1); return err })
	if ids, _ := changes(scU1, last); len(ids) != 1 || ids[0] != m2.ID {
		t.Errorf("scope purge changes = %v, want [m2]", ids)
	}
	// The other user and tenant saw only their own writes.
	if ids, _ := changes(engram.ScopeOf(nsU2), start); len(ids) != 1 || ids[0] != mU2.ID {
		t.Errorf("u2 changes = %v", ids)
	}
	if ids, _ := changes(engram.ScopeOf(nsOther), start); len(ids) != 1 || ids[0] != mOther.ID {
		t.Errorf("other tenant changes = %v", ids)
	}
}

// testGetVectors checks the by-id vector read used to catch caches up.
func testGetVectors(t *testing.T, open Opener) {
	st := open(t)
	active, deleted, foreign := Memory(nsU1, "active"), Memory(nsU1, "deleted"), Memory(nsOther, "foreign")
	deleted.Status = engram.StatusDeleted
	Put(t, st, active, deleted, foreign)
	vec := []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{0.6, 0.8}}}
	if err := st.Update(ctx, func(tx engram.Tx) error {
		for _, m := range []*engram.Memory{active, deleted, foreign} {
			if err := tx.PutVectors(ctx, m.Namespace, m.ID, "e", vec); err != nil {
				return err
			}
		}
		return tx.PutVectors(ctx, nsU1, active.ID, "other", vec)
	}); err != nil {
		t.Fatal(err)
	}
	var recs []engram.VectorRecord
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		recs, err = r.GetVectors(ctx, nsU1, "e", []string{active.ID, deleted.ID, foreign.ID, engram.NewID(), active.ID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].MemoryID != active.ID || recs[0].Namespace != nsU1 || recs[0].Vec[1] != 0.8 {
		t.Errorf("GetVectors = %+v, want only the active memory of the tenant, once", recs)
	}
}

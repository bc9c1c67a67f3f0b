package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// ctx is the context of every store call the suite makes.
var ctx = context.Background()

// update runs fn in a write transaction of st and fails the test on an error.
func update(t testing.TB, st engram.Store, fn func(tx engram.Tx) error) {
	t.Helper()
	if err := st.Update(ctx, fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in a read transaction of st and fails the test on an error.
func view(t testing.TB, st engram.Store, fn func(r engram.Reader) error) {
	t.Helper()
	if err := st.View(ctx, fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func testContextCancel(t *testing.T, open Opener) {
	st := open(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	never := Episode(nsU1, "never")
	err := st.Update(cctx, func(tx engram.Tx) error { return tx.InsertEpisode(cctx, never) })
	if err == nil {
		t.Error("Update with a cancelled context succeeded")
	} else if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v, want context.Canceled in the chain", err)
	}
	if _, err := getEpisode(t, st, scU1, never.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("episode of a cancelled update: %v", err)
	}
	if err := st.View(cctx, func(r engram.Reader) error {
		_, _, err := r.ListEpisodes(cctx, scU1, engram.EpisodeFilter{})
		return err
	}); err == nil {
		t.Error("View with a cancelled context succeeded")
	}

	// Cancelled after the writes but before the commit: either the commit
	// fails and nothing is kept, or it succeeds and everything is.
	cctx, cancel = context.WithCancel(ctx)
	e := Episode(nsU1, "cancelled late")
	err = st.Update(cctx, func(tx engram.Tx) error {
		if err := tx.InsertEpisode(cctx, e); err != nil {
			return err
		}
		cancel()
		return nil
	})
	_, gerr := getEpisode(t, st, scU1, e.ID)
	switch {
	case err == nil && gerr != nil:
		t.Errorf("Update returned nil but the episode is missing: %v", gerr)
	case err != nil && gerr == nil:
		t.Errorf("Update failed (%v) but the episode was kept", err)
	}
	if eps := listEpisodes(t, st, scU1, engram.EpisodeFilter{}); err != nil && len(eps) != 0 {
		t.Errorf("%d episodes after cancelled updates", len(eps))
	}
	// The store still works.
	Put(t, st, Episode(nsU1, "after cancel"))
}

func testUpdateAtomicity(t *testing.T, open Opener) {
	st := open(t)
	kept := Memory(nsU1, "original walrus text")
	Put(t, st, kept, Version(kept, 1, engram.OpAdd))
	keptVec := engram.FieldVector{Field: engram.FieldValue, Vec: vec(1, 3)}
	putVectors(t, st, nsU1, kept.ID, embA, keptVec)
	update(t, st, func(tx engram.Tx) error { return tx.SetMeta(ctx, "walrus", "before") })

	e := Episode(nsU1, "lost narwhal episode")
	m := Memory(nsU1, "lost narwhal memory")
	err := st.Update(ctx, func(tx engram.Tx) error {
		if err := insert(ctx, tx, e, m, Version(m, 1, engram.OpAdd), Audit(nsU1, "memory.add", m.ID)); err != nil {
			return err
		}
		repl := *kept
		repl.Value = "replaced narwhal text"
		if err := tx.ReplaceMemory(ctx, &repl); err != nil {
			return err
		}
		if err := tx.InsertVersion(ctx, Version(&repl, 2, engram.OpUpdate)); err != nil {
			return err
		}
		if err := tx.Touch(ctx, nsU1, []string{kept.ID}, At(time.Hour)); err != nil {
			return err
		}
		if err := tx.PutVectors(ctx, nsU1, kept.ID, embA, []engram.FieldVector{{Field: engram.FieldAbstraction, Vec: vec(2, 3)}}); err != nil {
			return err
		}
		if err := tx.PutVectors(ctx, nsU1, m.ID, embB, []engram.FieldVector{keptVec}); err != nil {
			return err
		}
		if err := tx.SetMeta(ctx, "walrus", "after"); err != nil {
			return err
		}
		if err := tx.SetMeta(ctx, "narwhal", "new"); err != nil {
			return err
		}
		if _, err := tx.DeleteVectorsExcept(ctx, embB); err != nil {
			return err
		}
		// Inside the transaction the writes are visible.
		if hits, err := tx.SearchText(ctx, scU1, "narwhal", engram.MemoryFilter{}, 10); err != nil || len(hits) != 2 {
			t.Errorf("inside the transaction: %d hits, %v; want 2", len(hits), err)
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	if _, err := getEpisode(t, st, scU1, e.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("rolled-back episode: %v", err)
	}
	if _, err := getMemory(t, st, scU1, m.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("rolled-back memory: %v", err)
	}
	if hits := search(t, st, scU1, "narwhal", engram.MemoryFilter{}, 10); len(hits) != 0 {
		t.Errorf("rolled-back text is searchable: %v", hitIDs(hits))
	}
	if hits := search(t, st, scU1, "walrus", engram.MemoryFilter{}, 10); len(hits) != 1 {
		t.Errorf("original text is not searchable after a rollback: %v", hitIDs(hits))
	}
	got := mustMemory(t, st, scU1, kept.ID)
	sameJSON(t, "memory after rolled-back replace and touch", got, kept)
	view(t, st, func(r engram.Reader) error {
		vs, err := r.Versions(ctx, scU1, kept.ID)
		if err != nil || len(vs) != 1 {
			t.Errorf("versions after rollback: %d, %v; want 1", len(vs), err)
		}
		_, err = r.Versions(ctx, scU1, m.ID)
		wantCode(t, "versions of rolled-back memory", err, engram.ENOTFOUND)
		return nil
	})
	if n := len(listAudit(t, st, scU1, engram.AuditFilter{})); n != 0 {
		t.Errorf("%d audit entries survived a rollback", n)
	}
	wantVectors(t, "vectors after rollback", scanVectors(t, st, scU1, embA),
		map[string][]float32{kept.ID + "/value": keptVec.Vec}, nil)
	if got := scanVectors(t, st, scU1, embB); len(got) != 0 {
		t.Errorf("rolled-back vectors are stored: %v", vectorKeys(got))
	}
	if got := meta(t, st, "walrus"); got != "before" {
		t.Errorf("meta after rollback = %q, want before", got)
	}
	if got := meta(t, st, "narwhal"); got != "" {
		t.Errorf("rolled-back meta key has %q", got)
	}
}

func testUpdatePanic(t *testing.T, open Opener) {
	st := open(t)
	e := Episode(nsU1, "panicked")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Update swallowed a panic in fn")
			}
		}()
		_ = st.Update(ctx, func(tx engram.Tx) error {
			if err := tx.InsertEpisode(ctx, e); err != nil {
				return err
			}
			panic("storetest: panic in fn")
		})
	}()
	if _, err := getEpisode(t, st, scU1, e.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("episode written by a panicking fn: %v", err)
	}
	// The store must still accept writes.
	done := make(chan struct{})
	go func() {
		defer close(done)
		Put(t, st, Episode(nsU1, "after the panic"))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Update blocks after a panic in fn")
	}
}

func testUpdateSeesOwnWrites(t *testing.T, open Opener) {
	st := open(t)
	e := Episode(nsU1, "mine")
	m := Memory(nsU1, "my own memory")
	update(t, st, func(tx engram.Tx) error {
		if err := insert(ctx, tx, e, m); err != nil {
			return err
		}
		if _, err := tx.GetEpisode(ctx, scU1, e.ID); err != nil {
			return err
		}
		got, err := tx.GetMemory(ctx, scU1, m.ID)
		if err != nil {
			return err
		}
		got.Value = "my changed memory"
		if err := tx.ReplaceMemory(ctx, got); err != nil {
			return err
		}
		again, err := tx.GetMemory(ctx, scU1, m.ID)
		if err != nil {
			return err
		}
		if again.Value != "my changed memory" {
			t.Errorf("read after replace in the same transaction: %q", again.Value)
		}
		return nil
	})
}

func testTouch(t *testing.T, open Opener) {
	st := open(t)
	m := Memory(nsU1, "touch me")
	same := *m // same id in another tenant
	same.Namespace = nsOther
	Put(t, st, m, &same)
	at1, at2 := At(time.Hour), At(2*time.Hour)
	update(t, st, func(tx engram.Tx) error {
		// The user's memories, whatever agent or session the reader had.
		if err := tx.Touch(ctx, engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "other"}, []string{m.ID, engram.NewID()}, at1); err != nil {
			return err
		}
		if err := tx.Touch(ctx, nsU1, []string{m.ID}, at2); err != nil {
			return err
		}
		// Memory ids are unique per user: another user's touch of the id, or
		// the project's, is of their own memory, which they lack here.
		if err := tx.Touch(ctx, nsU2, []string{m.ID}, At(3*time.Hour)); err != nil {
			return err
		}
		return tx.Touch(ctx, engram.Namespace{Org: "acme", Project: "app"}, []string{m.ID}, At(3*time.Hour))
	})
	got := mustMemory(t, st, scU1, m.ID)
	if got.AccessCount != 2 || got.LastAccessed == nil || !got.LastAccessed.Equal(at2) {
		t.Errorf("after two touches: access_count %d, last_accessed %v; want 2, %v", got.AccessCount, got.LastAccessed, at2)
	}
	other := mustMemory(t, st, engram.ScopeOf(nsOther), m.ID)
	if other.AccessCount != 0 || other.LastAccessed != nil {
		t.Errorf("touch reached another tenant: %d, %v", other.AccessCount, other.LastAccessed)
	}
	// Touch changes nothing else.
	want := *m
	want.AccessCount, want.LastAccessed = 2, &at2
	sameJSON(t, "touched memory", got, &want)

	update(t, st, func(tx engram.Tx) error { return tx.Touch(ctx, nsU1, nil, at1) })
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.Touch(ctx, nsU1, []string{"bad"}, at1) })
	wantCode(t, "Touch with a bad id", err, engram.EINVALID)
}

func testClose(t *testing.T, open Opener) {
	st := open(t)
	if err := st.Ready(ctx); err != nil {
		t.Fatalf("Ready on an open store: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantCode(t, "Ready after Close", st.Ready(ctx), engram.EUNAVAILABLE)
	if err := st.Update(ctx, func(tx engram.Tx) error { return nil }); err == nil {
		t.Error("Update after Close succeeded")
	}
	if err := st.View(ctx, func(r engram.Reader) error { return nil }); err == nil {
		t.Error("View after Close succeeded")
	}
}

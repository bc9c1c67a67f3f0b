package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// putMeta writes one meta row in tx.
func putMeta(ctx context.Context, tx engram.Tx, key string) error {
	return tx.SetMeta(ctx, key, "v")
}

// hasMeta reports whether the meta row key exists.
func hasMeta(t *testing.T, db *DB, key string) bool {
	t.Helper()
	var found bool
	err := db.View(context.Background(), func(r engram.Reader) error {
		v, err := r.Meta(context.Background(), key)
		found = v != ""
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestGroupCommitIsolatesUpdates queues many updates behind a slow one so
// that they share transactions, and checks that each gets its own outcome:
// the failing ones and the one that panics keep none of their writes, the
// others keep all of theirs, and fewer transactions than updates ran.
func TestGroupCommitIsolatesUpdates(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "group.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	release := make(chan struct{})
	holding := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Update(ctx, func(tx engram.Tx) error {
			close(holding)
			<-release
			return putMeta(ctx, tx, "k-hold")
		})
	}()
	<-holding

	const n = 30
	errWant := errors.New("refused on purpose")
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			errs[i] = db.Update(ctx, func(tx engram.Tx) error {
				if err := putMeta(ctx, tx, fmt.Sprintf("k-%02d", i)); err != nil {
					return err
				}
				switch {
				case i == 7:
					panic("update 7 panics")
				case i%3 == 0:
					return errWant
				}
				return nil
			})
		}()
	}
	// Let the updates reach the queue, then free the writer.
	time.Sleep(200 * time.Millisecond)
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i := range n {
		key := fmt.Sprintf("k-%02d", i)
		switch {
		case i == 7:
			if panics[i] != "update 7 panics" {
				t.Errorf("update 7: recovered %v, want its panic raised again in the caller", panics[i])
			}
			if hasMeta(t, db, key) {
				t.Errorf("update 7 panicked, yet %s was written", key)
			}
		case i%3 == 0:
			if !errors.Is(errs[i], errWant) {
				t.Errorf("update %d: error %v, want %v", i, errs[i], errWant)
			}
			if hasMeta(t, db, key) {
				t.Errorf("update %d failed, yet %s was written", i, key)
			}
		default:
			if errs[i] != nil || panics[i] != nil {
				t.Errorf("update %d: error %v, panic %v", i, errs[i], panics[i])
			}
			if !hasMeta(t, db, key) {
				t.Errorf("update %d succeeded, yet %s is missing", i, key)
			}
		}
	}
	if b, u := db.batches.Load(), db.batched.Load(); b >= u || b > n/2 {
		t.Errorf("%d transactions held %d updates: the queued updates were not committed together", b, u)
	}
}

// TestGroupCommitAbandonedUpdate checks that an update whose context ends
// while it waits for the writer fails with the context's error and never
// runs.
func TestGroupCommitAbandonedUpdate(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "abandon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	release := make(chan struct{})
	holding := make(chan struct{})
	go func() {
		_ = db.Update(ctx, func(tx engram.Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	ran := false
	err = db.Update(cctx, func(tx engram.Tx) error {
		ran = true
		return putMeta(ctx, tx, "late")
	})
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want one wrapping context.DeadlineExceeded", err)
	}
	// A later update is answered after the abandoned one would have run.
	if err := db.Update(ctx, func(tx engram.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ran || hasMeta(t, db, "late") {
		t.Error("the abandoned update ran")
	}
}

// TestCloseFailsWaitingUpdates checks that Close answers the updates still
// waiting with EUNAVAILABLE rather than leaving them blocked.
func TestCloseFailsWaitingUpdates(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "close.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx engram.Tx) error { return nil }); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Errorf("update after close: %v, want EUNAVAILABLE", err)
	}
}

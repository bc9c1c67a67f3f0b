package postgres_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
)

// TestTransactionModes: View's and Update's BEGIN goes out with their
// first statement, and that statement already runs in the transaction:
// View's is REPEATABLE READ and read-only, Update's READ COMMITTED, and
// ReadFresh's statements run outside any transaction.
func TestTransactionModes(t *testing.T) {
	db := openFresh(t, postgres.Options{})
	setting := func(r engram.Reader, name string) string {
		t.Helper()
		v, err := postgres.TxSetting(ctx, r, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	err := db.View(ctx, func(r engram.Reader) error {
		if got := setting(r, "transaction_isolation"); got != "repeatable read" {
			t.Errorf("View's first statement ran at %q", got)
		}
		if got := setting(r, "transaction_read_only"); got != "on" {
			t.Errorf("View's transaction_read_only = %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx engram.Tx) error {
		if got := setting(tx, "transaction_isolation"); got != "read committed" {
			t.Errorf("Update's first statement ran at %q", got)
		}
		if got := setting(tx, "transaction_read_only"); got != "off" {
			t.Errorf("Update's transaction_read_only = %q", got)
		}
		return nil
	})
	// Outside a transaction, each statement has a timestamp of its own;
	// inside one, now() stays at the transaction's start.
	err = db.ReadFresh(ctx, func(r engram.Reader) error {
		a, b := setting(r, "transaction_isolation"), setting(r, "transaction_isolation")
		if a != "read committed" || b != a {
			t.Errorf("ReadFresh's statements ran at %q, %q", a, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTransactionFirstStatementFails: a transaction whose first statement
// (sent with its BEGIN) fails reports the error, keeps nothing and gives
// its connection back; more transactions than the pool has connections
// then still run.
func TestTransactionFirstStatementFails(t *testing.T) {
	db := openFresh(t, postgres.Options{MaxConns: 2})
	for i := range 5 {
		err := db.View(ctx, func(r engram.Reader) error {
			_, err := postgres.TxSetting(ctx, r, "no_such.setting")
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "no_such.setting") {
			t.Fatalf("View %d: %v, want the failed statement's error", i, err)
		}
		m := storetest.Memory(nsU1, "written after a failed statement")
		err = db.Update(ctx, func(tx engram.Tx) error {
			if _, err := postgres.TxSetting(ctx, tx, "no_such.setting"); err == nil {
				t.Error("a bad first statement of Update succeeded")
			}
			return tx.InsertMemory(ctx, m) // the server gave the transaction up
		})
		if err == nil {
			t.Fatalf("Update %d went on after its first statement failed, and committed", i)
		}
		err = db.View(ctx, func(r engram.Reader) error {
			_, err := r.GetMemory(ctx, scU1, m.ID)
			return err
		})
		if !engram.IsNotFound(err) {
			t.Fatalf("memory of the failed Update %d: %v, want ENOTFOUND", i, err)
		}
	}
	// A View that reads nothing has nothing to end.
	for range 5 {
		if err := db.View(ctx, func(engram.Reader) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
}

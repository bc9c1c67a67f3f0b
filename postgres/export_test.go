package postgres

import (
	"context"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storecheck"
)

// Setting returns the value of a run-time setting on one of db's
// connections, for tests.
func Setting(ctx context.Context, db *DB, name string) (string, error) {
	var v string
	err := db.pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

// Statements of the store, for tests of their plans.
const (
	GetMemoriesSQL = getMemoriesSQL
	GetVectorsSQL  = getVectorsSQL
)

// TxSetting returns a run-time setting read through r, a Reader or Tx of
// a DB, as its next statement: inside View and Update, the setting of
// their transaction.
func TxSetting(ctx context.Context, r engram.Reader, name string) (string, error) {
	var v string
	err := storecheck.Inner(r).(*tx).ptx.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}

// SetVectorPage sets how many memories one statement of db's ScanVectors
// reads, for tests of its paging.
func SetVectorPage(db *DB, n int) { db.vectorPage = n }

// VectorPageSQL is the statement of one page of ScanVectors, for tests of
// its plan.
func VectorPageSQL(s engram.Scope, embedder, after string, page int) (string, []any) {
	return vectorPageQuery(s, embedder, after, page)
}

// ListMemoriesSQL is the statement of the first page of ListMemories, for
// tests of its plan.
func ListMemoriesSQL(s engram.Scope, f engram.MemoryFilter) (string, []any, error) {
	limit, err := engram.ClampLimit(f.Limit)
	if err != nil {
		return "", nil, err
	}
	return listMemoriesSQL(s, &f, "", limit+1)
}

// ScrubStarted returns when db's last rewrite began, zero if none did.
func ScrubStarted(db *DB) time.Time {
	db.scrub.mu.Lock()
	defer db.scrub.mu.Unlock()
	return db.scrub.started
}

// ScrubIntervalOf returns db's least time between rewrites.
func ScrubIntervalOf(db *DB) time.Duration { return db.scrub.interval }

package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// The GIN index memories_text over memories.tsv is optional
// (engram.FullTextSwitch): the engine's in-memory index serves every
// namespace up to its limit, and all of them when the database's index is
// gone. Without it a search of the store's own (SearchText) still gives
// the same hits, by reading the tenant's rows instead of the index, and
// writes and scrub rewrites skip maintaining it. Whether it is there is
// the index itself, valid, in the schema the connections use.

var _ engram.FullTextSwitch = (*DB)(nil)

// textIndexValidSQL is true when memories_text is there and valid (a
// concurrent build that failed leaves it invalid), false when invalid, and
// no row when it is not there.
const textIndexValidSQL = `SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass('memories_text')`

// FullTextIndexed implements engram.FullTextReader: whether memories_text
// is there and valid. It fails with the database's error.
func (t *coreTx) FullTextIndexed(ctx context.Context) (bool, error) {
	valid, err := textIndexValid(ctx, t.ptx)
	if err != nil {
		return false, t.mapErr(ctx, "read the catalog", err)
	}
	return valid, nil
}

// textIndexValid reports whether memories_text is there and valid.
func textIndexValid(ctx context.Context, q querier) (bool, error) {
	var valid bool
	err := q.QueryRow(ctx, textIndexValidSQL).Scan(&valid)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return valid, err
}

// SetFullTextIndexed implements engram.FullTextSwitch without blocking
// reads or writes: DROP INDEX CONCURRENTLY for off; for on, CREATE INDEX
// CONCURRENTLY (leading with the tenant when btree_gin is installed, as
// migration 1 does), after dropping an invalid index a failed build left.
// It runs on a connection of its own without the statement timeout (a
// build at 1M memories takes minutes) and holds the store's advisory lock,
// so no scrub rewrite or other switch runs meanwhile. It fails with the
// database's error, EUNAVAILABLE after Close; a build that fails leaves no
// index (it is off).
func (db *DB) SetFullTextIndexed(ctx context.Context, on bool) error {
	if db.closed.Load() {
		return errClosed()
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.mapErr(ctx, "switch the full-text index", err)
	}
	defer conn.Release()
	if err := setTextIndex(ctx, conn.Conn(), on); err != nil {
		// Never hand a connection with these settings, or the lock, back
		// to the pool.
		conn.Conn().Close(context.WithoutCancel(ctx))
		return db.mapErr(ctx, "switch the full-text index", err)
	}
	return nil
}

// setTextIndex is SetFullTextIndexed on conn, whose settings and lock are
// left as they were found unless it fails.
func setTextIndex(ctx context.Context, conn *pgx.Conn, on bool) error {
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return err
	}
	if _, err := takeRewriteLock(ctx, conn, true); err != nil {
		return err
	}
	var there, valid, btreeGIN bool
	err := conn.QueryRow(ctx, `SELECT coalesce((`+textIndexValidSQL+`), false), to_regclass('memories_text') IS NOT NULL,
		EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin')`).Scan(&valid, &there, &btreeGIN)
	if err != nil {
		return err
	}
	var steps []string
	switch {
	case !on && there:
		steps = []string{"DROP INDEX CONCURRENTLY IF EXISTS memories_text"}
	case on && there && !valid:
		steps = []string{"DROP INDEX CONCURRENTLY IF EXISTS memories_text"}
		fallthrough
	case on && !there:
		cols := "tsv"
		if btreeGIN {
			cols = "tenant, tsv"
		}
		steps = append(steps, "CREATE INDEX CONCURRENTLY memories_text ON memories USING gin ("+cols+")")
	}
	for _, q := range steps {
		if _, err := conn.Exec(ctx, q); err != nil {
			if on {
				// A failed concurrent build leaves an invalid index that
				// writes would still maintain: take it away.
				_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP INDEX CONCURRENTLY IF EXISTS memories_text")
			}
			return err
		}
	}
	_, err = conn.Exec(ctx, "SELECT pg_advisory_unlock"+rewriteLock+"; RESET statement_timeout")
	return err
}

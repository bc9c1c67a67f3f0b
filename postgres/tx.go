package postgres

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// tx implements engram.Tx over one pgx transaction. View hands it out as an
// engram.Reader of a read-only transaction.
type tx struct {
	db       *DB
	ptx      querier // the transaction, or a connection outside one for ReadFresh
	readOnly bool
	changes  map[change]struct{} // memories this transaction changed, logged before commit
}

// The store implements every optional capability: both on the same tx.
var (
	_ engram.Tx           = (*tx)(nil)
	_ engram.VectorReader = (*tx)(nil)
	_ engram.VectorWriter = (*tx)(nil)
	_ engram.ChangeLog    = (*tx)(nil)
	_ engram.MetaReader   = (*tx)(nil)
	_ engram.MetaWriter   = (*tx)(nil)
	_ engram.Dumper       = (*tx)(nil)
)

func (t *tx) writable() error {
	if t.readOnly {
		return errors.New("postgres: write in a read-only transaction")
	}
	return nil
}

func (t *tx) mapErr(ctx context.Context, op string, err error) error {
	return t.db.mapErr(ctx, op, err)
}

// shortID keeps an echoed id from making an error message arbitrarily long.
func shortID(id string) string {
	if len(id) > 40 {
		id = id[:40] + "…"
	}
	if !utf8.ValidString(id) {
		return fmt.Sprintf("%+q", id)
	}
	return id
}

func invalidID(what, id string) error { return storeutil.InvalidID(what, id, shortID) }

// fnError marks an error returned by the caller's function, so that it
// reaches the caller unwrapped.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// each runs sql and calls emit for every row as it arrives; an fnError from
// emit comes back unwrapped, anything else is mapped with op.
func (t *tx) each(ctx context.Context, op, sql string, args []any, emit func(pgx.Row) error) error {
	rows, err := t.ptx.Query(ctx, sql, args...)
	if err != nil {
		return t.mapErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := emit(rows); err != nil {
			var fe fnError
			if errors.As(err, &fe) {
				return fe.err
			}
			return t.mapErr(ctx, op, err)
		}
	}
	return t.mapErr(ctx, op, rows.Err())
}

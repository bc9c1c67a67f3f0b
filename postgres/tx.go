package postgres

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/storecheck"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// tx implements storecheck.Tx (engram.Tx but for the graph reads
// storecheck makes of GraphLookups) over one pgx transaction; Update, View
// and ReadFresh hand it out behind storecheck's checks, View's and
// ReadFresh's read-only. It only composes the store's capabilities, one
// type each over the same base.
type tx struct {
	*base
	coreTx     // episodes, memories and their versions: engram.Tx
	adminTx    // audit, meta, export, dump, expiry and purges
	vectorTx   // embeddings and the change log
	graphTx    // entities, mentions, relations, communities, entity history
	identityTx // modalities, identities, observations, persons
	resourceTx // stored resources and their chunks
	jobTx      // the background job queue
	keyTx      // API keys and vault keys
}

// newTx returns a transaction over ptx; readOnly refuses every write.
func newTx(db *DB, ptx querier, readOnly bool) *tx {
	b := &base{db: db, ptx: ptx, readOnly: readOnly}
	return &tx{base: b, coreTx: coreTx{b}, adminTx: adminTx{b}, vectorTx: vectorTx{b}, graphTx: graphTx{b},
		identityTx: identityTx{b}, resourceTx: resourceTx{b}, jobTx: jobTx{b}, keyTx: keyTx{b}}
}

// The store keeps everything a transaction offers, on one tx.
var _ storecheck.Tx = (*tx)(nil)

// base is what every capability of a transaction shares: the store, the
// statements' querier and the memories changed so far. It also holds the
// few steps that one capability takes on another's tables (a purge prunes
// the graph, the resources and the identities it orphans), so that no
// capability reaches up into the tx that composes them.
type base struct {
	db       *DB
	ptx      querier // the transaction, or a connection outside one for ReadFresh
	readOnly bool
	changes  map[change]struct{} // memories this transaction changed, logged before commit
}

func (t *base) writable() error {
	if t.readOnly {
		return errors.New("postgres: write in a read-only transaction")
	}
	return nil
}

func (t *base) mapErr(ctx context.Context, op string, err error) error {
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

// checks are what the store adds to the contract's checks, which
// storecheck runs in front of every transaction it hands out: the refusal
// of a NUL character in an embedder name or a meta key, which a text
// column cannot hold.
var checks = storecheck.Options{Short: shortID, Embedder: checkEmbedder, MetaKey: checkMetaKey}

// each runs sql and calls emit for every row as it arrives; a
// storeutil.FnError from emit comes back unwrapped, anything else is
// mapped with op.
func (t *base) each(ctx context.Context, op, sql string, args []any, emit func(pgx.Row) error) error {
	rows, err := t.ptx.Query(ctx, sql, args...)
	if err != nil {
		return t.mapErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := emit(rows); err != nil {
			return storeutil.RowError(err, func(err error) error { return t.mapErr(ctx, op, err) })
		}
	}
	return t.mapErr(ctx, op, rows.Err())
}

// collect returns the rows of sql scanned by scan, with the errors each
// gives.
func collect[T any](ctx context.Context, t *base, op, sql string, args []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	return storeutil.Collect(func(emit func(pgx.Row) error) error { return t.each(ctx, op, sql, args, emit) }, scan)
}

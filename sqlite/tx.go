package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/engramhq/engram/internal/storecheck"
	"github.com/engramhq/engram/internal/storeutil"
)

// base is what every capability of a transaction shares: the database/sql
// transaction, its statements and the helpers that run them. A capability
// that needs another's step calls it here, never through tx.
type base struct {
	stx      *sql.Tx
	stmts    map[string]*sql.Stmt    // prepared on the pool at Open
	cache    *stmtCache              // the pool's queries built per call
	bound    map[*sql.Stmt]*sql.Stmt // those statements bound to stx
	readOnly bool
	// detached is set in a group-commit transaction: statements run
	// without their caller's cancellation, since SQLite answers an
	// interrupted write by rolling back the whole transaction, and with it
	// the other callers' updates. A caller whose context ended fails at
	// its next statement instead.
	detached bool
}

// The capabilities of a transaction, one type each, all over one base.
type (
	memoryTx    struct{ *base } // episodes, memories, versions, full text
	vectorTx    struct{ *base } // vectors and the change log
	graphTx     struct{ *base } // entities, mentions, relations, entity history
	communityTx struct{ *base } // communities and the dirty set
	identityTx  struct{ *base } // persons, identities, observations
	resourceTx  struct{ *base } // resources and their chunks
	jobTx       struct{ *base } // the job queue
	adminTx     struct{ *base } // audit, keys, vault keys, meta, export, dump, purge
)

// tx implements storecheck.Tx (engram.Tx but for the graph reads
// storecheck makes of GraphLookups) over one database/sql transaction, as
// the composition of the capability types. Update and View hand it out
// behind storecheck's checks, View on a query_only connection.
type tx struct {
	*base
	memoryTx
	vectorTx
	graphTx
	communityTx
	identityTx
	resourceTx
	jobTx
	adminTx
}

// newTx returns the transaction over b.
func newTx(b *base) *tx {
	return &tx{
		base:        b,
		memoryTx:    memoryTx{b},
		vectorTx:    vectorTx{b},
		graphTx:     graphTx{b},
		communityTx: communityTx{b},
		identityTx:  identityTx{b},
		resourceTx:  resourceTx{b},
		jobTx:       jobTx{b},
		adminTx:     adminTx{b},
	}
}

// stmtCtx returns the context to run a statement with, or ctx's error
// when the caller of a detached transaction gave up.
func (t *base) stmtCtx(ctx context.Context) (context.Context, error) {
	if !t.detached {
		return ctx, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// The store keeps everything a transaction offers, on one tx.
var _ storecheck.Tx = (*tx)(nil)

// stmt returns the prepared statement for q bound to this transaction, or
// nil when q is built per call.
func (t *base) stmt(ctx context.Context, q string) *sql.Stmt {
	s, ok := t.stmts[q]
	if !ok {
		if s = t.cache.get(q); s == nil {
			return nil
		}
	}
	if b, ok := t.bound[s]; ok {
		return b
	}
	b := t.stx.StmtContext(ctx, s)
	if t.bound == nil {
		t.bound = make(map[*sql.Stmt]*sql.Stmt)
	}
	t.bound[s] = b
	return b
}

func (t *base) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx, err := t.stmtCtx(ctx)
	if err != nil {
		return nil, err
	}
	if s := t.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.stx.QueryContext(ctx, q, args...)
}

// queryRow does not stop for a caller that gave up: *sql.Row cannot
// carry the error, and the caller's next query or exec reports it.
func (t *base) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if t.detached {
		ctx = context.WithoutCancel(ctx)
	}
	if s := t.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.stx.QueryRowContext(ctx, q, args...)
}

func (t *base) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx, err := t.stmtCtx(ctx)
	if err != nil {
		return nil, err
	}
	if s := t.stmt(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.stx.ExecContext(ctx, q, args...)
}

// writable guards the write methods: a Reader from View must not be
// type-asserted into writing.
func (t *base) writable() error {
	if t.readOnly {
		return errors.New("sqlite: write in a read-only transaction")
	}
	return nil
}

// shortID keeps an echoed id from making an error message arbitrarily long.
func shortID(id string) string {
	if len(id) > 40 {
		return id[:40] + "…"
	}
	return id
}

// checks are what the store adds to the contract's checks, which
// storecheck runs in front of every transaction it hands out.
var checks = storecheck.Options{Short: shortID}

// getMemoriesChunk is how many ids one query of GetMemories binds: far
// below SQLite's limit on variables, and large enough that a typical
// candidate list of a search takes one query.
const getMemoriesChunk = 500

// exportPageSize is how many records Export reads at a time.
const exportPageSize = 500

// each runs q and calls emit for every row; a storeutil.FnError from emit
// comes back unwrapped, anything else is mapped with op.
func (t *base) each(ctx context.Context, op, q string, args []any, emit func(scanner) error) error {
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return mapErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := emit(rows); err != nil {
			return storeutil.RowError(err, func(err error) error { return mapErr(ctx, op, err) })
		}
	}
	return mapErr(ctx, op, rows.Err())
}

// collect returns the rows of q scanned by scan, with the errors each
// gives.
func collect[T any](ctx context.Context, t *base, op, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	return storeutil.Collect(func(emit func(scanner) error) error { return t.each(ctx, op, q, args, emit) }, scan)
}

package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is what a tx sends its statements through: a transaction that
// opens with its first statement (lazyTx), or a connection outside any
// transaction for reads that need no common snapshot (DB.ReadFresh).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The BEGIN statements of View and Update.
const (
	beginRead  = "begin isolation level repeatable read read only"
	beginWrite = "begin isolation level read committed"
)

// lazyTx is a transaction on one pooled connection whose BEGIN goes out
// with its first statement, in one round trip, instead of in a round trip
// of its own. A transaction's snapshot is taken at its first statement
// either way, so what it sees is the same. A transaction that sent nothing
// has nothing to end.
type lazyTx struct {
	conn  *pgxpool.Conn
	begin string
	begun bool
}

// acquire returns a lazyTx on a connection of db's pool, or the pool's
// error.
func (db *DB) acquire(ctx context.Context, begin string) (*lazyTx, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &lazyTx{conn: conn, begin: begin}, nil
}

// start sends BEGIN and the first statement as one batch and returns the
// batch with the statement's result still to read, or the error of BEGIN.
func (t *lazyTx) start(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(t.begin)
	b.Queue(sql, args...)
	t.begun = true
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	return br, nil
}

// Exec runs one statement.
func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.begun {
		return t.conn.Exec(ctx, sql, args...)
	}
	br, err := t.start(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query runs one statement that returns rows; the caller closes them.
func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.begun {
		return t.conn.Query(ctx, sql, args...)
	}
	br, err := t.start(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// QueryRow runs one statement and scans its first row; pgx.ErrNoRows when
// it has none.
func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.begun {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	return &firstRow{rows: rows, err: err}
}

// commit commits what the transaction wrote. pgx.ErrTxCommitRollback when
// the server had already given the transaction up (a statement of it
// failed), as pgx's own transactions report it.
func (t *lazyTx) commit(ctx context.Context) error {
	if !t.begun {
		return nil
	}
	tag, err := t.conn.Exec(ctx, "commit")
	t.begun = false
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// end rolls back what was not committed and gives the connection back.
// The caller's ctx may be what ended the transaction, so the rollback has
// a few seconds of its own. A connection whose rollback failed, or that
// still reads rows, is closed by the pool rather than reused.
func (t *lazyTx) end(ctx context.Context) {
	if t.begun {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = t.conn.Exec(rctx, "rollback")
		cancel()
		t.begun = false
	}
	t.conn.Release()
}

// batchRows are the rows of a transaction's first statement, read from
// the batch that began the transaction; closing them closes the batch.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error // of closing the batch
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// firstRow is pgx.Row over rows: Scan reads the first row and closes them.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

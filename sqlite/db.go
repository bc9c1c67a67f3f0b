package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storecheck"
	"github.com/engramhq/engram/internal/storeutil"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// busyTimeout is how long a statement waits for a lock held by another
// process before failing with EUNAVAILABLE.
const busyTimeout = 10 * time.Second

// scrubBusyTimeout is how long Scrub's checkpoint waits for readers.
const scrubBusyTimeout = 250 * time.Millisecond

// DB is an engram.Store in one SQLite database file. It is safe for
// concurrent use.
type DB struct {
	path   string
	write  *sql.DB // exactly one connection: serialises every Update
	read   *sql.DB // query_only connections for View
	wstmts map[string]*sql.Stmt
	rstmts map[string]*sql.Stmt
	wcache *stmtCache
	rcache *stmtCache
	closed atomic.Bool

	// The group committer (commit.go): Update hands its fn over queue
	// (unbuffered, so nothing waits there once the committer stopped);
	// quit stops it and stopped closes when it has.
	queue   chan *writeReq
	quit    chan struct{}
	stopped chan struct{}
	batches atomic.Int64 // transactions committed
	batched atomic.Int64 // updates they held
}

var (
	_ engram.Store    = (*DB)(nil)
	_ engram.Scrubber = (*DB)(nil)
)

// Open opens the database file at path, creating it and its parent
// directories when missing, and applies any migrations it has not seen. It
// fails if the file is not a database, if its schema is newer than this
// program knows, or if ctx ends first.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlite: open: path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// Memories are personal data: keep the directory private when creating it.
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	db := &DB{path: abs}

	// The writer alone sets journal_mode: it is a property of the file, and
	// the readers, which are query_only, could not change it anyway.
	db.write, err = sql.Open("sqlite", dsn(abs,
		"_pragma=busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(FULL)",
		"_pragma=foreign_keys(1)",
		"_pragma=cache_size(-16000)",
		// Deleted rows are overwritten with zeros, not left in free space.
		"_pragma=secure_delete(1)",
		"_txlock=immediate",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxLifetime(0)
	db.write.SetConnMaxIdleTime(0)

	if err := db.checkWriter(ctx); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	if err := migrate(ctx, db.write, abs); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}

	db.read, err = sql.Open("sqlite", dsn(abs,
		"_pragma=busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")",
		"_pragma=foreign_keys(1)",
		"_pragma=cache_size(-16000)",
		"_pragma=query_only(1)",
	))
	if err != nil {
		db.write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.read.SetMaxOpenConns(n)
	db.read.SetMaxIdleConns(n)

	var fts int
	if err := db.write.QueryRowContext(ctx, ftsTablesSQL).Scan(&fts); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	if db.wstmts, err = prepare(ctx, db.write, writeStatements(fts > 0)); err == nil {
		db.rstmts, err = prepare(ctx, db.read, readStatements())
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	db.wcache, db.rcache = newStmtCache(db.write), newStmtCache(db.read)
	db.queue, db.quit, db.stopped = make(chan *writeReq), make(chan struct{}), make(chan struct{})
	go db.committer()
	return db, nil
}

func dsn(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String() + "?" + strings.Join(params, "&")
}

// checkWriter makes sure the pragmas the durability and purge guarantees
// rest on took effect.
func (db *DB) checkWriter(ctx context.Context) error {
	var mode string
	if err := db.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	var sync, fk int
	if err := db.write.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return err
	}
	if err := db.write.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return err
	}
	var secure int
	if err := db.write.QueryRowContext(ctx, "PRAGMA secure_delete").Scan(&secure); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") || sync != 2 || fk != 1 || secure != 1 {
		return fmt.Errorf("unexpected pragmas: journal_mode=%s synchronous=%d foreign_keys=%d secure_delete=%d", mode, sync, fk, secure)
	}
	return nil
}

func prepare(ctx context.Context, db *sql.DB, queries []string) (map[string]*sql.Stmt, error) {
	m := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		if _, ok := m[q]; ok {
			continue
		}
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, s := range m {
				s.Close()
			}
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		m[q] = s
	}
	return m, nil
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database. Later calls fail with EUNAVAILABLE; closing
// twice is not an error.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	if db.quit != nil {
		close(db.quit)
		<-db.stopped // the batch under way is answered first
	}
	var errs []error
	for _, c := range []*stmtCache{db.wcache, db.rcache} {
		if c != nil {
			errs = append(errs, c.close())
		}
	}
	for _, m := range []map[string]*sql.Stmt{db.wstmts, db.rstmts} {
		for _, s := range m {
			errs = append(errs, s.Close())
		}
	}
	if db.read != nil {
		errs = append(errs, db.read.Close())
	}
	errs = append(errs, db.write.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", db.path, err)
	}
	return nil
}

func errClosed() error { return engram.Errorf(engram.EUNAVAILABLE, "the database is closed") }

// Ready returns nil when the database answers a query, else an EUNAVAILABLE
// error.
func (db *DB) Ready(ctx context.Context) error {
	if db.closed.Load() {
		return errClosed()
	}
	var n int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		err = mapErr(ctx, "ready", err)
		if engram.ErrorCode(err) == engram.EUNAVAILABLE {
			return err
		}
		return fmt.Errorf("%w: %w", engram.Errorf(engram.EUNAVAILABLE, "the database is not available"), err)
	}
	return nil
}

// Update runs fn in a BEGIN IMMEDIATE transaction on the writer
// connection, waiting for earlier updates to finish (fn must not call Update
// itself: it would wait forever). Updates queued at the same time share one
// transaction and one sync to disk (group commit), each in its own
// savepoint: if fn returns an error (returned as is) or panics (the panic
// is raised again here), or ctx ends before the commit, nothing fn wrote is
// kept, and the other updates are not affected. When Update returns nil the
// transaction holding fn's writes is on disk. A closed database gives
// EUNAVAILABLE; a done ctx gives an error wrapping ctx.Err(). fn runs on
// another goroutine, and its statements are not interrupted when ctx ends:
// the next one fails.
func (db *DB) Update(ctx context.Context, fn func(tx engram.Tx) error) error {
	return db.update(ctx, func(t *tx) error { return fn(storecheck.NewTx(t, checks)) })
}

// update is Update with the store's own transaction, unchecked, for the
// store's own writes.
func (db *DB) update(ctx context.Context, fn func(t *tx) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	if err := ctx.Err(); err != nil {
		return mapErr(ctx, "begin", err)
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan writeResult, 1)}
	select {
	case db.queue <- r:
	case <-db.quit:
		return errClosed()
	case <-ctx.Done():
		return mapErr(ctx, "begin", ctx.Err())
	}
	var res writeResult
	select {
	case res = <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqAbandoned) {
			return mapErr(ctx, "begin", ctx.Err())
		}
		res = <-r.done // fn runs or ran: its outcome is known after the commit
	}
	if res.panicked {
		panic(res.panicVal)
	}
	return res.err
}

// Scrub implements engram.Scrubber. Deletes already leave no trace in the
// database file (secure_delete zeroes freed cells and pages; FTS5's
// secure-delete removes a row's index entries); Scrub copies the
// write-ahead log into the file and truncates it, so the log no longer
// holds the pages as they were before the delete. A reader holding an old
// snapshot makes the checkpoint stop short: Scrub then fails with
// EUNAVAILABLE and a later Scrub finishes the work.
func (db *DB) Scrub(ctx context.Context) error {
	if db.closed.Load() {
		return errClosed()
	}
	// The checkpoint waits for readers of older snapshots through the busy
	// handler; on the one writer connection, wait briefly rather than hold
	// every later write for busyTimeout.
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return mapErr(ctx, "scrub", err)
	}
	defer conn.Close()
	var busy, logged, moved int
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(scrubBusyTimeout.Milliseconds(), 10)); err != nil {
		return mapErr(ctx, "scrub", err)
	}
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved)
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = "+strconv.FormatInt(busyTimeout.Milliseconds(), 10)); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return mapErr(ctx, "scrub", err)
	}
	if busy != 0 {
		return engram.Errorf(engram.EUNAVAILABLE, "scrub: readers kept %d of %d write-ahead log pages from the checkpoint; try again later", logged-moved, logged)
	}
	return nil
}

// View runs fn in a read-only transaction on the reader pool; it sees one
// snapshot, from its first read on, and never waits for Update. fn's error
// is returned as is.
func (db *DB) View(ctx context.Context, fn func(r engram.Reader) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	stx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return mapErr(ctx, "begin", err)
	}
	defer stx.Rollback()
	return fn(storecheck.NewReader(newTx(&base{stx: stx, stmts: db.rstmts, cache: db.rcache, readOnly: true}), checks))
}

// IntegrityCheck runs SQLite's integrity_check and foreign_key_check and,
// when the full-text index of memories is there, FTS5's integrity-check on
// it and a check that every memory has exactly one row in it. It returns
// an error describing each problem found, or nil.
func (db *DB) IntegrityCheck(ctx context.Context) error {
	if db.closed.Load() {
		return errClosed()
	}
	var problems []string
	rows, err := db.read.QueryContext(ctx, "PRAGMA integrity_check(20)") // the first 20 problems
	if err != nil {
		return mapErr(ctx, "integrity check", err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return mapErr(ctx, "integrity check", err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return mapErr(ctx, "integrity check", err)
	}

	var fkBad int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&fkBad); err != nil {
		return mapErr(ctx, "foreign key check", err)
	}
	if fkBad > 0 {
		problems = append(problems, fmt.Sprintf("%d rows violate foreign keys", fkBad))
	}

	var fts int
	if err := db.read.QueryRowContext(ctx, ftsTablesSQL).Scan(&fts); err != nil {
		return mapErr(ctx, "integrity check", err)
	}
	checks := []struct{ table, fts string }{{"memories", "memories_fts"}}
	if fts == 0 {
		checks = nil // the full-text index is off
	}
	for _, t := range checks {
		// The FTS5 command is an INSERT, so it needs the writer.
		if _, err := db.write.ExecContext(ctx, "INSERT INTO "+t.fts+"("+t.fts+") VALUES ('integrity-check')"); err != nil {
			if ctx.Err() != nil {
				return mapErr(ctx, "integrity check", err)
			}
			problems = append(problems, fmt.Sprintf("%s: %v", t.fts, err))
			continue
		}
		// A contentless index cannot compare itself with the table, but its
		// docsize shadow table lists exactly the rowids it holds.
		var missing, orphan int
		err := db.read.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM `+t.table+` r WHERE NOT EXISTS (SELECT 1 FROM `+t.fts+`_docsize d WHERE d.id = r.rid)),
			(SELECT count(*) FROM `+t.fts+`_docsize d WHERE NOT EXISTS (SELECT 1 FROM `+t.table+` r WHERE r.rid = d.id))`).Scan(&missing, &orphan)
		if err != nil {
			return mapErr(ctx, "integrity check", err)
		}
		if missing > 0 {
			problems = append(problems, fmt.Sprintf("%d %s are missing from %s", missing, t.table, t.fts))
		}
		if orphan > 0 {
			problems = append(problems, fmt.Sprintf("%s has %d rows without a row in %s", t.fts, orphan, t.table))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("sqlite: integrity check of %s failed: %s", db.path, strings.Join(problems, "; "))
	}
	return nil
}

// mapErr turns a database error into what callers of the Store expect: an
// *engram.Error passes through; a context that ended gives its own error
// (errors.Is(err, context.Canceled) holds); a busy, full or closed database
// is EUNAVAILABLE; anything else is an internal error wrapped with op. The
// message of an *engram.Error never includes SQL.
func mapErr(ctx context.Context, op string, err error) error {
	if storeutil.IsCoded(err) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("sqlite: %s: %w", op, cerr)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("sqlite: %s: %w: %w", op, engram.Errorf(engram.EUNAVAILABLE, "the database is busy; try again later"), err)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("sqlite: %s: %w: %w", op, engram.Errorf(engram.EUNAVAILABLE, "the disk holding the database is full"), err)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("sqlite: %s: %w: %w", op, engram.Errorf(engram.EUNAVAILABLE, "the database file cannot be written"), err)
		}
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
		return fmt.Errorf("sqlite: %s: %w: %w", op, errClosed(), err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// isConstraint reports whether err is a UNIQUE or PRIMARY KEY violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code()
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

type migration = storeutil.Migration

func migrations() ([]migration, error) { return storeutil.Migrations(migrationFS, "migrations") }

// migrate applies, each in its own transaction, the migrations not yet
// recorded in schema_migrations. Another process opening the same file at
// the same time waits for the write lock and then sees them applied.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var newest int
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&newest); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if known := ms[len(ms)-1].Version; newest > known {
		return fmt.Errorf("the database schema is at version %d, newer than the %d this program knows", newest, known)
	}
	for _, m := range ms {
		if err := applyMigration(ctx, db, path, m); err != nil {
			return err
		}
	}
	return nil
}

// afterMigration holds the steps of migrations that need Go, by version;
// each runs in the migration's transaction, after its SQL.
var afterMigration = map[int]func(ctx context.Context, tx *sql.Tx) error{
	2: reindexMemories,
	8: reindexMemories, // episodes_fts, made anew too, is dropped by migration 15
}

// reindexMemories fills memories_fts (made anew by migrations 2 and 8)
// from the memories table.
func reindexMemories(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT rid, org, project, user_id, value, abstraction, cues FROM memories ORDER BY rid")
	if err != nil {
		return fmt.Errorf("read memories to index: %w", err)
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, insertMemoryFTSSQL)
	if err != nil {
		return fmt.Errorf("index memories: %w", err)
	}
	defer ins.Close()
	for rows.Next() {
		var (
			rid                                    int64
			org, project, user, value, abstraction string
			cuesJSON                               sql.NullString
		)
		if err := rows.Scan(&rid, &org, &project, &user, &value, &abstraction, &cuesJSON); err != nil {
			return fmt.Errorf("read memories to index: %w", err)
		}
		var cues []string
		if cuesJSON.Valid && cuesJSON.String != "" {
			if err := json.Unmarshal([]byte(cuesJSON.String), &cues); err != nil {
				return fmt.Errorf("memory row %d: cues are not a JSON list of strings: %w", rid, err)
			}
		}
		if _, err := ins.ExecContext(ctx, rid, ftsText(value), ftsText(abstraction), cuesText(cues), nsToken(org, project, user)); err != nil {
			return fmt.Errorf("index memory row %d: %w", rid, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read memories to index: %w", err)
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, path string, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if after := afterMigration[m.Version]; after != nil {
		if err := after(ctx, tx); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.Version, m.Name, micros(time.Now())); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	slog.InfoContext(ctx, "sqlite: applied migration", "path", path, "version", m.Version, "name", m.Name)
	return nil
}

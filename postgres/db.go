package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storecheck"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Defaults of Options.
const (
	DefaultStatementTimeout = 30 * time.Second
	DefaultConnectTimeout   = 5 * time.Second
	DefaultChangeLogKeep    = 100_000
)

// Options configure Open. Zero values give the defaults; settings given as
// parameters of the URL (pool_max_conns, connect_timeout, statement_timeout)
// apply when the matching option is zero.
type Options struct {
	// MaxConns bounds the pool; default the URL's pool_max_conns, else
	// four per CPU and at least 8.
	MaxConns int32
	// MinConns connections are kept open even when idle.
	MinConns int32
	// StatementTimeout is how long the server runs one statement before
	// cancelling it (the call then fails with EUNAVAILABLE); default 30s, or
	// the URL's statement_timeout. Negative means none.
	StatementTimeout time.Duration
	// ConnectTimeout bounds one connection attempt; default 5s, or the
	// URL's connect_timeout.
	ConnectTimeout time.Duration
	// ChangeLogKeep is how many of the latest change numbers of each
	// (tenant, user) the change log keeps for Changes; default 100,000.
	// Asking for changes after an older number is ECONFLICT.
	ChangeLogKeep int64
	// SkipMigrations leaves the schema as it is; call Migrate to update it.
	SkipMigrations bool
	// ScrubInterval is the least time between two rewrites of the tables
	// that hold text, which Scrub asks for after a hard delete or a purge
	// (see Scrub), counted from the last rewrite of any server sharing the
	// database; default the URL's engram_scrub_interval (a duration, or
	// "off"), else DefaultScrubInterval. Negative means never (ScrubNow
	// still rewrites).
	ScrubInterval time.Duration
	// Logger receives migration and connection logs; default slog.Default().
	Logger *slog.Logger
}

// DB is an engram.Store in a PostgreSQL database. It is safe for concurrent
// use, also by several processes sharing one database.
type DB struct {
	scrub scrubber

	pool        *pgxpool.Pool
	addr        string // host:port, for error messages
	stmtTimeout time.Duration
	keep        int64
	vectorPage  int // memories per statement of ScanVectors
	log         *slog.Logger
	closed      atomic.Bool
}

var (
	_ engram.Store       = (*DB)(nil)
	_ engram.FreshReader = (*DB)(nil)
)

// Open connects to the database at url (postgres://user:pass@host:port/db?...)
// and, unless opts.SkipMigrations, applies the migrations the database has
// not seen. It fails with EINVALID for a malformed URL, with EUNAVAILABLE
// when the database cannot be reached, and with a plain error when the
// schema is newer than this program knows or a migration fails.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "the PostgreSQL URL is not valid: %v", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = int32(max(8, 4*runtime.GOMAXPROCS(0)))
	}
	if opts.MinConns > 0 {
		cfg.MinConns = min(opts.MinConns, cfg.MaxConns)
	}
	cc := cfg.ConnConfig
	if opts.ConnectTimeout > 0 || cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = cmpOr(opts.ConnectTimeout, DefaultConnectTimeout)
	}
	db := &DB{
		addr:       address(cc),
		keep:       cmpOr(opts.ChangeLogKeep, DefaultChangeLogKeep),
		vectorPage: vectorPage,
		log:        opts.Logger,
	}
	if db.scrub.interval, err = scrubInterval(opts.ScrubInterval, cc.RuntimeParams); err != nil {
		return nil, err
	}
	if db.log == nil {
		db.log = slog.Default()
	}
	// The timeout travels in the startup message, so it holds from the
	// first statement of every connection without a round trip.
	switch st, inURL := cc.RuntimeParams["statement_timeout"]; {
	case opts.StatementTimeout < 0:
		delete(cc.RuntimeParams, "statement_timeout")
	case opts.StatementTimeout > 0 || !inURL:
		db.stmtTimeout = cmpOr(opts.StatementTimeout, DefaultStatementTimeout)
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(db.stmtTimeout.Milliseconds(), 10)
	default:
		if ms, err := strconv.ParseInt(st, 10, 64); err == nil {
			db.stmtTimeout = time.Duration(ms) * time.Millisecond
		}
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok {
		cc.RuntimeParams["application_name"] = "engram"
	}
	// Every statement is planned for its own arguments. A generic plan,
	// which PostgreSQL adopts for a prepared statement after five runs,
	// is made once per connection from the statistics of that moment: made
	// while a table was new and small it kept scanning the whole table for
	// a primary-key lookup long after the table grew, and one plan for all
	// tenants suits neither the large ones nor the small. The URL may set
	// another plan_cache_mode.
	if _, ok := cc.RuntimeParams["plan_cache_mode"]; !ok {
		cc.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}

	db.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", db.addr, err)
	}
	if opts.SkipMigrations {
		err = db.Ready(ctx)
	} else {
		_, err = db.Migrate(ctx)
	}
	if err != nil {
		db.pool.Close()
		return nil, err
	}
	return db, nil
}

// ScrubIntervalParam is the URL parameter that sets Options.ScrubInterval:
// a duration such as 6h, or off.
const ScrubIntervalParam = "engram_scrub_interval"

// scrubInterval returns the interval between rewrites: opt when set, else
// the URL's parameter, which it takes out of params (the server would
// refuse it), else the default. A parameter that is neither "off" nor a
// positive duration is EINVALID.
func scrubInterval(opt time.Duration, params map[string]string) (time.Duration, error) {
	v, inURL := params[ScrubIntervalParam]
	delete(params, ScrubIntervalParam)
	switch {
	case opt != 0:
		return opt, nil
	case !inURL:
		return DefaultScrubInterval, nil
	case v == "off":
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, engram.Errorf(engram.EINVALID, "the PostgreSQL URL's %s is %q; want a positive duration such as 6h, or off", ScrubIntervalParam, v)
	}
	return d, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// address names the database server in messages, never with credentials.
func address(cc *pgx.ConnConfig) string {
	if strings.HasPrefix(cc.Host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", cc.Host, cc.Port)
	}
	return net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
}

// Addr returns the host:port (or socket path) of the database server.
func (db *DB) Addr() string { return db.addr }

// Close closes the pool, waiting for connections in use to be returned.
// Later calls fail with EUNAVAILABLE; closing twice is not an error.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	db.scrub.stop()
	db.pool.Close()
	return nil
}

func errClosed() error { return engram.Errorf(engram.EUNAVAILABLE, "the database is closed") }

// Ready returns nil when the database answers, else an EUNAVAILABLE error
// naming the database's address.
func (db *DB) Ready(ctx context.Context) error {
	if db.closed.Load() {
		return errClosed()
	}
	if err := db.pool.Ping(ctx); err != nil {
		err = db.mapErr(ctx, "ready", err)
		if engram.ErrorCode(err) == engram.EUNAVAILABLE {
			return err
		}
		return fmt.Errorf("%w: %w", engram.Errorf(engram.EUNAVAILABLE, "the database at %s is not available", db.addr), err)
	}
	return nil
}

// Update runs fn in one READ COMMITTED transaction. If fn returns an error
// (returned as is) or panics, or the commit fails, the transaction is rolled
// back and nothing is kept; when Update returns nil the write is committed.
// fn runs once: Update never retries, since fn may have side effects. A
// closed or unreachable database gives EUNAVAILABLE; a done ctx gives an
// error wrapping ctx.Err().
func (db *DB) Update(ctx context.Context, fn func(tx engram.Tx) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	ltx, err := db.acquire(ctx, beginWrite)
	if err != nil {
		return db.mapErr(ctx, "begin", err)
	}
	// Also after a panic in fn, and after a failed commit (a no-op then).
	defer ltx.end(ctx)
	t := newTx(db, ltx, false)
	if err := fn(storecheck.NewTx(t, checks)); err != nil {
		return err
	}
	if err := t.logChanges(ctx); err != nil {
		return err
	}
	if err := ltx.commit(ctx); err != nil {
		if errors.Is(err, pgx.ErrTxCommitRollback) {
			// A statement failed inside fn and fn went on: the server has
			// already discarded the transaction.
			return fmt.Errorf("postgres: commit: a statement of the transaction failed, so nothing was written: %w", err)
		}
		return db.mapErr(ctx, "commit", err)
	}
	return nil
}

func rollback(ctx context.Context, ptx pgx.Tx) {
	// The caller's ctx may be what ended the transaction.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = ptx.Rollback(rctx)
}

// View runs fn in a REPEATABLE READ READ ONLY transaction: every read sees
// the snapshot taken at its first statement, which carries the BEGIN with
// it. fn's error is returned as is.
func (db *DB) View(ctx context.Context, fn func(r engram.Reader) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	ltx, err := db.acquire(ctx, beginRead)
	if err != nil {
		return db.mapErr(ctx, "begin", err)
	}
	defer ltx.end(ctx)
	return fn(storecheck.NewReader(newTx(db, ltx, true), checks))
}

// ReadFresh implements engram.FreshReader: fn's reads run on one
// connection outside any transaction, each statement seeing what was
// committed before it began, with no BEGIN or ROLLBACK round trips. The
// connection is taken before fn runs, as View's is, so a caller may take
// a lock in fn that holders of other connections wait for. fn's error is
// returned as is.
func (db *DB) ReadFresh(ctx context.Context, fn func(r engram.Reader) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.mapErr(ctx, "acquire", err)
	}
	defer conn.Release()
	return fn(storecheck.NewReader(newTx(db, conn, true), checks))
}

// mapErr turns a database error into what callers of the Store expect: an
// *engram.Error passes through; a context that ended gives its own error; an
// unreachable database, a statement timeout, a conflicting concurrent
// transaction or a read-only server is EUNAVAILABLE; text the database
// cannot hold is EINVALID; anything else is an internal error wrapped with
// op. The message of an *engram.Error never includes SQL.
func (db *DB) mapErr(ctx context.Context, op string, err error) error {
	if storeutil.IsCoded(err) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("postgres: %s: %w (%w)", op, cerr, err)
	}
	// ctx is live, so a deadline here is pgx's own, such as the connect
	// timeout.
	if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return db.coded(op, engram.EUNAVAILABLE, err, "the database at %s is unreachable: it did not answer in time", db.addr)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	if db.closed.Load() {
		return fmt.Errorf("postgres: %s: %w: %w", op, errClosed(), err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch c := pe.Code; {
		case c == "57014": // query_canceled, and not by ctx: the statement timeout
			return db.coded(op, engram.EUNAVAILABLE, err, "the database did not finish the request within its statement timeout (%s); try again later", db.timeoutText())
		case c == "40001" || c == "40P01":
			return db.coded(op, engram.EUNAVAILABLE, err, "the database aborted the request because of a conflicting concurrent write; try again")
		case c == "55P03":
			return db.coded(op, engram.EUNAVAILABLE, err, "the database is busy; try again later")
		case c == "25006":
			return db.coded(op, engram.EUNAVAILABLE, err, "the database at %s is read-only (a standby?); engram needs the primary", db.addr)
		case c == "57P01" || c == "57P02" || c == "57P03" || strings.HasPrefix(c, "08"):
			return db.coded(op, engram.EUNAVAILABLE, err, "the database at %s is unreachable: it is shutting down or restarting", db.addr)
		case strings.HasPrefix(c, "28"):
			return db.coded(op, engram.EUNAVAILABLE, err, "the database at %s refused engram's credentials", db.addr)
		case c == "3D000":
			return db.coded(op, engram.EUNAVAILABLE, err, "the database named in the store URL does not exist at %s", db.addr)
		case strings.HasPrefix(c, "53"):
			return db.coded(op, engram.EUNAVAILABLE, err, "the database at %s is out of resources: %s", db.addr, pe.Message)
		case c == "22021" || c == "22P05":
			return db.coded(op, engram.EINVALID, err, "the text holds a character the database cannot store")
		case c == "54000":
			return db.coded(op, engram.EINVALID, err, "a text is too long for the database's full-text index")
		}
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	if reason, ok := unreachable(err); ok {
		// The pool's other connections went the same way: drop them, so
		// that the first call after the database is back does not get one.
		db.pool.Reset()
		return db.coded(op, engram.EUNAVAILABLE, err, "the database at %s is unreachable: %s", db.addr, reason)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

func (db *DB) coded(op, code string, err error, format string, args ...any) error {
	return fmt.Errorf("postgres: %s: %w: %w", op, engram.Errorf(code, format, args...), err)
}

func (db *DB) timeoutText() string {
	if db.stmtTimeout <= 0 {
		return "set on the server"
	}
	return db.stmtTimeout.String()
}

// unreachable reports whether err means the connection to the server
// failed or broke, and says why in a few words.
func unreachable(err error) (string, bool) {
	var ce *pgconn.ConnectError
	isConnect := errors.As(err, &ce)
	var sys syscall.Errno
	if errors.As(err, &sys) {
		return sys.Error(), true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "cannot resolve " + dns.Name, true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if ne.Timeout() {
			return "it did not answer in time", true
		}
		return "the network connection failed", true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrDeadlineExceeded) {
		return "the connection was closed", true
	}
	if errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) && strings.Contains(err.Error(), "conn closed") {
		return "the connection was closed", true
	}
	if isConnect {
		return "the connection failed", true
	}
	return "", false
}

type migration = storeutil.Migration

func migrations() ([]migration, error) { return storeutil.Migrations(migrationFS, "migrations") }

// migrationLock is the key of the transaction-level advisory lock every
// migration step holds: one per database, so servers starting at once
// apply each migration exactly once, one after another.
const migrationLock = 0x656e6772616d // "engram"

// Migrate applies, each in its own transaction, the embedded migrations the
// database has not recorded in schema_migrations (in the schema that the
// connection's search_path selects), and returns the names of those it
// applied, oldest first: none when the schema is up to date. It fails if
// the schema is newer than this program knows; a migration that fails
// leaves the schema as the previous one left it. EUNAVAILABLE when the
// database cannot be reached.
func (db *DB) Migrate(ctx context.Context) ([]string, error) {
	if db.closed.Load() {
		return nil, errClosed()
	}
	ms, err := migrations()
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, db.mapErr(ctx, "migrate", err)
	}
	defer conn.Release()
	var applied []string
	for _, m := range ms {
		ran, err := db.applyMigration(ctx, conn, m, ms[len(ms)-1].Version)
		if err != nil {
			return applied, err
		}
		if ran {
			applied = append(applied, m.Name)
		}
	}
	return applied, nil
}

func (db *DB) applyMigration(ctx context.Context, conn *pgxpool.Conn, m migration, known int) (bool, error) {
	fail := func(err error) (bool, error) {
		if err := db.mapErr(ctx, "migration "+m.Name, err); engram.ErrorCode(err) == engram.EUNAVAILABLE {
			return false, err
		}
		return false, fmt.Errorf("postgres: migration %s: %w", m.Name, err)
	}
	ptx, err := conn.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer rollback(ctx, ptx)
	// Neither waiting for another server's migration nor building an index
	// on a large table should hit the statement timeout; ctx bounds both.
	if _, err := ptx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return fail(err)
	}
	if _, err := ptx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
		return fail(err)
	}
	if _, err := ptx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fail(err)
	}
	var newest int
	if err := ptx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&newest); err != nil {
		return fail(err)
	}
	if newest > known {
		return false, fmt.Errorf("postgres: the database schema is at version %d, newer than the %d this program knows; upgrade engram", newest, known)
	}
	var done bool
	if err := ptx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)", m.Version).Scan(&done); err != nil {
		return fail(err)
	}
	if done {
		if err := ptx.Commit(ctx); err != nil {
			return fail(err)
		}
		return false, nil
	}
	// No arguments: the simple protocol, which runs several statements.
	if _, err := ptx.Exec(ctx, m.SQL); err != nil {
		return fail(err)
	}
	if _, err := ptx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
		return fail(err)
	}
	if err := ptx.Commit(ctx); err != nil {
		return fail(err)
	}
	db.log.InfoContext(ctx, "postgres: applied migration", "database", db.addr, "version", m.Version, "name", m.Name)
	return true, nil
}

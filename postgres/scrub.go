package postgres

import (
	"cmp"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/jackc/pgx/v5"
)

// DefaultScrubInterval is the default Options.ScrubInterval. A rewrite
// costs time in proportion to the whole store (about 3.5 s at 40,000
// memories, 42 s at 1M), with every tenant's reads of a table waiting
// while it is copied, so it runs rarely.
const DefaultScrubInterval = time.Hour

// scrubLockTimeout is how long a rewrite waits for a table's lock.
const scrubLockTimeout = 2 * time.Second

// scrubRetry is the longest a background rewrite waits to try again after
// it found another server's rewrite under way.
const scrubRetry = time.Minute

// scrubStarted is the meta key holding when the store's last rewrite
// began, by the database's clock.
const scrubStarted = "scrub_started"

// scrubLock is the advisory lock's first key (the second is the schema's
// hash): one rewrite at a time per store, however many servers share it.
const scrubLock = 0x656e6772 // "engr"

// The tables whose rows hold text a client wrote are rewritten; the vectors
// are vacuumed in place.
const (
	scrubFull  = "memories, memory_versions, episodes, audit, entities, entity_keys, relations, resources, resource_chunks, identity_observations, identities, persons, identity_events, identity_modalities, communities, entity_versions"
	scrubPlain = "memory_vectors"
)

// scrubber runs the rewrites Scrub asks for in the background, one at a
// time and at most one per interval: a burst of deletes costs one rewrite.
type scrubber struct {
	interval time.Duration

	mu      sync.Mutex
	pending bool          // asked for since the last rewrite started
	running bool          // a rewrite is under way
	started time.Time     // when this server's last rewrite began
	wake    chan struct{} // nil until the first Scrub starts the worker
	quit    chan struct{}
	exited  chan struct{}
}

var _ engram.Scrubber = (*DB)(nil)

// Scrub implements engram.Scrubber by asking for a rewrite and returning
// at once; ScrubWait waits for it. PostgreSQL never overwrites a deleted
// row in place: a plain VACUUM marks its space free but leaves its bytes in
// the page, and a GIN index keeps the words of deleted rows. So the rewrite
// runs VACUUM FULL on the tables that hold text (memories, memory_versions,
// episodes, audit, the graph's entities, entity_keys and relations, and
// resources and their chunks), which writes each with its indexes and TOAST to new
// files and truncates the old ones, and a plain VACUUM on memory_vectors.
// It takes each table's exclusive lock for as long as that table takes to
// copy, so it runs in the background, at most once per
// Options.ScrubInterval among all the servers sharing the database (one at
// a time, under an advisory lock; the start of the last one is kept in the
// meta table, and one that failed counts too), and gives up (to try again
// an interval later) rather than wait more than scrubLockTimeout for a
// lock, which would queue every reader behind it. A negative interval turns
// the rewrites off (ScrubNow still runs one). The write-ahead log keeps the
// old rows until the server recycles its segments. Scrub fails only after
// Close.
func (db *DB) Scrub(ctx context.Context) error {
	if db.closed.Load() {
		return errClosed()
	}
	s := &db.scrub
	if s.interval < 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = true
	if s.wake == nil {
		s.wake, s.quit, s.exited = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go db.scrubLoop()
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// ScrubWait waits until every rewrite asked for before it has run. It
// fails with the context's error, or EUNAVAILABLE after Close.
func (db *DB) ScrubWait(ctx context.Context) error {
	s := &db.scrub
	for {
		if db.closed.Load() {
			return errClosed()
		}
		s.mu.Lock()
		busy := s.pending || s.running
		s.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *scrubber) stop() {
	s.mu.Lock()
	quit, exited := s.quit, s.exited
	s.mu.Unlock()
	if quit != nil {
		close(quit)
		<-exited
	}
}

// scrubLoop runs rewrites while they are asked for, until Close. A
// rewrite the interval defers, or another server's rewrite holds off,
// stays asked for and is tried again when it may run.
func (db *DB) scrubLoop() {
	s := &db.scrub
	defer close(s.exited)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-s.quit; cancel() }()
	for {
		select {
		case <-s.wake:
		case <-s.quit:
			return
		}
		for {
			s.mu.Lock()
			if !s.pending {
				s.mu.Unlock()
				break
			}
			s.pending, s.running = false, true
			s.mu.Unlock()
			wait, err := db.rewrite(ctx, false)
			if err != nil && ctx.Err() == nil {
				db.log.Warn("postgres: scrubbing deleted rows failed; trying again later", "err", err)
				wait = s.interval // the attempt counted (see rewrite)
			}
			s.mu.Lock()
			s.running = false
			if wait > 0 {
				s.pending = true
			}
			s.mu.Unlock()
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-s.quit:
					return
				}
			}
		}
	}
}

// ScrubNow rewrites the tables that hold text now, whatever the interval
// (for a maintenance window: engram scrub), after any rewrite another
// server has under way. It fails with the context's or the store's error,
// EUNAVAILABLE after Close.
func (db *DB) ScrubNow(ctx context.Context) error {
	if db.closed.Load() {
		return errClosed()
	}
	_, err := db.rewrite(ctx, true)
	return err
}

// rewrite runs the VACUUMs on a connection of its own, without the
// statement timeout (a rewrite may take longer) and with a lock timeout,
// holding the store's advisory lock. Unless forced it runs only when the
// store's last rewrite, by any server, began an interval ago or more, and
// otherwise returns how long to wait; it returns a short wait, too, when
// another server holds the lock. A forced rewrite waits for the lock.
func (db *DB) rewrite(ctx context.Context, force bool) (time.Duration, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return 0, db.mapErr(ctx, "scrub", err)
	}
	defer conn.Release()
	wait, err := db.rewriteOn(ctx, conn.Conn(), force)
	if err != nil {
		// Never hand a connection with these settings, or the lock, back
		// to the pool.
		conn.Conn().Close(context.WithoutCancel(ctx))
		return 0, db.mapErr(ctx, "scrub", err)
	}
	return wait, nil
}

// rewriteLock is the store's advisory lock, as arguments of the lock
// functions.
var rewriteLock = "(" + strconv.Itoa(scrubLock) + ", hashtext(current_schema()))"

// rewriteOn is rewrite on conn, whose settings and lock are left as they
// were found unless it fails.
func (db *DB) rewriteOn(ctx context.Context, conn *pgx.Conn, force bool) (time.Duration, error) {
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return 0, err
	}
	if got, err := takeRewriteLock(ctx, conn, force); err != nil || !got {
		_, err2 := conn.Exec(ctx, "RESET statement_timeout")
		return min(db.scrub.interval, scrubRetry), cmp.Or(err, err2)
	}
	start, left, err := lastRewrite(ctx, conn, db.scrub.interval)
	if err != nil {
		return 0, err
	}
	if !force && left > 0 {
		_, err := conn.Exec(ctx, "SELECT pg_advisory_unlock"+rewriteLock+"; RESET statement_timeout")
		return left, err
	}
	// An attempt counts, complete or not: whatever happens, the store sees
	// at most one rewrite per interval.
	if _, err := conn.Exec(ctx, "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
		scrubStarted, start.UTC().Format(time.RFC3339Nano)); err != nil {
		return 0, err
	}
	db.scrub.mu.Lock()
	db.scrub.started = time.Now()
	db.scrub.mu.Unlock()
	began := time.Now()
	for _, q := range []string{
		"SET lock_timeout = '" + strconv.FormatInt(scrubLockTimeout.Milliseconds(), 10) + "ms'",
		"VACUUM FULL " + scrubFull,
		"VACUUM " + scrubPlain,
		"RESET lock_timeout",
		"SELECT pg_advisory_unlock" + rewriteLock,
		"RESET statement_timeout",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, err
		}
	}
	db.log.Info("postgres: rewrote the tables that hold text, to clear deleted rows", "took", time.Since(began).Round(time.Millisecond))
	return 0, nil
}

// takeRewriteLock takes the store's advisory lock on conn: waiting for it
// when wait is set, else only if it is free, reporting whether it did.
func takeRewriteLock(ctx context.Context, conn *pgx.Conn, wait bool) (bool, error) {
	if wait {
		_, err := conn.Exec(ctx, "SELECT pg_advisory_lock"+rewriteLock)
		return err == nil, err
	}
	var got bool
	err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock"+rewriteLock).Scan(&got)
	return got, err
}

// lastRewrite returns the database's time now and how long is left of the
// interval since the store's last rewrite began (zero or less when it has
// passed, or when there was none).
func lastRewrite(ctx context.Context, conn *pgx.Conn, interval time.Duration) (time.Time, time.Duration, error) {
	var now time.Time
	var left float64
	err := conn.QueryRow(ctx, `SELECT now(), COALESCE((SELECT EXTRACT(EPOCH FROM value::timestamptz + make_interval(secs => $2) - now())
		FROM meta WHERE key = $1), 0)::float8`, scrubStarted, interval.Seconds()).Scan(&now, &left)
	return now, time.Duration(left * float64(time.Second)), err
}

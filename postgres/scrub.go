package postgres

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/engramhq/engram"
)

// DefaultScrubInterval is the default Options.ScrubInterval. A rewrite
// costs time in proportion to the whole store (about 3.5 s at 40,000
// memories), with every tenant's reads of a table waiting while it is
// copied, so it runs rarely.
const DefaultScrubInterval = time.Hour

// scrubLockTimeout is how long a rewrite waits for a table's lock.
const scrubLockTimeout = 2 * time.Second

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
	last    time.Time     // when the last rewrite ended
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
// Options.ScrubInterval, and gives up (to try again later) rather than
// wait more than scrubLockTimeout for a lock, which would queue every
// reader behind it. A negative interval turns the rewrites off. The
// write-ahead log keeps the old rows until the server recycles its
// segments. Scrub fails only after Close.
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

// scrubLoop runs rewrites while they are asked for, until Close.
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
		s.mu.Lock()
		wait := s.interval - time.Since(s.last)
		s.mu.Unlock()
		if wait > 0 {
			select {
			case <-time.After(wait):
			case <-s.quit:
				return
			}
		}
		s.mu.Lock()
		s.pending, s.running = false, true
		s.mu.Unlock()
		err := db.rewrite(ctx)
		s.mu.Lock()
		s.running, s.last = false, time.Now()
		if err != nil && ctx.Err() == nil {
			db.log.Warn("postgres: scrubbing deleted rows failed; trying again later", "err", err)
			s.pending = true
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
	}
}

// rewrite runs the VACUUMs on a connection of its own, without the
// statement timeout (a rewrite may take longer) and with a lock timeout.
func (db *DB) rewrite(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.mapErr(ctx, "scrub", err)
	}
	defer conn.Release()
	for _, q := range []string{
		"SET statement_timeout = 0",
		"SET lock_timeout = '" + strconv.FormatInt(scrubLockTimeout.Milliseconds(), 10) + "ms'",
		"VACUUM FULL " + scrubFull,
		"VACUUM " + scrubPlain,
		"RESET lock_timeout",
		"RESET statement_timeout",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			// Never hand a connection with these settings back to the pool.
			conn.Conn().Close(context.WithoutCancel(ctx))
			return db.mapErr(ctx, "scrub", err)
		}
	}
	return nil
}

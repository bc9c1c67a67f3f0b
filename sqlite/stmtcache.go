package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// maxCachedParams is the most placeholders a cached query has: a query
// with a placeholder per item of a list is rarely seen twice.
const maxCachedParams = 32

// maxCachedStmts bounds the statements a stmtCache keeps: queries built
// per call come in a few shapes, and a caller that builds many distinct
// ones gets the uncached path past this many.
const maxCachedStmts = 256

// stmtCache keeps the queries built per call (those with optional filters)
// prepared on a pool, the first time they are seen, so that later calls
// skip SQLite's parsing and planning, which for a search's list of
// memories cost more than running it. A miss is prepared in the
// background: preparing on the pool can wait for one of its connections,
// and the caller may hold the last one in its transaction.
type stmtCache struct {
	pool    *sql.DB
	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool
	closed  bool
	// preparing counts the prepares under way, which close waits for: a
	// prepare still holding a connection of a closed pool could keep the
	// database file locked after Close returned.
	preparing sync.WaitGroup
}

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// get returns the prepared statement for q, or nil after starting to
// prepare it (or when the cache is full or closed).
func (c *stmtCache) get(q string) *sql.Stmt {
	if c == nil || strings.Count(q, "?") > maxCachedParams {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[q]; ok {
		return s
	}
	if c.closed || c.pending[q] || len(c.stmts)+len(c.pending) >= maxCachedStmts {
		return nil
	}
	c.pending[q] = true
	c.preparing.Add(1)
	go c.prepare(q)
	return nil
}

// prepare prepares q on the pool and keeps it; a query that fails to
// prepare stays pending, so it is not tried again (its callers get the
// error from the uncached path).
func (c *stmtCache) prepare(q string) {
	defer c.preparing.Done()
	s, err := c.pool.PrepareContext(context.Background(), q)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		return
	}
	if c.closed {
		s.Close()
		return
	}
	delete(c.pending, q)
	c.stmts[q] = s
}

// close waits for the prepares under way and closes the statements
// kept; later gets return nil.
func (c *stmtCache) close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.preparing.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for _, s := range c.stmts {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	clear(c.stmts)
	return first
}

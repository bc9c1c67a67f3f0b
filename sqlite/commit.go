package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
)

// maxBatch is the most updates one transaction commits together: enough
// that one sync covers the writes a busy server queues while the previous
// sync runs, few enough that one batch holds the write lock briefly.
const maxBatch = 64

// Request states: an update waits in the queue, then either the writer
// takes it or its context ends first and it is abandoned.
const (
	reqQueued int32 = iota
	reqTaken
	reqAbandoned
)

// writeReq is one Update waiting for the writer.
type writeReq struct {
	ctx   context.Context
	fn    func(*tx) error
	state atomic.Int32
	done  chan writeResult // buffered: the writer never waits for the caller
}

// writeResult is what the writer reports for one request: its error, or
// the value fn panicked with.
type writeResult struct {
	err      error
	panicked bool
	panicVal any
}

// committer is the single writer: it takes queued updates, runs up to
// maxBatch of them in one BEGIN IMMEDIATE transaction, each inside its own
// savepoint, and commits once (group commit). A request whose fn fails or
// panics rolls back to its savepoint, so only its own writes are undone;
// every request learns its outcome only after the COMMIT that holds its
// writes returned, that is, once they are on disk. It returns when quit
// closes, after failing the requests still queued.
func (db *DB) committer() {
	defer close(db.stopped)
	for {
		var first *writeReq
		select {
		case first = <-db.queue:
		case <-db.quit:
			return
		}
		batch := []*writeReq{first}
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-db.queue:
				batch = append(batch, r)
			default:
				break more
			}
		}
		db.commitBatch(batch)
	}
}

// commitBatch runs the requests of batch that are still wanted in one
// transaction and answers every one of them.
func (db *DB) commitBatch(batch []*writeReq) {
	live := batch[:0]
	for _, r := range batch {
		if r.state.CompareAndSwap(reqQueued, reqTaken) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	results := make([]writeResult, len(live))
	// The transaction outlives each request's context: one caller giving up
	// must not roll back the others (see tx.detached).
	bg := context.Background()
	stx, err := db.write.BeginTx(bg, nil)
	if err != nil {
		for _, r := range live {
			r.done <- writeResult{err: mapErr(r.ctx, "begin", err)}
		}
		return
	}
	t := newTx(&base{stx: stx, stmts: db.wstmts, cache: db.wcache, detached: true})
	committed := 0 // requests whose writes the transaction holds
	for i, r := range live {
		var broken error
		results[i], broken = runInSavepoint(t, r)
		if broken != nil {
			// The transaction is gone: nothing of the batch is written.
			_ = stx.Rollback()
			for j, r := range live {
				if j <= i && results[j].err == nil && !results[j].panicked {
					results[j] = writeResult{err: mapErr(r.ctx, "commit", broken)}
				} else if j > i {
					results[j] = writeResult{err: mapErr(r.ctx, "begin", broken)}
				}
				r.done <- results[j]
			}
			return
		}
		if results[i].err == nil && !results[i].panicked {
			committed++
		}
	}
	if err := stx.Commit(); err != nil {
		for i, r := range live {
			if results[i].err == nil && !results[i].panicked {
				results[i] = writeResult{err: mapErr(r.ctx, "commit", err)}
			}
		}
	}
	db.batches.Add(1)
	db.batched.Add(int64(committed))
	for i, r := range live {
		r.done <- results[i]
	}
}

// runInSavepoint runs r.fn inside a savepoint of t and releases it, or
// rolls back to it when fn fails, panics or r's context ended. broken is
// not nil when the savepoint statements themselves failed, which means the
// whole transaction is lost (SQLite rolls back a transaction on some I/O
// and memory errors).
func runInSavepoint(t *tx, r *writeReq) (res writeResult, broken error) {
	bg := context.Background()
	if err := r.ctx.Err(); err != nil {
		return writeResult{err: mapErr(r.ctx, "begin", err)}, nil
	}
	if _, err := t.stx.ExecContext(bg, "SAVEPOINT engram_update"); err != nil {
		return writeResult{}, fmt.Errorf("savepoint: %w", err)
	}
	res = callFn(t, r)
	if res.err == nil && !res.panicked && r.ctx.Err() != nil {
		// The caller gave up: as before group commit, its writes are not kept.
		res.err = mapErr(r.ctx, "commit", r.ctx.Err())
	}
	if res.err != nil || res.panicked {
		if _, err := t.stx.ExecContext(bg, "ROLLBACK TO engram_update"); err != nil {
			return res, fmt.Errorf("roll back to savepoint: %w", err)
		}
	}
	if _, err := t.stx.ExecContext(bg, "RELEASE engram_update"); err != nil {
		return res, fmt.Errorf("release savepoint: %w", err)
	}
	return res, nil
}

// callFn calls r.fn on t, turning a panic into a result the caller's
// goroutine re-raises.
func callFn(t *tx, r *writeReq) (res writeResult) {
	defer func() {
		if v := recover(); v != nil {
			res = writeResult{panicked: true, panicVal: v}
		}
	}()
	return writeResult{err: r.fn(t)}
}

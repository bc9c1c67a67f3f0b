package engine

import (
	"context"
	"sync"
	"time"

	"github.com/engramhq/engram"
)

// ActorSweeper is the actor of the versions the TTL sweeper writes.
const ActorSweeper = "sweeper"

// DefaultSweepBatch is how many memories one sweep transaction marks at
// most when Sweep is given no batch size.
const DefaultSweepBatch = 500

// Sweep marks expired every active memory, of any tenant, whose expires_at
// has passed at the engine's clock: status expired, expired_at its
// expires_at, a new version (op UPDATE, actor ActorSweeper, the reason
// naming the TTL) and an audit entry. Reads already treat such memories as
// expired (see engram.Memory.Lapse); the sweep makes it part of their
// history. It works in transactions of at most batch memories (batch < 1
// means DefaultSweepBatch), so it never holds the write lock long, and
// returns how many it marked. It fails with EINVALID if the store cannot
// find lapsed memories (engram.Expirer), or with the store's error; the
// batches committed before an error stay marked.
func (e *admin) Sweep(ctx context.Context, batch int) (int, error) {
	if batch < 1 {
		batch = DefaultSweepBatch
	}
	total := 0
	for {
		n, err := e.sweepBatch(ctx, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// sweepBatch marks up to batch lapsed memories in one transaction.
func (e *admin) sweepBatch(ctx context.Context, batch int) (int, error) {
	now := e.clock()
	n := 0
	vb := e.vec.Batch()
	err := e.store.Update(ctx, func(tx engram.Tx) error {
		n = 0
		ms, err := tx.Lapsed(ctx, now, batch)
		if err != nil {
			return err
		}
		for i := range ms {
			if err := e.expire(ctx, tx, vb, &ms[i], now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err := vb.Done(err); err != nil {
		return 0, err
	}
	return n, nil
}

// expire writes the version that marks a lapsed memory expired.
func (e *admin) expire(ctx context.Context, tx engram.Tx, vb *vecBatch, old *engram.Memory, now time.Time) error {
	m := clone(old)
	m.Lapse(now)
	m.Version = old.Version + 1
	m.UpdatedAt = now
	reason := "expired: its TTL passed at " + old.ExpiresAt.UTC().Format(time.RFC3339)
	return e.writeVersion(ctx, tx, vb, old, m, engram.OpUpdate, ActorSweeper, reason, now)
}

// sweeper runs Sweep every interval until stopped.
type sweeper struct {
	stopc chan struct{}
	done  chan struct{}
	once  sync.Once
}

// StartSweeper runs SweepUploads and Sweep with batches of batch memories
// every interval in the background until Close; errors are logged, and the next run tries
// again. An interval below or at zero starts nothing; a second call is a
// no-op.
func (e *admin) StartSweeper(every time.Duration, batch int) {
	e.startTicking(&e.sweeper, every, func(ctx context.Context) {
		if u, err := e.media.SweepUploads(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("sweep abandoned uploads", "err", err)
		} else if u > 0 {
			e.log.Info("removed abandoned uploads", "uploads", u)
		}
		n, err := e.Sweep(ctx, batch)
		switch {
		case err != nil && ctx.Err() == nil:
			e.log.Warn("sweep expired memories", "marked", n, "err", err)
		case n > 0:
			e.log.Info("swept expired memories", "marked", n)
		}
	})
}

// startTicking starts the background loop of *slot, unless one was
// started: run every interval, with a context cancelled when the engine
// closes (stopTicking). An interval at or below zero starts nothing.
func (e *core) startTicking(slot **sweeper, every time.Duration, run func(ctx context.Context)) {
	if every <= 0 {
		return
	}
	e.sweepMu.Lock()
	defer e.sweepMu.Unlock()
	if *slot != nil {
		return
	}
	sw := &sweeper{stopc: make(chan struct{}), done: make(chan struct{})}
	*slot = sw
	go func() {
		defer close(sw.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-sw.stopc:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-sw.stopc:
					cancel()
				case <-ctx.Done():
				}
			}()
			run(ctx)
			cancel()
		}
	}()
}

// stopTicking stops the loop of *slot, if one runs, and waits for it.
func (e *core) stopTicking(slot **sweeper) {
	e.sweepMu.Lock()
	sw := *slot
	e.sweepMu.Unlock()
	if sw == nil {
		return
	}
	sw.once.Do(func() { close(sw.stopc) })
	<-sw.done
}

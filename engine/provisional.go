package engine

import (
	"context"
	"time"

	"github.com/engramhq/engram"
)

// Provisional memories. An asynchronous add waits for its job to form
// memories with the engine's former, which may be a slow or unreachable
// model; with Options.Provisional a stand-in former (the rules) forms the
// episodes at once, as a synchronous add would but within the batch alone,
// so that search finds them meanwhile. The job retires them when it
// applies the engine's former's memories of the same episodes.

// formedBefore reports whether a memory that is not provisional cites one
// of eps (an earlier run of the job applied its memories), in any status.
func formedBefore(ctx context.Context, r engram.Reader, s engram.Scope, eps []string) (bool, error) {
	f := engram.MemoryFilter{Sources: eps, Limit: engram.MaxLimit, Statuses: []engram.Status{
		engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}}
	for {
		ms, next, err := r.ListMemories(ctx, s, f)
		if err != nil {
			return false, err
		}
		for i := range ms {
			if !ms[i].Provisional() {
				return true, nil
			}
		}
		if next == "" {
			return false, nil
		}
		f.Cursor = next
	}
}

// retireProvisional soft-deletes, in tx, the active provisional memories
// that cite eps and were not changed since they were formed (version 1):
// the job's former has formed those episodes. One that was edited stays.
func (e *ingest) retireProvisional(ctx context.Context, tx engram.Tx, vb *vecBatch, s engram.Scope, eps []string, by string, now time.Time) error {
	var ms []engram.Memory
	f := engram.MemoryFilter{Sources: eps, Limit: engram.MaxLimit, Metadata: map[string]any{engram.MetaProvisional: true}}
	for {
		page, next, err := tx.ListMemories(ctx, s, f)
		if err != nil {
			return err
		}
		ms = append(ms, page...)
		if next == "" {
			break
		}
		f.Cursor = next
	}
	for i := range ms {
		if ms[i].Version != 1 || !ms[i].Provisional() {
			continue
		}
		if _, err := e.softDelete(ctx, tx, vb, s, ms[i].ID, "provisional: "+by+" formed its episodes", by, now); err != nil {
			return err
		}
	}
	return nil
}

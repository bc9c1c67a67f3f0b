package engine

import (
	"context"

	"github.com/engramhq/engram"
)

// JobBacklog returns the unfinished background jobs of every tenant by
// kind and state, with when the oldest of each was enqueued, in one read
// of the store, for an operator's metrics (never a client: it crosses
// tenants). It fails with the store's error.
func (e *ingest) JobBacklog(ctx context.Context) ([]engram.JobBacklog, error) {
	var out []engram.JobBacklog
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		out, err = r.JobBacklog(ctx)
		return err
	})
	return out, err
}

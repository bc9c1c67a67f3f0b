package engram

import (
	"context"
	"time"
)

// JobBacklog counts the unfinished jobs of one kind in one state (queued,
// retrying or running) across every tenant, and says when the oldest of
// them was enqueued.
type JobBacklog struct {
	Kind   JobKind
	State  JobState
	Count  int
	Oldest time.Time
}

// JobBacklogReader is the capability of a Reader to count the unfinished
// jobs of its store's queue by kind and state. It reads every tenant's
// jobs and serves an operator's metrics, never a client.
type JobBacklogReader interface {
	JobBacklog(ctx context.Context) ([]JobBacklog, error)
}

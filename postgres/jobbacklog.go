package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

var _ engram.JobBacklogReader = (*jobTx)(nil)

// jobBacklogSQL reads only unfinished jobs.
const jobBacklogSQL = `SELECT j.kind, j.state, COUNT(*), MIN(j.created_at) FROM jobs j
WHERE j.state IN ('queued', 'retrying', 'running') GROUP BY j.kind, j.state ORDER BY j.kind, j.state`

// JobBacklog implements engram.JobBacklogReader.
func (t *jobTx) JobBacklog(ctx context.Context) ([]engram.JobBacklog, error) {
	return collect(ctx, t.base, "job backlog", jobBacklogSQL, nil, func(row pgx.Row) (engram.JobBacklog, error) {
		var b engram.JobBacklog
		var kind, state string
		err := row.Scan(&kind, &state, &b.Count, &b.Oldest)
		b.Kind, b.State, b.Oldest = engram.JobKind(kind), engram.JobState(state), b.Oldest.UTC()
		return b, err
	})
}

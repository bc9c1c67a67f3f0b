package sqlite

import (
	"context"

	"github.com/engramhq/engram"
)

var _ engram.JobBacklogReader = (*jobTx)(nil)

// jobBacklogSQL reads only unfinished jobs, which the partial index
// jobs_open holds, so finished jobs cost it nothing.
const jobBacklogSQL = `SELECT j.kind, j.state, COUNT(*), MIN(j.created_at) FROM jobs j
WHERE ` + openJob + ` GROUP BY j.kind, j.state ORDER BY j.kind, j.state`

// JobBacklog implements engram.JobBacklogReader.
func (t *jobTx) JobBacklog(ctx context.Context) ([]engram.JobBacklog, error) {
	return collect(ctx, t.base, "job backlog", jobBacklogSQL, nil, func(sc scanner) (engram.JobBacklog, error) {
		var b engram.JobBacklog
		var oldest int64
		err := sc.Scan(&b.Kind, &b.State, &b.Count, &oldest)
		b.Oldest = fromMicros(oldest)
		return b, err
	})
}

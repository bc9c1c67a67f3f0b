package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// jobTx is the background job queue of a transaction (engram.JobReader
// and JobQueue).
type jobTx struct{ *base }

const jobCols = `j.id, j.org, j.project, j.user_id, j.agent, j.session, j.kind, j.episodes, j.memories, j.ops, j.state, j.attempts,
	j.last_error, j.lease_owner, j.lease_until, j.run_after, j.created_at, j.updated_at`

// claimJobSQL locks the oldest runnable job whose namespace has no older
// open job, skipping jobs other workers hold locked, and makes it running
// under the caller's lease. Under READ COMMITTED the older-job test sees
// an older job another worker is claiming at that moment as still queued,
// so two jobs of one namespace are never claimed at once.
const claimJobSQL = `WITH c AS (
	SELECT j.tenant, j.id FROM jobs j
	WHERE j.state IN ('queued', 'retrying', 'running')
	AND ((j.state IN ('queued', 'retrying') AND j.run_after <= $3) OR (j.state = 'running' AND j.lease_until <= $3))
	AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.tenant = j.tenant AND p.user_id = j.user_id
		AND p.agent = j.agent AND p.session = j.session AND p.state IN ('queued', 'retrying', 'running') AND p.seq < j.seq)
	AND NOT (j.tenant = ANY($4))
	ORDER BY j.seq LIMIT 1
	FOR UPDATE OF j SKIP LOCKED)
UPDATE jobs j SET state = 'running', attempts = j.attempts + 1, lease_owner = $1, lease_until = $2, updated_at = $3
FROM c WHERE j.tenant = c.tenant AND j.id = c.id
RETURNING ` + jobCols

func scanJob(row pgx.Row) (engram.Job, error) {
	var (
		j           engram.Job
		kind, state string
		ops         []byte
	)
	n := &j.Namespace
	if err := row.Scan(&j.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &kind, &j.Episodes, &j.Memories, &ops, &state, &j.Attempts,
		&j.LastError, &j.LeaseOwner, &j.LeaseUntil, &j.RunAfter, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return j, err
	}
	j.Kind, j.State = engram.JobKind(kind), engram.JobState(state)
	if len(j.Episodes) == 0 {
		j.Episodes = nil
	}
	if len(j.Memories) == 0 {
		j.Memories = nil
	}
	j.LeaseUntil = utcPtr(j.LeaseUntil)
	j.RunAfter, j.CreatedAt, j.UpdatedAt = utc(j.RunAfter), utc(j.CreatedAt), utc(j.UpdatedAt)
	var err error
	j.Ops, err = storeutil.DecodeOps(ops)
	return j, err
}

// GetJob returns the job with id in s; ENOTFOUND if there is none in s,
// EINVALID for a bad scope.
func (t *jobTx) GetJob(ctx context.Context, s engram.Scope, id string) (*engram.Job, error) {
	q := &query{}
	q.scope("j.", s)
	q.where("j.id = " + q.arg(id))
	j, err := scanJob(t.ptx.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs j WHERE `+q.String(), q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "job %s not found", id)
	} else if err != nil {
		return nil, t.mapErr(ctx, "get job", err)
	}
	return &j, nil
}

// ListJobs returns the jobs of s newest first and the next page's cursor;
// EINVALID for a bad scope, filter or cursor.
func (t *jobTx) ListJobs(ctx context.Context, s engram.Scope, f engram.JobFilter) ([]engram.Job, string, error) {
	limit, _ := engram.ClampLimit(f.Limit)
	q := &query{}
	q.scope("j.", s)
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		q.where("j.state = ANY(" + q.arg(states) + ")")
	}
	if f.Cursor != "" {
		id, err := storeutil.JobAfter(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		q.where("j.id < " + q.arg(id))
	}
	sql := `SELECT ` + jobCols + ` FROM jobs j WHERE ` + q.String() + ` ORDER BY j.id DESC LIMIT ` + q.arg(limit+1)
	out, err := collect(ctx, t.base, "list jobs", sql, q.args, scanJob)
	return storeutil.JobPage(out, limit, err)
}

// EnqueueJob stores a new queued job; EINVALID for a malformed one,
// ECONFLICT if its id exists in its tenant.
func (t *jobTx) EnqueueJob(ctx context.Context, j *engram.Job) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := j.Namespace
	// ON CONFLICT DO NOTHING: a duplicate is reported without an error from
	// the server, which would abort the whole transaction.
	ops, err := storeutil.EncodeOps(j.Ops)
	if err != nil {
		return err
	}
	tag, err := t.ptx.Exec(ctx, `INSERT INTO jobs (tenant, org, project, user_id, agent, session, id, kind, episodes, memories, ops,
		state, attempts, last_error, lease_owner, lease_until, run_after, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, j.ID, string(j.Kind), storeutil.NonNil(j.Episodes), storeutil.NonNil(j.Memories), string(ops),
		string(j.State), j.Attempts, j.LastError, j.LeaseOwner, j.LeaseUntil, j.RunAfter, j.CreatedAt, j.UpdatedAt)
	if err != nil {
		return t.mapErr(ctx, "enqueue job", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "job %s already exists", j.ID)
	}
	return nil
}

// ClaimJob takes the oldest job that may run at now for owner, outside the
// tenants in skip, or returns nil when there is none.
func (t *jobTx) ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration, skip ...string) (*engram.Job, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	if owner == "" || lease <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "a claim needs an owner and a positive lease")
	}
	if err := storable("lease owner", owner); err != nil {
		return nil, err
	}
	for _, s := range skip {
		if err := storable("tenant", s); err != nil {
			return nil, err
		}
	}
	j, err := scanJob(t.ptx.QueryRow(ctx, claimJobSQL, owner, now.Add(lease), now, append([]string{}, skip...)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, t.mapErr(ctx, "claim job", err)
	}
	return &j, nil
}

// CompleteJob marks the job done; ECONFLICT unless owner holds it.
func (t *jobTx) CompleteJob(ctx context.Context, tenant engram.Namespace, id, owner string, now time.Time) error {
	return t.settleJob(ctx, tenant, id, owner, storeutil.SettleDone(), now)
}

// FailJob makes the job retrying at retryAt, or failed when retryAt is
// nil, with reason as its last error; ECONFLICT unless owner holds it.
func (t *jobTx) FailJob(ctx context.Context, tenant engram.Namespace, id, owner, reason string, retryAt *time.Time, now time.Time) error {
	return t.settleJob(ctx, tenant, id, owner, storeutil.SettleFailed(validText(reason), retryAt), now)
}

// DeferJob makes the job retrying at runAt with reason as its last error
// and gives its attempt back; ECONFLICT unless owner holds it.
func (t *jobTx) DeferJob(ctx context.Context, tenant engram.Namespace, id, owner, reason string, runAt, now time.Time) error {
	return t.settleJob(ctx, tenant, id, owner, storeutil.SettleDeferred(validText(reason), runAt), now)
}

// settleJob ends owner's hold of a running job as st says.
func (t *jobTx) settleJob(ctx context.Context, tenant engram.Namespace, id, owner string, st storeutil.Settle, now time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	if storable("job id", id) != nil || storable("lease owner", owner) != nil {
		return engram.Errorf(engram.ENOTFOUND, "job %s not found", shortID(id))
	}
	tag, err := t.ptx.Exec(ctx, `UPDATE jobs SET state = $1, last_error = coalesce($2, last_error),
		run_after = coalesce($3, run_after), attempts = greatest(attempts - $4, 0), lease_owner = '', lease_until = NULL, updated_at = $5
		WHERE tenant = $6 AND id = $7 AND state = 'running' AND lease_owner = $8`,
		string(st.State), st.Reason, st.RunAt, st.GivenBack(), now, tenant.Tenant(), id, owner)
	if err != nil {
		return t.mapErr(ctx, "settle job", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "job %s is not running under this worker's lease", shortID(id))
	}
	return nil
}

// validText makes an error message storable: invalid UTF-8 and NUL bytes,
// which a former's error may carry, become U+FFFD.
func validText(s string) string {
	b := []rune{}
	for _, r := range s {
		if r == 0 {
			r = '\uFFFD'
		}
		b = append(b, r)
	}
	return string(b)
}

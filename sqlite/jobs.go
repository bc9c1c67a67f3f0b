package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

const jobCols = `j.id, j.org, j.project, j.user_id, j.agent, j.session, j.kind, j.episodes, j.memories, j.ops, j.state, j.attempts,
	j.last_error, j.lease_owner, j.lease_until, j.run_after, j.created_at, j.updated_at`

// open is the condition of a job that is not finished.
const openJob = `j.state IN ('queued', 'retrying', 'running')`

// claimJobSQL takes, in one statement (so no other writer can come in
// between), the oldest runnable job whose namespace has no older open job.
// The single write connection serialises claims anyway; one statement keeps
// that true should it ever not.
var claimJobSQL = `UPDATE jobs SET state = 'running', attempts = attempts + 1,
	lease_owner = ?, lease_until = ?, updated_at = ?
WHERE seq = (
	SELECT j.seq FROM jobs j
	WHERE ` + openJob + ` AND ((j.state IN ('queued', 'retrying') AND j.run_after <= ?) OR (j.state = 'running' AND j.lease_until <= ?))
	AND NOT EXISTS (SELECT 1 FROM jobs p WHERE p.org = j.org AND p.project = j.project AND p.user_id = j.user_id
		AND p.agent = j.agent AND p.session = j.session AND p.state IN ('queued', 'retrying', 'running') AND p.seq < j.seq)
	%s
	ORDER BY j.seq LIMIT 1)
RETURNING ` + jobReturning

var jobReturning = strings.ReplaceAll(jobCols, "j.", "")

func scanJob(sc scanner) (engram.Job, error) {
	var (
		j                 engram.Job
		kind, state       string
		eps, mems, ops    string
		lease             sql.NullInt64
		run, created, upd int64
	)
	n := &j.Namespace
	if err := sc.Scan(&j.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &kind, &eps, &mems, &ops, &state, &j.Attempts,
		&j.LastError, &j.LeaseOwner, &lease, &run, &created, &upd); err != nil {
		return j, err
	}
	j.Kind, j.State = engram.JobKind(kind), engram.JobState(state)
	j.LeaseUntil = timePtr(lease)
	j.RunAfter, j.CreatedAt, j.UpdatedAt = fromMicros(run), fromMicros(created), fromMicros(upd)
	var err error
	if j.Episodes, err = storeutil.DecodeStrings([]byte(eps)); err != nil {
		return j, err
	}
	if j.Memories, err = storeutil.DecodeStrings([]byte(mems)); err != nil {
		return j, err
	}
	j.Ops, err = storeutil.DecodeOps([]byte(ops))
	return j, err
}

// GetJob returns the job with id in s; ENOTFOUND if there is none in s,
// EINVALID for a bad scope.
func (t *jobTx) GetJob(ctx context.Context, s engram.Scope, id string) (*engram.Job, error) {
	w, args := scopeWhere("j.", s)
	j, err := scanJob(t.queryRow(ctx, `SELECT `+jobCols+` FROM jobs j WHERE `+w+` AND j.id = ?`, append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "job %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get job", err)
	}
	return &j, nil
}

// ListJobs returns the jobs of s newest first and the next page's cursor;
// EINVALID for a bad scope, filter or cursor.
func (t *jobTx) ListJobs(ctx context.Context, s engram.Scope, f engram.JobFilter) ([]engram.Job, string, error) {
	limit, _ := engram.ClampLimit(f.Limit)
	var w where
	w.addScope("j.", s)
	if len(f.States) > 0 {
		states := make([]any, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		w.add("j.state IN ("+placeholders(len(states))+")", states...)
	}
	if f.Cursor != "" {
		id, err := storeutil.JobAfter(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("j.id < ?", id)
	}
	out, err := collect(ctx, t.base, "list jobs", `SELECT `+jobCols+` FROM jobs j WHERE `+w.String()+` ORDER BY j.id DESC LIMIT ?`, append(w.args, limit+1), scanJob)
	return storeutil.JobPage(out, limit, err)
}

// EnqueueJob stores a new queued job; EINVALID for a malformed one,
// ECONFLICT if its id exists in its tenant.
func (t *jobTx) EnqueueJob(ctx context.Context, j *engram.Job) error {
	if err := t.writable(); err != nil {
		return err
	}
	eps, err := json.Marshal(storeutil.NonNil(j.Episodes))
	if err != nil {
		return err
	}
	mems, err := json.Marshal(storeutil.NonNil(j.Memories))
	if err != nil {
		return err
	}
	ops, err := storeutil.EncodeOps(j.Ops)
	if err != nil {
		return err
	}
	n := j.Namespace
	_, err = t.exec(ctx, `INSERT INTO jobs (id, org, project, user_id, agent, session, kind, episodes, memories, ops, state, attempts,
		last_error, lease_owner, lease_until, run_after, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, n.Org, n.Project, n.User, n.Agent, n.Session, string(j.Kind), string(eps), string(mems), string(ops), string(j.State), j.Attempts,
		j.LastError, j.LeaseOwner, microsPtr(j.LeaseUntil), micros(j.RunAfter), micros(j.CreatedAt), micros(j.UpdatedAt))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "job %s already exists", j.ID)
	}
	return mapErr(ctx, "enqueue job", err)
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
	at := micros(now)
	args, skipSQL := []any{owner, micros(now.Add(lease)), at, at, at}, ""
	if len(skip) > 0 {
		skipSQL = "AND j.org || '/' || j.project NOT IN (" + placeholders(len(skip)) + ")"
		for _, s := range skip {
			args = append(args, s)
		}
	}
	j, err := scanJob(t.queryRow(ctx, fmt.Sprintf(claimJobSQL, skipSQL), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, mapErr(ctx, "claim job", err)
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
	return t.settleJob(ctx, tenant, id, owner, storeutil.SettleFailed(reason, retryAt), now)
}

// DeferJob makes the job retrying at runAt with reason as its last error
// and gives its attempt back; ECONFLICT unless owner holds it.
func (t *jobTx) DeferJob(ctx context.Context, tenant engram.Namespace, id, owner, reason string, runAt, now time.Time) error {
	return t.settleJob(ctx, tenant, id, owner, storeutil.SettleDeferred(reason, runAt), now)
}

// settleJob ends owner's hold of a running job as st says.
func (t *jobTx) settleJob(ctx context.Context, tenant engram.Namespace, id, owner string, st storeutil.Settle, now time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	res, err := t.exec(ctx, `UPDATE jobs SET state = ?, last_error = coalesce(?, last_error),
		run_after = coalesce(?, run_after), attempts = max(attempts - ?, 0), lease_owner = '', lease_until = NULL, updated_at = ?
		WHERE org = ? AND project = ? AND id = ? AND state = 'running' AND lease_owner = ?`,
		string(st.State), st.Reason, microsPtr(st.RunAt), st.GivenBack(), micros(now), tenant.Org, tenant.Project, id, owner)
	if err != nil {
		return mapErr(ctx, "settle job", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return mapErr(ctx, "settle job", err)
	} else if n == 0 {
		return engram.Errorf(engram.ECONFLICT, "job %s is not running under this worker's lease", shortID(id))
	}
	return nil
}

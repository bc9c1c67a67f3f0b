package sqlite

import (
	"context"
	"strconv"

	"github.com/engramhq/engram"
)

// Changes are logged per memory write and pruned to the newest keepChanges
// rows, checked every pruneEvery sequence numbers.
const (
	keepChanges = 100_000
	pruneEvery  = 1024
	metaHorizon = "changes.horizon"
)

// logChange records that the memory of n's tenant and user (which must
// still exist) changed. Call it after an insert or replace and before a
// delete.
func (t *base) logChange(ctx context.Context, n engram.Namespace, id string) error {
	res, err := t.exec(ctx, `INSERT INTO memory_changes (org, project, user_id, memory_id)
		SELECT org, project, user_id, id FROM memories WHERE org = ? AND project = ? AND user_id = ? AND id = ?`, n.Org, n.Project, n.User, id)
	if err != nil {
		return mapErr(ctx, "log memory change", err)
	}
	return t.maybePrune(ctx, res)
}

// logScopeChanges records a change for every memory in the scope, before a
// purge of the scope.
func (t *base) logScopeChanges(ctx context.Context, s engram.Scope) error {
	w, args := scopeWhere("m.", s)
	res, err := t.exec(ctx, `INSERT INTO memory_changes (org, project, user_id, memory_id)
		SELECT m.org, m.project, m.user_id, m.id FROM memories m WHERE `+w, args...)
	if err != nil {
		return mapErr(ctx, "log memory changes", err)
	}
	return t.maybePrune(ctx, res)
}

type lastInsertIDer interface{ LastInsertId() (int64, error) }

func (t *base) maybePrune(ctx context.Context, res lastInsertIDer) error {
	seq, err := res.LastInsertId()
	if err != nil || seq%pruneEvery != 0 || seq <= keepChanges {
		return nil
	}
	horizon := seq - keepChanges
	if _, err := t.exec(ctx, `DELETE FROM memory_changes WHERE seq <= ?`, horizon); err != nil {
		return mapErr(ctx, "prune memory changes", err)
	}
	return t.SetMeta(ctx, metaHorizon, strconv.FormatInt(horizon, 10))
}

// Changes implements engram.Reader. The one writer numbers changes in commit
// order, so the current sequence number is simply the largest logged.
func (t *vectorTx) Changes(ctx context.Context, s engram.Scope, after int64) ([]string, int64, error) {
	var last int64
	if err := t.queryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM memory_changes`).Scan(&last); err != nil {
		return nil, 0, mapErr(ctx, "changes", err)
	}
	if after < 0 || after >= last {
		return nil, last, nil
	}
	h, err := t.Meta(ctx, metaHorizon)
	if err != nil {
		return nil, 0, err
	}
	if horizon, _ := strconv.ParseInt(h, 10, 64); after < horizon {
		return nil, 0, engram.Errorf(engram.ECONFLICT, "changes before sequence %d are no longer kept", horizon)
	}
	var ids []string
	seen := map[string]bool{}
	err = t.each(ctx, "changes", `SELECT memory_id FROM memory_changes
		WHERE org = ? AND project = ? AND user_id = ? AND seq > ? AND seq <= ? ORDER BY seq`,
		[]any{s.Org, s.Project, s.User, after, last}, func(sc scanner) error {
			var id string
			if err := sc.Scan(&id); err != nil {
				return err
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
			return nil
		})
	if err != nil {
		return nil, 0, err
	}
	return ids, last, nil
}

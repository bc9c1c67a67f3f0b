package postgres

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/engramhq/engram"
	"github.com/jackc/pgx/v5"
)

// change is one memory of one (tenant, user) partition that a transaction
// inserted, replaced, purged or gave vectors.
type change struct{ tenant, user, id string }

func (t *base) changed(tenant, user, id string) {
	if t.changes == nil {
		t.changes = make(map[change]struct{})
	}
	t.changes[change{tenant, user, id}] = struct{}{}
}

// logChanges runs just before the commit: it takes the next sequence number
// of every partition the transaction changed, in key order (so two
// transactions never wait for each other's counters in opposite orders),
// and logs the changed memories under it. The counter rows stay locked
// until the commit, which is what makes numbers visible in order.
func (t *base) logChanges(ctx context.Context) error {
	if len(t.changes) == 0 {
		return nil
	}
	cs := slices.SortedFunc(maps.Keys(t.changes), func(a, b change) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.user, b.user), cmp.Compare(a.id, b.id))
	})
	tenants, users, ids := make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs))
	for i, c := range cs {
		tenants[i], users[i], ids[i] = c.tenant, c.user, c.id
	}
	rows, err := t.ptx.Query(ctx, `WITH c AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS c(tenant, user_id, memory_id)),
		bumped AS (
			INSERT INTO change_counters AS cc (tenant, user_id, seq)
			SELECT DISTINCT c.tenant, c.user_id, 1 FROM c ORDER BY 1, 2
			ON CONFLICT (tenant, user_id) DO UPDATE SET seq = cc.seq + 1
			RETURNING cc.tenant, cc.user_id, cc.seq),
		logged AS (
			INSERT INTO changes (tenant, user_id, seq, memory_id)
			SELECT c.tenant, c.user_id, b.Seq, c.memory_id FROM c
			JOIN bumped b ON b.tenant = c.tenant AND b.user_id = c.user_id)
		SELECT tenant, user_id, seq FROM bumped`, tenants, users, ids)
	if err != nil {
		return t.mapErr(ctx, "log changes", err)
	}
	type bump struct {
		Tenant, User string
		Seq          int64
	}
	bumps, err := pgx.CollectRows(rows, pgx.RowToStructByPos[bump])
	if err != nil {
		return t.mapErr(ctx, "log changes", err)
	}
	// Forget old numbers now and then rather than at every write.
	keep := t.db.keep
	every := min(max(keep/4, 1), 1024)
	for _, b := range bumps {
		if b.Seq <= keep || b.Seq%every != 0 {
			continue
		}
		through := b.Seq - keep
		if _, err := t.ptx.Exec(ctx, `WITH p AS (
				UPDATE change_counters SET pruned_through = $3
				WHERE tenant = $1 AND user_id = $2 AND pruned_through < $3)
			DELETE FROM changes WHERE tenant = $1 AND user_id = $2 AND seq <= $3`,
			b.Tenant, b.User, through); err != nil {
			return t.mapErr(ctx, "prune changes", err)
		}
	}
	return nil
}

// Changes returns the ids, sorted, of the memories of s's tenant and user
// (agent and session are ignored) that transactions committed after
// sequence number after inserted, replaced, purged or gave vectors, and the
// latest sequence number of that (tenant, user), 0 while it has none. A
// negative after, or one not below the latest, gives no ids: a cache learns
// where to start by asking with -1. ECONFLICT when changes after after may
// have been forgotten (see Options.ChangeLogKeep): the caller must reload.
// EINVALID for a bad scope.
func (t *vectorTx) Changes(ctx context.Context, s engram.Scope, after int64) ([]string, int64, error) {
	var (
		seq, pruned int64
		ids         []string
	)
	err := t.ptx.QueryRow(ctx, `SELECT cc.seq, cc.pruned_through,
			ARRAY(SELECT DISTINCT c.memory_id FROM changes c
				WHERE c.tenant = cc.tenant AND c.user_id = cc.user_id AND c.seq > $3 AND $3 >= 0 ORDER BY 1)
		FROM change_counters cc WHERE cc.tenant = $1 AND cc.user_id = $2`,
		s.Tenant(), s.User, after).Scan(&seq, &pruned, &ids)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil // nothing ever changed
	} else if err != nil {
		return nil, 0, t.mapErr(ctx, "changes", err)
	}
	if after < 0 || after >= seq {
		return nil, seq, nil
	}
	if after < pruned {
		return nil, 0, engram.Errorf(engram.ECONFLICT, "changes after %d are no longer kept (the log starts after %d); reload", after, pruned)
	}
	return nilIfEmpty(ids), seq, nil
}

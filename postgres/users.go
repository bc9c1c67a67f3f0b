package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// Users implements engram.UserLister; the names are compared and ordered
// by their bytes (the columns' collation is "C").
func (t *coreTx) Users(ctx context.Context, tenant engram.Namespace, after string, limit int) ([]string, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	out := []string{}
	err = t.each(ctx, "list users", `SELECT user_id FROM (
		SELECT DISTINCT user_id FROM episodes WHERE tenant = $1 AND user_id > $2
		UNION SELECT DISTINCT user_id FROM memories WHERE tenant = $1 AND user_id > $2) u
		ORDER BY user_id LIMIT $3`, []any{n.Tenant(), after, limit}, func(row pgx.Row) error {
		var u string
		if err := row.Scan(&u); err != nil {
			return err
		}
		out = append(out, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

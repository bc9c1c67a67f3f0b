package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// Users implements engram.UserLister behind storecheck, which checks the
// tenant and limit; the names are compared and ordered by their bytes (the
// columns' collation is "C").
func (t *coreTx) Users(ctx context.Context, n engram.Namespace, after string, limit int) ([]string, error) {
	out := []string{}
	err := t.each(ctx, "list users", `SELECT user_id FROM (
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

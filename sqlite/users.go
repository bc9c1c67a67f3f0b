package sqlite

import (
	"context"

	"github.com/engramhq/engram"
)

// Users implements engram.UserLister behind storecheck, which checks the
// tenant and limit, over the episodes' and memories' indexes led by org,
// project and user.
func (t *memoryTx) Users(ctx context.Context, n engram.Namespace, after string, limit int) ([]string, error) {
	rows, err := t.query(ctx, `SELECT user_id FROM (
		SELECT DISTINCT user_id FROM episodes WHERE org = ? AND project = ? AND user_id > ?
		UNION SELECT DISTINCT user_id FROM memories WHERE org = ? AND project = ? AND user_id > ?)
		ORDER BY user_id LIMIT ?`, n.Org, n.Project, after, n.Org, n.Project, after, limit)
	if err != nil {
		return nil, mapErr(ctx, "list users", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, mapErr(ctx, "list users", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, "list users", err)
	}
	return out, nil
}

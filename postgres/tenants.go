package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// Tenants implements engram.TenantLister.
func (t *coreTx) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	out := []engram.NamespaceCount{}
	err := t.each(ctx, "list tenants", `SELECT org, project, count(*), max(updated_at) FROM memories
		WHERE status = $1 AND ($2 = '' OR org = $2) AND ($3 = '' OR project = $3)
		GROUP BY org, project ORDER BY org, project LIMIT $4`,
		[]any{string(engram.StatusActive), within.Org, within.Project, limit}, func(row pgx.Row) error {
			var c engram.NamespaceCount
			if err := row.Scan(&c.Namespace.Org, &c.Namespace.Project, &c.Memories, &c.LastActivity); err != nil {
				return err
			}
			c.LastActivity = c.LastActivity.UTC()
			out = append(out, c)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

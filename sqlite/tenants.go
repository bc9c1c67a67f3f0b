package sqlite

import (
	"context"

	"github.com/engramhq/engram"
)

// Tenants implements engram.TenantLister over the memories_by_status
// index, whose leading columns are org and project.
func (t *memoryTx) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	rows, err := t.query(ctx, `SELECT org, project, count(*), max(updated_at) FROM memories
		WHERE status = ? AND (? = '' OR org = ?) AND (? = '' OR project = ?)
		GROUP BY org, project ORDER BY org, project LIMIT ?`,
		string(engram.StatusActive), within.Org, within.Org, within.Project, within.Project, limit)
	if err != nil {
		return nil, mapErr(ctx, "list tenants", err)
	}
	defer rows.Close()
	out := []engram.NamespaceCount{}
	for rows.Next() {
		var c engram.NamespaceCount
		var last int64
		if err := rows.Scan(&c.Namespace.Org, &c.Namespace.Project, &c.Memories, &last); err != nil {
			return nil, mapErr(ctx, "list tenants", err)
		}
		c.LastActivity = fromMicros(last)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, "list tenants", err)
	}
	return out, nil
}

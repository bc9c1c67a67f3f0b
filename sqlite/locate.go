package sqlite

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// LocateMemory implements engram.Locator: the (org, project, user, id)
// key is unique, so one indexed row answers for a user, at most two tell
// that several users of the tenant hold the id.
func (t *memoryTx) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project, User: tenant.User}
	q, args := "SELECT user_id, agent, session FROM memories WHERE org = ? AND project = ? AND id = ? LIMIT 2", []any{n.Org, n.Project, id}
	if n.User != "" {
		q, args = "SELECT user_id, agent, session FROM memories WHERE org = ? AND project = ? AND user_id = ? AND id = ?", []any{n.Org, n.Project, n.User, id}
	}
	found, err := collect(ctx, t.base, "locate memory", q, args, func(sc scanner) (engram.Namespace, error) {
		f := engram.Namespace{Org: n.Org, Project: n.Project}
		err := sc.Scan(&f.User, &f.Agent, &f.Session)
		return f, err
	})
	if err != nil {
		return engram.Namespace{}, err
	}
	return storeutil.Located(id, found)
}

// Namespaces implements engram.Locator.
func (t *memoryTx) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	rows, err := t.query(ctx, `SELECT user_id, agent, session, count(*), max(updated_at) FROM memories
		WHERE org = ? AND project = ? AND status = ?
		GROUP BY user_id, agent, session ORDER BY user_id, agent, session LIMIT ?`,
		n.Org, n.Project, string(engram.StatusActive), limit)
	if err != nil {
		return nil, mapErr(ctx, "list namespaces", err)
	}
	defer rows.Close()
	out := []engram.NamespaceCount{}
	for rows.Next() {
		c := engram.NamespaceCount{Namespace: n}
		var last int64
		if err := rows.Scan(&c.Namespace.User, &c.Namespace.Agent, &c.Namespace.Session, &c.Memories, &last); err != nil {
			return nil, mapErr(ctx, "list namespaces", err)
		}
		c.LastActivity = fromMicros(last)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, "list namespaces", err)
	}
	return out, nil
}

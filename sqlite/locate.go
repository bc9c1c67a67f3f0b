package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/engramhq/engram"
)

// LocateMemory implements engram.Locator: the (org, project, id) key is
// unique, so one indexed row answers.
func (t *memoryTx) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	if err := n.Validate(); err != nil {
		return n, err
	}
	if !engram.ValidID(id) {
		return n, invalidID("memory", id)
	}
	err := t.queryRow(ctx, "SELECT user_id, agent, session FROM memories WHERE org = ? AND project = ? AND id = ?",
		n.Org, n.Project, id).Scan(&n.User, &n.Agent, &n.Session)
	if errors.Is(err, sql.ErrNoRows) {
		return engram.Namespace{}, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	} else if err != nil {
		return engram.Namespace{}, mapErr(ctx, "locate memory", err)
	}
	return n, nil
}

// Namespaces implements engram.Locator.
func (t *memoryTx) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
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

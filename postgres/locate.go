package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// LocateMemory implements engram.Locator: the (org, project, id) key is
// unique, so one indexed row answers.
func (t *coreTx) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	if err := n.Validate(); err != nil {
		return n, err
	}
	if !engram.ValidID(id) {
		return n, invalidID("memory", id)
	}
	err := t.ptx.QueryRow(ctx, "SELECT user_id, agent, session FROM memories WHERE tenant = $1 AND id = $2",
		n.Tenant(), id).Scan(&n.User, &n.Agent, &n.Session)
	if errors.Is(err, pgx.ErrNoRows) {
		return engram.Namespace{}, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	} else if err != nil {
		return engram.Namespace{}, t.mapErr(ctx, "locate memory", err)
	}
	return n, nil
}

// Namespaces implements engram.Locator.
func (t *coreTx) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	out := []engram.NamespaceCount{}
	err = t.each(ctx, "list namespaces", `SELECT user_id, agent, session, count(*), max(updated_at) FROM memories
		WHERE tenant = $1 AND status = $2
		GROUP BY user_id, agent, session ORDER BY user_id, agent, session LIMIT $3`,
		[]any{n.Tenant(), string(engram.StatusActive), limit}, func(row pgx.Row) error {
			c := engram.NamespaceCount{Namespace: n}
			if err := row.Scan(&c.Namespace.User, &c.Namespace.Agent, &c.Namespace.Session, &c.Memories, &c.LastActivity); err != nil {
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

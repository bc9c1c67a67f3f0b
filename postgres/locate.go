package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// LocateMemory implements engram.Locator: the (tenant, user, id) key is
// unique, so one indexed row answers for a user, at most two tell that
// several users of the tenant hold the id.
func (t *coreTx) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project, User: tenant.User}
	q, args := "SELECT user_id, agent, session FROM memories WHERE tenant = $1 AND id = $2 LIMIT 2", []any{n.Tenant(), id}
	if n.User != "" {
		q, args = "SELECT user_id, agent, session FROM memories WHERE tenant = $1 AND id = $2 AND user_id = $3", []any{n.Tenant(), id, n.User}
	}
	var found []engram.Namespace
	err := t.each(ctx, "locate memory", q, args, func(row pgx.Row) error {
		f := engram.Namespace{Org: n.Org, Project: n.Project}
		err := row.Scan(&f.User, &f.Agent, &f.Session)
		found = append(found, f)
		return err
	})
	if err != nil {
		return engram.Namespace{}, err
	}
	return storeutil.Located(id, found)
}

// Namespaces implements engram.Locator.
func (t *coreTx) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	out := []engram.NamespaceCount{}
	err := t.each(ctx, "list namespaces", `SELECT user_id, agent, session, count(*), max(updated_at) FROM memories
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

package postgres

import (
	"context"
	"strings"

	"github.com/engramhq/engram"
)

// The steps of base below clear what a purge of memories or of a scope
// leaves of other capabilities' records: the graph's entities, relations,
// communities and entity history, the scope's resources and its user's
// identities. They are base's, not those capabilities', because the purges
// (adminTx) and the graph's own deletes (graphTx) both take them.

// pruneGraph removes the relations of a tenant's user left without
// evidence and the entities left without mentions: what a purge of
// memories orphaned. Names are personal data; none may outlive the
// memories they came from.
func (t *base) pruneGraph(ctx context.Context, tenant, user string) error {
	if _, err := t.ptx.Exec(ctx, `DELETE FROM relations r WHERE r.tenant = $1 AND r.user_id = $2
		AND NOT EXISTS (SELECT 1 FROM relation_evidence ev WHERE ev.tenant = $1 AND ev.relation_id = r.id)`, tenant, user); err != nil {
		return t.mapErr(ctx, "prune graph", err)
	}
	if _, err := t.ptx.Exec(ctx, `DELETE FROM entities e WHERE e.tenant = $1 AND e.user_id = $2
		AND NOT EXISTS (SELECT 1 FROM entity_mentions em WHERE em.tenant = $1 AND em.entity_id = e.id)`, tenant, user); err != nil {
		return t.mapErr(ctx, "prune graph", err)
	}
	if err := t.pruneEntityHistory(ctx, tenant, user); err != nil {
		return err
	}
	return t.pruneCommunities(ctx, tenant, user)
}

// pruneEntityHistory removes the versions of a tenant's user whose entity
// and whose merge target are both gone.
func (t *base) pruneEntityHistory(ctx context.Context, tenant, user string) error {
	_, err := t.ptx.Exec(ctx, `DELETE FROM entity_versions v WHERE v.tenant = $1 AND v.user_id = $2
		AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.tenant = $1 AND e.id = v.entity_id)
		AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.tenant = $1 AND e.id = v.into_id)`, tenant, user)
	return t.mapErr(ctx, "prune entity history", err)
}

// pruneCommunities removes the communities of a tenant's user that lost a
// member or a source (an entity deleted, a memory purged: their summaries
// may name or quote it), marking their remaining members dirty so the
// next refresh makes them again.
func (t *base) pruneCommunities(ctx context.Context, tenant, user string) error {
	short := `SELECT c.id FROM communities c WHERE c.tenant = $1 AND c.user_id = $2
		AND (c.size > (SELECT count(*) FROM community_members m WHERE m.tenant = $1 AND m.community_id = c.id)
		  OR c.sources > (SELECT count(*) FROM community_sources s WHERE s.tenant = $1 AND s.community_id = c.id))`
	if _, err := t.ptx.Exec(ctx, `INSERT INTO graph_dirty (tenant, user_id, entity_id)
		SELECT $1, $2, m.entity_id FROM community_members m WHERE m.tenant = $1 AND m.community_id IN (`+short+`)
		ON CONFLICT DO NOTHING`, tenant, user); err != nil {
		return t.mapErr(ctx, "prune communities", err)
	}
	if _, err := t.ptx.Exec(ctx, "DELETE FROM communities WHERE tenant = $1 AND id IN ("+short+")", tenant, user); err != nil {
		return t.mapErr(ctx, "prune communities", err)
	}
	return nil
}

// purgeScopeResources removes the resources of s (a write scope) with
// their chunks and says how many resources it removed.
func (t *base) purgeScopeResources(ctx context.Context, s engram.Scope) (int, error) {
	q := &query{}
	q.scope("r.", s)
	var n int
	err := t.ptx.QueryRow(ctx, `WITH gone AS (DELETE FROM resources r WHERE `+q.String()+` RETURNING r.tenant, r.id),
		chunks AS (DELETE FROM resource_chunks c USING gone WHERE c.tenant = gone.tenant AND c.resource_id = gone.id)
		SELECT count(*) FROM gone`, q.args...).Scan(&n)
	return n, t.mapErr(ctx, "purge scope", err)
}

// purgeIdentities removes every identity record of s's user when s names
// the whole user (no agent or session): identities belong to a user.
func (t *base) purgeIdentities(ctx context.Context, s engram.Scope) error {
	if s.User == "" || !s.AllAgents() || s.Session != "" {
		return nil
	}
	for _, table := range strings.Fields(identityTables) {
		if _, err := t.ptx.Exec(ctx, "DELETE FROM "+table+" WHERE tenant = $1 AND user_id = $2", s.Tenant(), s.User); err != nil {
			return t.mapErr(ctx, "purge identities", err)
		}
	}
	return nil
}

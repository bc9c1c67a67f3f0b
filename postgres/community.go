package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// GraphEdges implements engram.CommunityReader.
func (t *graphTx) GraphEdges(ctx context.Context, n engram.Namespace) ([]engram.Edge, error) {
	q := `SELECT least(r.source, r.target) AS a, greatest(r.source, r.target) AS b, sum(ev.weight)
		FROM relations r JOIN relation_evidence ev ON ev.tenant = r.tenant AND ev.relation_id = r.id
		WHERE r.tenant = $1 AND r.user_id = $2 AND r.expired_at IS NULL
		GROUP BY a, b ORDER BY a, b`
	var out []engram.Edge
	err := t.each(ctx, "read graph edges", q, []any{n.Tenant(), n.User}, func(row pgx.Row) error {
		var e engram.Edge
		err := row.Scan(&e.Source, &e.Target, &e.Weight)
		out = append(out, e)
		return err
	})
	return out, err
}

// DirtyEntities implements engram.CommunityReader.
func (t *graphTx) DirtyEntities(ctx context.Context, n engram.Namespace) ([]string, error) {
	var out []string
	err := t.each(ctx, "read dirty entities", "SELECT entity_id FROM graph_dirty WHERE tenant = $1 AND user_id = $2 ORDER BY entity_id",
		[]any{n.Tenant(), n.User}, func(row pgx.Row) error {
			var id string
			err := row.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// DirtyOwners implements engram.CommunityReader.
func (t *graphTx) DirtyOwners(ctx context.Context, limit int) ([]engram.Namespace, error) {
	var out []engram.Namespace
	err := t.each(ctx, "read dirty owners", "SELECT DISTINCT tenant, user_id FROM graph_dirty ORDER BY 1, 2 LIMIT $1",
		[]any{max(limit, 1)}, func(row pgx.Row) error {
			var tenant string
			var n engram.Namespace
			if err := row.Scan(&tenant, &n.User); err != nil {
				return err
			}
			n.Org, n.Project, _ = strings.Cut(tenant, "/")
			out = append(out, n)
			return nil
		})
	return out, err
}

// Communities implements engram.CommunityReader.
func (t *graphTx) Communities(ctx context.Context, s engram.Scope) ([]engram.Community, error) {
	return t.communities(ctx, s, "")
}

// GetCommunity implements engram.CommunityReader.
func (t *graphTx) GetCommunity(ctx context.Context, s engram.Scope, id string) (*engram.Community, error) {
	cs, err := t.communities(ctx, s, id)
	return storeutil.One(cs, err, "community", id)
}

// communities reads the scope's communities (only id's when set) with
// their members and sources.
func (t *graphTx) communities(ctx context.Context, s engram.Scope, id string) ([]engram.Community, error) {
	q := &query{}
	q.graph("c.", s)
	if id != "" {
		q.where("c.id = " + q.arg(id))
	}
	var cs storeutil.Communities
	err := t.each(ctx, "read communities", "SELECT c.id, c.user_id, c.names, c.summary, c.abstract, c.updated_at FROM communities c WHERE "+
		q.String()+" ORDER BY c.id", q.args, func(row pgx.Row) error {
		c := engram.Community{Namespace: engram.Namespace{Org: s.Org, Project: s.Project}}
		var upd time.Time
		if err := row.Scan(&c.ID, &c.Namespace.User, &c.Names, &c.Summary, &c.Abstract, &upd); err != nil {
			return err
		}
		if len(c.Names) == 0 {
			c.Names = nil
		}
		c.UpdatedAt = utc(upd)
		cs.Add(c)
		return nil
	})
	if err != nil || len(cs.List()) == 0 {
		return cs.List(), err
	}
	args := []any{s.Tenant(), cs.IDs()}
	if err := t.each(ctx, "read communities", "SELECT community_id, entity_id FROM community_members WHERE tenant = $1 AND community_id = ANY($2) ORDER BY entity_id",
		args, storeutil.MemberRows[pgx.Row](&cs)); err != nil {
		return nil, err
	}
	if err := t.each(ctx, "read communities", "SELECT community_id, memory_id FROM community_sources WHERE tenant = $1 AND community_id = ANY($2) ORDER BY memory_id",
		args, storeutil.SourceRows[pgx.Row](&cs)); err != nil {
		return nil, err
	}
	return cs.List(), nil
}

// EntityCommunities implements engram.CommunityReader.
func (t *graphTx) EntityCommunities(ctx context.Context, s engram.Scope, entityIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	q := &query{}
	q.graph("c.", s)
	q.where("m.entity_id = ANY(" + q.arg(entityIDs) + ")")
	err := t.each(ctx, "read entity communities", `SELECT m.entity_id, m.community_id FROM community_members m
		JOIN communities c ON c.tenant = m.tenant AND c.id = m.community_id WHERE `+q.String(), q.args, func(row pgx.Row) error {
		var e, c string
		err := row.Scan(&e, &c)
		out[e] = c
		return err
	})
	return out, err
}

// PutCommunity implements engram.CommunityWriter.
func (t *graphTx) PutCommunity(ctx context.Context, c *engram.Community) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := c.Namespace
	if err := t.checkOwner(ctx, "communities", "community", n, c.ID); err != nil {
		return err
	}
	names := c.Names
	if names == nil {
		names = []string{}
	}
	steps := []struct {
		q    string
		args []any
	}{
		{"DELETE FROM communities WHERE tenant = $1 AND id = $2", []any{n.Tenant(), c.ID}},
		{"DELETE FROM community_members WHERE tenant = $1 AND entity_id = ANY($2)", []any{n.Tenant(), c.Members}},
		{`INSERT INTO communities (tenant, user_id, id, names, summary, abstract, size, sources, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			[]any{n.Tenant(), n.User, c.ID, names, c.Summary, c.Abstract, len(c.Members), len(c.Sources), c.UpdatedAt}},
	}
	for _, st := range steps {
		if _, err := t.ptx.Exec(ctx, st.q, st.args...); err != nil {
			return t.mapErr(ctx, "put community", err)
		}
	}
	tag, err := t.ptx.Exec(ctx, `INSERT INTO community_members (tenant, entity_id, community_id)
		SELECT $1, e.id, $3 FROM entities e WHERE e.tenant = $1 AND e.user_id = $2 AND e.id = ANY($4)`,
		n.Tenant(), n.User, c.ID, c.Members)
	if err != nil {
		return t.mapErr(ctx, "put community", err)
	}
	if int(tag.RowsAffected()) != len(c.Members) {
		return engram.Errorf(engram.ENOTFOUND, "community %s: a member entity was not found", c.ID)
	}
	tag, err = t.ptx.Exec(ctx, `INSERT INTO community_sources (tenant, user_id, memory_id, community_id)
		SELECT $1, $2, m.id, $3 FROM memories m WHERE m.tenant = $1 AND m.user_id = $2 AND m.id = ANY($4)`,
		n.Tenant(), n.User, c.ID, c.Sources)
	if err != nil {
		return t.mapErr(ctx, "put community", err)
	}
	if int(tag.RowsAffected()) != len(c.Sources) {
		return engram.Errorf(engram.ENOTFOUND, "community %s: a source memory was not found", c.ID)
	}
	return nil
}

// DeleteCommunity implements engram.CommunityWriter.
func (t *graphTx) DeleteCommunity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.ptx.Exec(ctx, "DELETE FROM communities WHERE tenant = $1 AND user_id = $2 AND id = $3", n.Tenant(), n.User, id)
	return t.mapErr(ctx, "delete community", err)
}

// ClearDirty implements engram.CommunityWriter.
func (t *graphTx) ClearDirty(ctx context.Context, n engram.Namespace) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.ptx.Exec(ctx, "DELETE FROM graph_dirty WHERE tenant = $1 AND user_id = $2", n.Tenant(), n.User)
	return t.mapErr(ctx, "clear dirty entities", err)
}

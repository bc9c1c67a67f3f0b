package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// GraphEdges implements engram.CommunityReader.
func (t *communityTx) GraphEdges(ctx context.Context, n engram.Namespace) ([]engram.Edge, error) {
	q := `SELECT min(r.source, r.target) AS a, max(r.source, r.target) AS b, sum(ev.weight)
		FROM relations r JOIN relation_evidence ev ON ev.org = r.org AND ev.project = r.project AND ev.relation_id = r.id
		WHERE r.org = ? AND r.project = ? AND r.user_id = ? AND r.expired_at IS NULL
		GROUP BY a, b ORDER BY a, b`
	var out []engram.Edge
	err := t.each(ctx, "read graph edges", q, []any{n.Org, n.Project, n.User}, func(sc scanner) error {
		var e engram.Edge
		err := sc.Scan(&e.Source, &e.Target, &e.Weight)
		out = append(out, e)
		return err
	})
	return out, err
}

// DirtyEntities implements engram.CommunityReader.
func (t *communityTx) DirtyEntities(ctx context.Context, n engram.Namespace) ([]string, error) {
	var out []string
	err := t.each(ctx, "read dirty entities", "SELECT entity_id FROM graph_dirty WHERE org = ? AND project = ? AND user_id = ? ORDER BY entity_id",
		[]any{n.Org, n.Project, n.User}, func(sc scanner) error {
			var id string
			err := sc.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// DirtyOwners implements engram.CommunityReader.
func (t *communityTx) DirtyOwners(ctx context.Context, limit int) ([]engram.Namespace, error) {
	var out []engram.Namespace
	err := t.each(ctx, "read dirty owners", "SELECT DISTINCT org, project, user_id FROM graph_dirty ORDER BY 1, 2, 3 LIMIT ?",
		[]any{max(limit, 1)}, func(sc scanner) error {
			var n engram.Namespace
			err := sc.Scan(&n.Org, &n.Project, &n.User)
			out = append(out, n)
			return err
		})
	return out, err
}

// Communities implements engram.CommunityReader.
func (t *communityTx) Communities(ctx context.Context, s engram.Scope) ([]engram.Community, error) {
	return t.communities(ctx, s, "")
}

// GetCommunity implements engram.CommunityReader.
func (t *communityTx) GetCommunity(ctx context.Context, s engram.Scope, id string) (*engram.Community, error) {
	cs, err := t.communities(ctx, s, id)
	return storeutil.One(cs, err, "community", id)
}

// communities reads the scope's communities (only id's when set) with
// their members and sources.
func (t *communityTx) communities(ctx context.Context, s engram.Scope, id string) ([]engram.Community, error) {
	cond, args := graphWhere("c.", s)
	q := "SELECT c.id, c.org, c.project, c.user_id, c.names, c.summary, c.abstract, c.updated_at FROM communities c WHERE " + cond
	if id != "" {
		q += " AND c.id = ?"
		args = append(args, id)
	}
	var cs storeutil.Communities
	err := t.each(ctx, "read communities", q+" ORDER BY c.id", args, func(sc scanner) error {
		c, err := scanCommunity(sc)
		if err != nil {
			return err
		}
		cs.Add(c)
		return nil
	})
	if err != nil || len(cs.List()) == 0 {
		return cs.List(), err
	}
	j, err := stringsJSON(cs.IDs())
	if err != nil {
		return nil, err
	}
	args = []any{s.Org, s.Project, j}
	if err := t.each(ctx, "read communities", "SELECT community_id, entity_id FROM community_members WHERE org = ? AND project = ? AND community_id IN (SELECT value FROM json_each(?)) ORDER BY entity_id",
		args, storeutil.MemberRows[scanner](&cs)); err != nil {
		return nil, err
	}
	if err := t.each(ctx, "read communities", "SELECT community_id, memory_id FROM community_sources WHERE org = ? AND project = ? AND community_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id",
		args, storeutil.SourceRows[scanner](&cs)); err != nil {
		return nil, err
	}
	return cs.List(), nil
}

// scanCommunity reads a community's row, without its members and sources.
func scanCommunity(sc scanner) (engram.Community, error) {
	var (
		c     engram.Community
		names sql.NullString
		upd   int64
	)
	if err := sc.Scan(&c.ID, &c.Namespace.Org, &c.Namespace.Project, &c.Namespace.User, &names, &c.Summary, &c.Abstract, &upd); err != nil {
		return c, err
	}
	c.UpdatedAt = fromMicros(upd)
	if !names.Valid {
		return c, nil
	}
	var err error
	c.Names, err = storeutil.DecodeStrings([]byte(names.String))
	return c, err
}

// EntityCommunities implements engram.CommunityReader.
func (t *communityTx) EntityCommunities(ctx context.Context, s engram.Scope, entityIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	j, err := stringsJSON(entityIDs)
	if err != nil {
		return nil, err
	}
	cond, args := graphWhere("c.", s)
	q := `SELECT m.entity_id, m.community_id FROM community_members m
		JOIN communities c ON c.org = m.org AND c.project = m.project AND c.id = m.community_id
		WHERE ` + cond + " AND m.entity_id IN (SELECT value FROM json_each(?))"
	err = t.each(ctx, "read entity communities", q, append(args, j), func(sc scanner) error {
		var e, c string
		err := sc.Scan(&e, &c)
		out[e] = c
		return err
	})
	return out, err
}

// PutCommunity implements engram.CommunityWriter.
func (t *communityTx) PutCommunity(ctx context.Context, c *engram.Community) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := c.Namespace
	var owner string
	err := t.queryRow(ctx, "SELECT user_id FROM communities WHERE org = ? AND project = ? AND id = ?", n.Org, n.Project, c.ID).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return mapErr(ctx, "put community", err)
	case owner != n.User:
		return engram.Errorf(engram.ECONFLICT, "community %s already exists", c.ID)
	}
	names, err := stringsJSON(c.Names)
	if err != nil {
		return err
	}
	members, err := stringsJSON(c.Members)
	if err != nil {
		return err
	}
	steps := []struct {
		q    string
		args []any
	}{
		{"DELETE FROM communities WHERE org = ? AND project = ? AND id = ?", []any{n.Org, n.Project, c.ID}},
		{"DELETE FROM community_members WHERE org = ? AND project = ? AND entity_id IN (SELECT value FROM json_each(?))", []any{n.Org, n.Project, members}},
		{`INSERT INTO communities (org, project, user_id, id, names, summary, abstract, size, sources, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			[]any{n.Org, n.Project, n.User, c.ID, names, c.Summary, c.Abstract, len(c.Members), len(c.Sources), micros(c.UpdatedAt)}},
	}
	for _, st := range steps {
		if _, err := t.exec(ctx, st.q, st.args...); err != nil {
			return mapErr(ctx, "put community", err)
		}
	}
	for _, id := range c.Members {
		if err := t.insertExisting(ctx, `INSERT INTO community_members (org, project, entity_id, community_id)
			SELECT ?1, ?2, ?4, ?5 WHERE EXISTS (SELECT 1 FROM entities WHERE org = ?1 AND project = ?2 AND user_id = ?3 AND id = ?4)`,
			n, id, c.ID); err != nil {
			return engram.Errorf(engram.ENOTFOUND, "community %s: member entity %s not found", c.ID, id)
		}
	}
	for _, id := range c.Sources {
		if err := t.insertExisting(ctx, `INSERT INTO community_sources (org, project, user_id, memory_id, community_id)
			SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND user_id = ?3 AND id = ?4)`,
			n, id, c.ID); err != nil {
			return engram.Errorf(engram.ENOTFOUND, "community %s: source memory %s not found", c.ID, id)
		}
	}
	return nil
}

// errMissing says insertExisting inserted nothing.
var errMissing = errors.New("missing")

// insertExisting runs an INSERT … SELECT … WHERE EXISTS with n, id and
// community id cid, failing with errMissing when it inserted no row.
func (t *communityTx) insertExisting(ctx context.Context, q string, n engram.Namespace, id, cid string) error {
	res, err := t.exec(ctx, q, n.Org, n.Project, n.User, id, cid)
	if err != nil {
		return mapErr(ctx, "put community", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put community", err)
	} else if k == 0 {
		return errMissing
	}
	return nil
}

// DeleteCommunity implements engram.CommunityWriter.
func (t *communityTx) DeleteCommunity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, "DELETE FROM communities WHERE org = ? AND project = ? AND user_id = ? AND id = ?", n.Org, n.Project, n.User, id)
	return mapErr(ctx, "delete community", err)
}

// ClearDirty implements engram.CommunityWriter.
func (t *communityTx) ClearDirty(ctx context.Context, n engram.Namespace) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, "DELETE FROM graph_dirty WHERE org = ? AND project = ? AND user_id = ?", n.Org, n.Project, n.User)
	return mapErr(ctx, "clear dirty entities", err)
}

// pruneCommunities removes the communities of a tenant's user that lost a
// member or a source (an entity deleted, a memory purged: their summaries
// may name or quote it), marking their remaining members dirty so the
// next refresh makes them again.
func (t *base) pruneCommunities(ctx context.Context, org, project, user string) error {
	short := `SELECT c.id FROM communities c WHERE c.org = ?1 AND c.project = ?2 AND c.user_id = ?3
		AND (c.size > (SELECT count(*) FROM community_members m WHERE m.org = ?1 AND m.project = ?2 AND m.community_id = c.id)
		  OR c.sources > (SELECT count(*) FROM community_sources s WHERE s.org = ?1 AND s.project = ?2 AND s.community_id = c.id))`
	if _, err := t.exec(ctx, `INSERT OR IGNORE INTO graph_dirty (org, project, user_id, entity_id)
		SELECT ?1, ?2, ?3, m.entity_id FROM community_members m WHERE m.org = ?1 AND m.project = ?2 AND m.community_id IN (`+short+`)`,
		org, project, user); err != nil {
		return mapErr(ctx, "prune communities", err)
	}
	if _, err := t.exec(ctx, "DELETE FROM communities WHERE org = ?1 AND project = ?2 AND id IN ("+short+")", org, project, user); err != nil {
		return mapErr(ctx, "prune communities", err)
	}
	return nil
}

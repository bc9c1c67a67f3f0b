package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// graphTx is the entity graph of a transaction: entities, mentions,
// relations with their evidence, communities and entity history
// (engram.GraphReader, GraphWriter, RelationsWriter, CommunityReader,
// CommunityWriter and EntityHistoryReader).
type graphTx struct{ *base }

// graph adds the condition that admits the graph rows (columns tenant and
// user_id prefixed with p) of s's tenant and user, and the project's own
// with s.IncludeShared.
func (q *query) graph(p string, s engram.Scope) {
	t := q.arg(s.Tenant())
	if s.IncludeShared && s.User != "" {
		q.where(p + "tenant = " + t + " AND " + p + "user_id IN (" + q.arg(s.User) + ", '')")
		return
	}
	q.where(p + "tenant = " + t + " AND " + p + "user_id = " + q.arg(s.User))
}

const entityCols = `e.id, e.org, e.project, e.user_id, e.name, e.norm, e.type, e.aliases, e.summary, e.status,
	e.created_at, e.updated_at,
	(SELECT count(*) FROM entity_mentions em WHERE em.tenant = e.tenant AND em.entity_id = e.id)`

// entityColsCapped counts mentions up to 100 only (see the embedded
// store's).
const entityColsCapped = `e.id, e.org, e.project, e.user_id, e.name, e.norm, e.type, e.aliases, e.summary, e.status,
	e.created_at, e.updated_at,
	(SELECT count(*) FROM (SELECT 1 FROM entity_mentions em WHERE em.tenant = e.tenant AND em.entity_id = e.id LIMIT 100) c)`

func scanEntity(row pgx.Row) (engram.Entity, error) {
	var (
		e        engram.Entity
		status   string
		cre, upd time.Time
	)
	err := row.Scan(&e.ID, &e.Namespace.Org, &e.Namespace.Project, &e.Namespace.User, &e.Name, &e.Norm, &e.Type,
		&e.Aliases, &e.Summary, &status, &cre, &upd, &e.Mentions)
	e.Status, e.CreatedAt, e.UpdatedAt = engram.EntityStatus(status), utc(cre), utc(upd)
	if len(e.Aliases) == 0 {
		e.Aliases = nil
	}
	return e, err
}

// GetEntity implements engram.GraphReader.
func (t *graphTx) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.Entity, error) {
	q := &query{}
	q.graph("e.", s)
	q.where("e.id = " + q.arg(id))
	e, err := scanEntity(t.ptx.QueryRow(ctx, "SELECT "+entityCols+" FROM entities e WHERE "+q.String(), q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "entity %s not found", id)
	} else if err != nil {
		return nil, t.mapErr(ctx, "get entity", err)
	}
	return &e, nil
}

// ListEntities implements engram.GraphReader.
func (t *graphTx) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error) {
	limit := f.Limit // made by storecheck.EntityLimit in front of the store
	q := &query{}
	q.graph("e.", s)
	if f.Type != "" {
		if err := storable("type", f.Type); err != nil {
			return nil, "", err
		}
		q.where("e.type = " + q.arg(f.Type))
	}
	if p := engram.NormalizeName(f.Prefix); p != "" {
		q.where("starts_with(e.norm, " + q.arg(p) + ")")
	}
	if f.Cursor != "" {
		norm, id, err := storeutil.EntityAfter(f.Cursor)
		if err == nil && storable("cursor", norm) != nil {
			err = storeutil.ErrBadCursor()
		}
		if err != nil {
			return nil, "", err
		}
		n := q.arg(norm)
		q.where("(e.norm > " + n + " OR (e.norm = " + n + " AND e.id > " + q.arg(id) + "))")
	}
	out, err := collect(ctx, t.base, "list entities", "SELECT "+entityCols+" FROM entities e WHERE "+q.String()+
		" ORDER BY e.norm, e.id LIMIT "+q.arg(limit+1), q.args, scanEntity)
	return storeutil.EntityPage(out, limit, err)
}

// EntitiesByKey implements storecheck.GraphLookups.
func (t *graphTx) EntitiesByKey(ctx context.Context, s engram.Scope, kind string, keys []string, limit int) ([]engram.Entity, error) {
	// A key PostgreSQL cannot hold matches nothing.
	keys = slicesFilter(keys, func(k string) bool { return storable("key", k) == nil })
	if len(keys) == 0 {
		return nil, nil
	}
	q := &query{}
	q.graph("e.", s)
	sub := &query{args: q.args}
	sub.graph("k.", s)
	q.args = sub.args
	q.where("e.id IN (SELECT k.entity_id FROM entity_keys k WHERE " + sub.String() +
		" AND k.kind = " + q.arg(kind) + " AND k.key = ANY(" + q.arg(keys) + "))")
	cols := entityCols
	if kind == "t" {
		cols = entityColsCapped
	}
	var out []engram.Entity
	err := t.each(ctx, "find entities", "SELECT "+cols+" FROM entities e WHERE "+q.String()+
		" ORDER BY e.norm, e.id LIMIT "+q.arg(limit), q.args, func(row pgx.Row) error {
		e, err := scanEntity(row)
		out = append(out, e)
		return err
	})
	return out, err
}

func slicesFilter(xs []string, keep func(string) bool) []string {
	var out []string
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// Mentions implements storecheck.GraphLookups.
func (t *graphTx) Mentions(ctx context.Context, s engram.Scope, col string, ids []string, limit int) ([]engram.Mention, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q := &query{}
	q.graph("m.", s)
	q.where("m." + col + " = ANY(" + q.arg(ids) + ")")
	sql := "SELECT m.entity_id, m.memory_id, m.user_id, m.at FROM entity_mentions m WHERE " + q.String() +
		" ORDER BY m.at DESC, m.memory_id DESC, m.entity_id"
	if limit > 0 {
		sql += " LIMIT " + q.arg(limit)
	}
	var out []engram.Mention
	err := t.each(ctx, "read mentions", sql, q.args, func(row pgx.Row) error {
		m := engram.Mention{Namespace: engram.Namespace{Org: s.Org, Project: s.Project}}
		var at time.Time
		err := row.Scan(&m.EntityID, &m.MemoryID, &m.Namespace.User, &at)
		m.At = utc(at)
		out = append(out, m)
		return err
	})
	return out, err
}

// Relations implements engram.GraphReader.
func (t *graphTx) Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error) {
	limit := f.Limit // made by engram.RelationLimit in front of the store
	if entityIDs != nil && len(entityIDs) == 0 {
		return nil, nil
	}
	q := &query{}
	q.graph("r.", s)
	if entityIDs != nil {
		ids := q.arg(entityIDs)
		switch {
		case f.Within:
			q.where("r.source = ANY(" + ids + ") AND r.target = ANY(" + ids + ")")
		case f.With != "":
			w := q.arg(f.With)
			q.where("((r.source = ANY(" + ids + ") AND r.target = " + w + ") OR (r.target = ANY(" + ids + ") AND r.source = " + w + "))")
		default:
			q.where("(r.source = ANY(" + ids + ") OR r.target = ANY(" + ids + "))")
		}
	}
	if f.Memory != "" {
		q.where("r.id IN (SELECT ev.relation_id FROM relation_evidence ev WHERE ev.tenant = r.tenant AND ev.user_id = r.user_id AND ev.memory_id = " + q.arg(f.Memory) + ")")
	}
	if f.Label != "" {
		q.where("r.label = " + q.arg(f.Label))
	}
	if !f.All {
		q.where("r.expired_at IS NULL")
	}
	sql := `SELECT r.id, r.user_id, r.source, r.target, r.label, r.valid_at, r.invalid_at, r.created_at, r.expired_at,
		(SELECT coalesce(sum(ev.weight), 0) FROM relation_evidence ev WHERE ev.tenant = r.tenant AND ev.relation_id = r.id) AS w
		FROM relations r WHERE ` + q.String() + " ORDER BY w DESC, r.id LIMIT " + q.arg(limit)
	var out []engram.Relation
	err := t.each(ctx, "read relations", sql, q.args, func(row pgx.Row) error {
		r := engram.Relation{Namespace: engram.Namespace{Org: s.Org, Project: s.Project}}
		var created time.Time
		err := row.Scan(&r.ID, &r.Namespace.User, &r.Source, &r.Target, &r.Label, &r.ValidAt, &r.InvalidAt, &created, &r.ExpiredAt, &r.Weight)
		r.CreatedAt, r.ValidAt, r.InvalidAt, r.ExpiredAt = utc(created), utcPtr(r.ValidAt), utcPtr(r.InvalidAt), utcPtr(r.ExpiredAt)
		out = append(out, r)
		return err
	})
	if err != nil || len(out) == 0 || f.NoEvidence {
		return out, err
	}
	return out, t.evidence(ctx, s, out)
}

func (t *graphTx) evidence(ctx context.Context, s engram.Scope, rs []engram.Relation) error {
	ids, add := storeutil.EvidenceRows[pgx.Row](rs)
	return t.each(ctx, "read evidence", `SELECT relation_id, memory_id, weight FROM relation_evidence
		WHERE tenant = $1 AND relation_id = ANY($2) ORDER BY relation_id, memory_id`,
		[]any{s.Tenant(), ids}, add)
}

// checkOwner returns ECONFLICT when id names a row of table held by
// another user of n's tenant.
func (t *graphTx) checkOwner(ctx context.Context, table, what string, n engram.Namespace, id string) error {
	var owner string
	err := t.ptx.QueryRow(ctx, "SELECT user_id FROM "+table+" WHERE tenant = $1 AND id = $2", n.Tenant(), id).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return t.mapErr(ctx, "put "+what, err)
	case owner != n.User:
		return engram.Errorf(engram.ECONFLICT, "%s %s already exists", what, id)
	}
	return nil
}

// PutEntity implements engram.GraphWriter.
func (t *graphTx) PutEntity(ctx context.Context, e *engram.Entity) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := e.Namespace
	old, err := t.oldEntity(ctx, n, e.ID)
	if err != nil {
		return err
	}
	if _, err := t.ptx.Exec(ctx, `INSERT INTO entities (tenant, org, project, user_id, id, name, norm, type, aliases, summary, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (tenant, id) DO UPDATE SET name = excluded.name, norm = excluded.norm, type = excluded.type,
			aliases = excluded.aliases, summary = excluded.summary, status = excluded.status,
			created_at = excluded.created_at, updated_at = excluded.updated_at`,
		n.Tenant(), n.Org, n.Project, n.User, e.ID, e.Name, e.Norm, e.Type, e.Aliases, e.Summary, string(e.Status),
		e.CreatedAt, e.UpdatedAt); err != nil {
		return t.mapErr(ctx, "put entity", err)
	}
	if _, err := t.ptx.Exec(ctx, "DELETE FROM entity_keys WHERE tenant = $1 AND entity_id = $2", n.Tenant(), e.ID); err != nil {
		return t.mapErr(ctx, "put entity", err)
	}
	var kinds, keys []string
	for _, k := range e.Keys() {
		kinds, keys = append(kinds, "n"), append(keys, k)
		for _, w := range engram.NameTokens(k) {
			kinds, keys = append(kinds, "t"), append(keys, w)
		}
	}
	if _, err := t.ptx.Exec(ctx, `INSERT INTO entity_keys (tenant, user_id, kind, key, entity_id)
		SELECT $1, $2, k.kind, k.key, $3 FROM unnest($4::text[], $5::text[]) AS k(kind, key) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.User, e.ID, kinds, keys); err != nil {
		return t.mapErr(ctx, "put entity", err)
	}
	return t.recordEntityVersion(ctx, n, e.ID, engram.EntityChangeOf(ctx, old, e), e, e.UpdatedAt)
}

// DeleteEntity implements engram.GraphWriter.
func (t *graphTx) DeleteEntity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	snap, err := t.GetEntity(ctx, engram.ScopeOf(n), id)
	if engram.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if _, err := t.ptx.Exec(ctx, "DELETE FROM entities WHERE tenant = $1 AND user_id = $2 AND id = $3", n.Tenant(), n.User, id); err != nil {
		return t.mapErr(ctx, "delete entity", err)
	}
	if err := t.pruneCommunities(ctx, n.Tenant(), n.User); err != nil {
		return err
	}
	return storeutil.RecordEntityDeletion(ctx, snap, func() error { return t.forgetEntityHistory(ctx, n, id) },
		func(c engram.EntityChange, snap *engram.Entity, at time.Time) error {
			return t.recordEntityVersion(ctx, n, id, c, snap, at)
		})
}

// PutMention implements engram.GraphWriter.
func (t *graphTx) PutMention(ctx context.Context, m engram.Mention) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := m.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO entity_mentions (tenant, user_id, entity_id, memory_id, at)
		SELECT $1, $2, $3, $4, $5
		WHERE EXISTS (SELECT 1 FROM entities WHERE tenant = $1 AND id = $3 AND user_id = $2)
		AND EXISTS (SELECT 1 FROM memories WHERE tenant = $1 AND id = $4 AND user_id = $2)
		ON CONFLICT (tenant, entity_id, memory_id) DO UPDATE SET at = excluded.at`,
		n.Tenant(), n.User, m.EntityID, m.MemoryID, m.At)
	if err != nil {
		return t.mapErr(ctx, "put mention", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ENOTFOUND, "entity %s or memory %s not found", m.EntityID, m.MemoryID)
	}
	return nil
}

// DeleteMention implements engram.GraphWriter.
func (t *graphTx) DeleteMention(ctx context.Context, n engram.Namespace, entityID, memoryID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.ptx.Exec(ctx, "DELETE FROM entity_mentions WHERE tenant = $1 AND user_id = $2 AND entity_id = $3 AND memory_id = $4",
		n.Tenant(), n.User, entityID, memoryID)
	return t.mapErr(ctx, "delete mention", err)
}

// PutRelation implements engram.GraphWriter.
func (t *graphTx) PutRelation(ctx context.Context, r *engram.Relation) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := r.Namespace
	var ends int
	if err := t.ptx.QueryRow(ctx, "SELECT count(*) FROM entities WHERE tenant = $1 AND user_id = $2 AND id IN ($3, $4)",
		n.Tenant(), n.User, r.Source, r.Target).Scan(&ends); err != nil {
		return t.mapErr(ctx, "put relation", err)
	}
	if ends != 2 {
		return engram.Errorf(engram.ENOTFOUND, "relation %s: entity %s or %s not found", r.ID, r.Source, r.Target)
	}
	if err := t.checkOwner(ctx, "relations", "relation", n, r.ID); err != nil {
		return err
	}
	if _, err := t.ptx.Exec(ctx, `INSERT INTO relations (tenant, user_id, id, source, target, label, valid_at, invalid_at, created_at, expired_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (tenant, id) DO UPDATE SET source = excluded.source, target = excluded.target, label = excluded.label,
			valid_at = excluded.valid_at, invalid_at = excluded.invalid_at, created_at = excluded.created_at, expired_at = excluded.expired_at`,
		n.Tenant(), n.User, r.ID, r.Source, r.Target, r.Label, r.ValidAt, r.InvalidAt, r.CreatedAt, r.ExpiredAt); err != nil {
		return t.mapErr(ctx, "put relation", err)
	}
	if _, err := t.ptx.Exec(ctx, "DELETE FROM relation_evidence WHERE tenant = $1 AND relation_id = $2", n.Tenant(), r.ID); err != nil {
		return t.mapErr(ctx, "put relation", err)
	}
	ids := make([]string, len(r.Evidence))
	weights := make([]float64, len(r.Evidence))
	for i, ev := range r.Evidence {
		ids[i], weights[i] = ev.MemoryID, ev.Weight
	}
	tag, err := t.ptx.Exec(ctx, `INSERT INTO relation_evidence (tenant, user_id, relation_id, memory_id, weight)
		SELECT $1, $5, $2, ev.id, ev.w FROM unnest($3::text[], $4::float8[]) AS ev(id, w)
		WHERE EXISTS (SELECT 1 FROM memories m WHERE m.tenant = $1 AND m.id = ev.id AND m.user_id = $5)
		ON CONFLICT (tenant, relation_id, memory_id) DO UPDATE SET weight = excluded.weight`,
		n.Tenant(), r.ID, ids, weights, n.User)
	if err != nil {
		return t.mapErr(ctx, "put relation", err)
	}
	if int(tag.RowsAffected()) != len(distinct(ids)) {
		return engram.Errorf(engram.ENOTFOUND, "relation %s: an evidence memory was not found", r.ID)
	}
	return nil
}

func distinct(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// AddEvidence implements engram.GraphWriter.
func (t *graphTx) AddEvidence(ctx context.Context, n engram.Namespace, relationID string, ev engram.Evidence) error {
	if err := t.writable(); err != nil {
		return err
	}
	tag, err := t.ptx.Exec(ctx, `INSERT INTO relation_evidence (tenant, user_id, relation_id, memory_id, weight)
		SELECT $1, $5, $2, $3, $4
		WHERE EXISTS (SELECT 1 FROM relations WHERE tenant = $1 AND id = $2 AND user_id = $5)
		AND EXISTS (SELECT 1 FROM memories WHERE tenant = $1 AND id = $3 AND user_id = $5)
		ON CONFLICT (tenant, relation_id, memory_id) DO UPDATE SET weight = excluded.weight`,
		n.Tenant(), relationID, ev.MemoryID, ev.Weight, n.User)
	if err != nil {
		return t.mapErr(ctx, "add evidence", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ENOTFOUND, "relation %s or memory %s not found", relationID, ev.MemoryID)
	}
	return nil
}

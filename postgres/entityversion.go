package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// oldEntity returns the entity of n's tenant with id as stored (name,
// type, aliases, summary and owner only), or nil; ECONFLICT when it is
// another user's.
func (t *graphTx) oldEntity(ctx context.Context, n engram.Namespace, id string) (*engram.Entity, error) {
	var old engram.Entity
	err := t.ptx.QueryRow(ctx, "SELECT user_id, name, type, aliases, summary FROM entities WHERE tenant = $1 AND id = $2",
		n.Tenant(), id).Scan(&old.Namespace.User, &old.Name, &old.Type, &old.Aliases, &old.Summary)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, t.mapErr(ctx, "put entity", err)
	case old.Namespace.User != n.User:
		return nil, engram.Errorf(engram.ECONFLICT, "entity %s already exists", id)
	}
	return &old, nil
}

// recordEntityVersion appends a version c of the entity id of n's tenant
// and user; snap is the entity it shows (nil for a delete). A merge into
// another entity (EntityMerged) ties the entity's versions, and those of the entities
// once merged into it, to that entity, so they outlive it while it lives.
func (t *graphTx) recordEntityVersion(ctx context.Context, n engram.Namespace, id string, c engram.EntityChange, snap *engram.Entity, at time.Time) error {
	if c.Op == "" {
		return nil
	}
	var into *string
	if c.Op == engram.EntityMerged && len(c.Related) > 0 {
		into = &c.Related[0]
		if _, err := t.ptx.Exec(ctx, "UPDATE entity_versions SET into_id = $1 WHERE tenant = $2 AND (entity_id = $3 OR into_id = $3)",
			*into, n.Tenant(), id); err != nil {
			return t.mapErr(ctx, "record entity version", err)
		}
	}
	var body []byte
	if snap != nil {
		s := *snap
		s.Mentions = 0
		var err error
		if body, err = json.Marshal(&s); err != nil {
			return err
		}
	}
	_, err := t.ptx.Exec(ctx, `INSERT INTO entity_versions (tenant, org, project, user_id, entity_id, version, op, into_id, related, entity, actor, at)
		SELECT $1, $2, $3, $4, $5, coalesce(max(version), 0) + 1, $6, $7, $8, $9, $10, $11
		FROM entity_versions WHERE tenant = $1 AND entity_id = $5`,
		n.Tenant(), n.Org, n.Project, n.User, id, c.Op, into, c.Related, body, engram.ActorFrom(ctx), at)
	return t.mapErr(ctx, "record entity version", err)
}

// forgetEntityHistory removes the versions of the entity id and of the
// entities merged into it: a delete takes its names with it.
func (t *graphTx) forgetEntityHistory(ctx context.Context, n engram.Namespace, id string) error {
	_, err := t.ptx.Exec(ctx, "DELETE FROM entity_versions WHERE tenant = $1 AND (entity_id = $2 OR into_id = $2)", n.Tenant(), id)
	return t.mapErr(ctx, "forget entity history", err)
}

// EntityHistory implements engram.EntityHistoryReader.
func (t *graphTx) EntityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.EntityVersion, error) {
	q := &query{}
	q.graph("v.", s)
	q.where("v.entity_id = " + q.arg(id))
	out := []engram.EntityVersion{}
	err := t.each(ctx, "entity history", "SELECT v.org, v.project, v.user_id, v.entity_id, v.version, v.op, v.related, v.entity, v.actor, v.at FROM entity_versions v WHERE "+
		q.String()+" ORDER BY v.version", q.args, func(row pgx.Row) error {
		var (
			v    engram.EntityVersion
			body []byte
		)
		if err := row.Scan(&v.Namespace.Org, &v.Namespace.Project, &v.Namespace.User, &v.EntityID, &v.Version, &v.Op,
			&v.Related, &body, &v.Actor, &v.At); err != nil {
			return err
		}
		v.At = v.At.UTC()
		if body != nil {
			v.Entity = new(engram.Entity)
			if err := json.Unmarshal(body, v.Entity); err != nil {
				return err
			}
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

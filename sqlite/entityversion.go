package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

const (
	// oldEntitySQL reads what a version compares of an entity about to be
	// replaced.
	oldEntitySQL = "SELECT user_id, name, type, aliases, summary FROM entities WHERE org = ? AND project = ? AND id = ?"
	// insertEntityVersionSQL numbers the version after the entity's last.
	insertEntityVersionSQL = `INSERT INTO entity_versions (org, project, user_id, entity_id, version, op, into_id, related, entity, actor, at)
		SELECT ?1, ?2, ?3, ?4, coalesce(max(version), 0) + 1, ?5, ?6, ?7, ?8, ?9, ?10
		FROM entity_versions WHERE org = ?1 AND project = ?2 AND entity_id = ?4`
)

// oldEntity returns the entity of n's tenant with id as stored (name,
// type, aliases, summary and owner only), or nil.
func (t *graphTx) oldEntity(ctx context.Context, n engram.Namespace, id string) (*engram.Entity, error) {
	var (
		old     engram.Entity
		aliases sql.NullString
	)
	err := t.queryRow(ctx, oldEntitySQL, n.Org, n.Project, id).Scan(&old.Namespace.User, &old.Name, &old.Type, &aliases, &old.Summary)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if aliases.Valid {
		if old.Aliases, err = storeutil.DecodeStrings([]byte(aliases.String)); err != nil {
			return nil, err
		}
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
	var into, related, body any
	var err error
	if c.Op == engram.EntityMerged && len(c.Related) > 0 {
		into = c.Related[0]
		if _, err := t.exec(ctx, "UPDATE entity_versions SET into_id = ?1 WHERE org = ?2 AND project = ?3 AND (entity_id = ?4 OR into_id = ?4)",
			into, n.Org, n.Project, id); err != nil {
			return mapErr(ctx, "record entity version", err)
		}
	}
	if related, err = stringsJSON(c.Related); err != nil {
		return err
	}
	if snap != nil {
		s := *snap
		s.Mentions = 0
		b, err := json.Marshal(&s)
		if err != nil {
			return err
		}
		body = string(b)
	}
	_, err = t.exec(ctx, insertEntityVersionSQL, n.Org, n.Project, n.User, id, c.Op, into, related, body,
		engram.ActorFrom(ctx), micros(at))
	return mapErr(ctx, "record entity version", err)
}

// forgetEntityHistory removes the versions of the entity id and of the
// entities merged into it: a delete takes its names with it.
func (t *graphTx) forgetEntityHistory(ctx context.Context, n engram.Namespace, id string) error {
	_, err := t.exec(ctx, "DELETE FROM entity_versions WHERE org = ?1 AND project = ?2 AND (entity_id = ?3 OR into_id = ?3)", n.Org, n.Project, id)
	return mapErr(ctx, "forget entity history", err)
}

// pruneEntityHistory removes the versions of a tenant's user whose entity
// and whose merge target are both gone.
func (t *base) pruneEntityHistory(ctx context.Context, org, project, user string) error {
	_, err := t.exec(ctx, `DELETE FROM entity_versions WHERE org = ?1 AND project = ?2 AND user_id = ?3
		AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.org = ?1 AND e.project = ?2 AND e.id = entity_versions.entity_id)
		AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.org = ?1 AND e.project = ?2 AND e.id = entity_versions.into_id)`,
		org, project, user)
	return mapErr(ctx, "prune entity history", err)
}

// EntityHistory implements engram.EntityHistoryReader.
func (t *graphTx) EntityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.EntityVersion, error) {
	w, args := graphWhere("v.", s)
	q := "SELECT v.org, v.project, v.user_id, v.entity_id, v.version, v.op, v.related, v.entity, v.actor, v.at FROM entity_versions v WHERE " +
		w + " AND v.entity_id = ? ORDER BY v.version"
	out := []engram.EntityVersion{}
	err := t.each(ctx, "entity history", q, append(args, id), func(sc scanner) error {
		var (
			v             engram.EntityVersion
			related, body sql.NullString
			at            int64
		)
		if err := sc.Scan(&v.Namespace.Org, &v.Namespace.Project, &v.Namespace.User, &v.EntityID, &v.Version, &v.Op,
			&related, &body, &v.Actor, &at); err != nil {
			return err
		}
		v.At = fromMicros(at)
		if related.Valid {
			var err error
			if v.Related, err = storeutil.DecodeStrings([]byte(related.String)); err != nil {
				return err
			}
		}
		if body.Valid {
			v.Entity = new(engram.Entity)
			if err := json.Unmarshal([]byte(body.String), v.Entity); err != nil {
				return err
			}
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

package sqlite

import (
	"context"
	"database/sql"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// Relations implements engram.GraphReader.
func (t *graphTx) Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error) {
	limit := f.Limit // made by engram.RelationLimit in front of the store
	if entityIDs != nil && len(entityIDs) == 0 {
		return nil, nil
	}
	q, args, err := relationsSQL(s, entityIDs, f, limit)
	if err != nil {
		return nil, err
	}
	var out []engram.Relation
	err = t.each(ctx, "read relations", q, args, func(sc scanner) error {
		var (
			r          engram.Relation
			va, ia, ea sql.NullInt64
			created    int64
		)
		err := sc.Scan(&r.ID, &r.Namespace.Org, &r.Namespace.Project, &r.Namespace.User, &r.Source, &r.Target, &r.Label,
			&va, &ia, &created, &ea, &r.Weight)
		r.ValidAt, r.InvalidAt, r.CreatedAt, r.ExpiredAt = timePtr(va), timePtr(ia), fromMicros(created), timePtr(ea)
		out = append(out, r)
		return err
	})
	if err != nil || len(out) == 0 || f.NoEvidence {
		return out, err
	}
	return out, t.evidence(ctx, s, out)
}

// relationsSQL builds Relations' query; its text depends only on which
// filters are set, so the shapes the engine writes with are prepared.
func relationsSQL(s engram.Scope, entityIDs []string, f engram.RelationFilter, limit int) (string, []any, error) {
	var w where
	cond, args := graphWhere("r.", s)
	w.add(cond, args...)
	if entityIDs != nil {
		j, err := stringsJSON(entityIDs)
		if err != nil {
			return "", nil, err
		}
		// The ids drive the plan through the end indexes (see
		// entitiesByKeySQL): left to itself the planner scanned every
		// relation of the tenant.
		from := func(end, cond string) string {
			return "SELECT x.id FROM json_each(?) AS j CROSS JOIN relations x WHERE x.org = ? AND x.project = ? AND x." + end + " = j.value" + cond
		}
		switch {
		case f.Within:
			w.add("r.id IN ("+from("source", " AND x.target IN (SELECT value FROM json_each(?))")+")", j, s.Org, s.Project, j)
		case f.With != "":
			w.add("r.id IN ("+from("source", " AND x.target = ?")+" UNION ALL "+from("target", " AND x.source = ?")+")",
				j, s.Org, s.Project, f.With, j, s.Org, s.Project, f.With)
		default:
			w.add("r.id IN ("+from("source", "")+" UNION ALL "+from("target", "")+")", j, s.Org, s.Project, j, s.Org, s.Project)
		}
	}
	if f.Memory != "" {
		w.add("r.id IN (SELECT ev.relation_id FROM relation_evidence ev WHERE ev.org = ? AND ev.project = ? AND ev.user_id = r.user_id AND ev.memory_id = ?)", s.Org, s.Project, f.Memory)
	}
	if f.Label != "" {
		w.add("r.label = ?", f.Label)
	}
	if !f.All {
		w.add("r.expired_at IS NULL")
	}
	q := `SELECT r.id, r.org, r.project, r.user_id, r.source, r.target, r.label, r.valid_at, r.invalid_at, r.created_at, r.expired_at,
		(SELECT coalesce(sum(ev.weight), 0) FROM relation_evidence ev WHERE ev.org = r.org AND ev.project = r.project AND ev.relation_id = r.id) AS w
		FROM relations r WHERE ` + w.String() + " ORDER BY w DESC, r.id LIMIT ?"
	return q, append(w.args, limit), nil
}

// evidence fills the Evidence of rs, read in one query.
func (t *graphTx) evidence(ctx context.Context, s engram.Scope, rs []engram.Relation) error {
	ids, add := storeutil.EvidenceRows[scanner](rs)
	j, err := stringsJSON(ids)
	if err != nil {
		return err
	}
	return t.each(ctx, "read evidence", evidenceSQL, []any{s.Org, s.Project, j}, add)
}

// PutRelation implements engram.GraphWriter.
func (t *graphTx) PutRelation(ctx context.Context, r *engram.Relation) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := r.Namespace
	// The write checks the ends and the owner itself; only when it writes
	// nothing are they read, to say which failed.
	res, err := t.exec(ctx, putRelationSQL,
		n.Org, n.Project, n.User, r.ID, r.Source, r.Target, r.Label, microsPtr(r.ValidAt), microsPtr(r.InvalidAt),
		micros(r.CreatedAt), microsPtr(r.ExpiredAt))
	if err != nil {
		return mapErr(ctx, "put relation", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put relation", err)
	} else if k == 0 {
		return t.relationRefused(ctx, r)
	}
	if _, err := t.exec(ctx, deleteEvidenceSQL, n.Org, n.Project, r.ID); err != nil {
		return mapErr(ctx, "put relation", err)
	}
	for _, ev := range r.Evidence {
		res, err := t.exec(ctx, insertEvidenceSQL,
			n.Org, n.Project, r.ID, ev.MemoryID, ev.Weight, n.User)
		if err != nil {
			return mapErr(ctx, "put relation", err)
		}
		if k, err := affected(res); err != nil {
			return mapErr(ctx, "put relation", err)
		} else if k == 0 {
			return engram.Errorf(engram.ENOTFOUND, "relation %s: evidence memory %s not found", r.ID, ev.MemoryID)
		}
	}
	return nil
}

// relationRefused says why putRelationSQL wrote nothing for r: an end
// that is not an entity of r's user (ENOTFOUND), or r's id taken by
// another user (ECONFLICT).
func (t *graphTx) relationRefused(ctx context.Context, r *engram.Relation) error {
	if err := t.relationBlocked(ctx, "put relation", r); err != nil {
		return err
	}
	return engram.Errorf(engram.ECONFLICT, "relation %s already exists", r.ID)
}

// relationBlocked checks r against what is stored: ENOTFOUND when an end
// is not an entity of r's user, ECONFLICT when r's id is another user's,
// nil when nothing stands in r's way; op names the write in a store error.
func (t *graphTx) relationBlocked(ctx context.Context, op string, r *engram.Relation) error {
	n := r.Namespace
	var (
		ends  int
		owner sql.NullString
	)
	if err := t.queryRow(ctx, relationCheckSQL,
		n.Org, n.Project, n.User, r.Source, r.Target, r.ID).Scan(&ends, &owner); err != nil {
		return mapErr(ctx, op, err)
	}
	if ends != 2 {
		return engram.Errorf(engram.ENOTFOUND, "relation %s: entity %s or %s not found", r.ID, r.Source, r.Target)
	}
	if owner.Valid && owner.String != n.User {
		return engram.Errorf(engram.ECONFLICT, "relation %s already exists", r.ID)
	}
	return nil
}

// AddEvidence implements engram.GraphWriter.
func (t *graphTx) AddEvidence(ctx context.Context, n engram.Namespace, relationID string, ev engram.Evidence) error {
	if err := t.writable(); err != nil {
		return err
	}
	res, err := t.exec(ctx, addEvidenceSQL, n.Org, n.Project, relationID, ev.MemoryID, ev.Weight, n.User)
	if err != nil {
		return mapErr(ctx, "add evidence", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "add evidence", err)
	} else if k == 0 {
		return engram.Errorf(engram.ENOTFOUND, "relation %s or memory %s not found", relationID, ev.MemoryID)
	}
	return nil
}

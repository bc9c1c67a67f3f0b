package sqlite

import (
	"context"
	"encoding/json"

	"github.com/engramhq/engram"
)

// The statements of PutRelations: each takes its rows as one JSON array,
// so that a memory's relations cost three statements, not three each.
const (
	// putRelationsSQL is putRelationSQL over rows [id, source, target,
	// label, valid_at, invalid_at, created_at, expired_at].
	putRelationsSQL = `INSERT INTO relations (org, project, user_id, id, source, target, label, valid_at, invalid_at, created_at, expired_at)
		SELECT ?1, ?2, ?3, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6, j.value ->> 7
		FROM json_each(?4) AS j
		WHERE EXISTS (SELECT 1 FROM entities WHERE org = ?1 AND project = ?2 AND id = j.value ->> 1 AND user_id = ?3)
		AND EXISTS (SELECT 1 FROM entities WHERE org = ?1 AND project = ?2 AND id = j.value ->> 2 AND user_id = ?3)
		ON CONFLICT (org, project, id) DO UPDATE SET source = excluded.source, target = excluded.target, label = excluded.label,
			valid_at = excluded.valid_at, invalid_at = excluded.invalid_at, created_at = excluded.created_at, expired_at = excluded.expired_at
		WHERE relations.user_id = excluded.user_id`
	deleteEvidencesSQL = "DELETE FROM relation_evidence WHERE org = ? AND project = ? AND relation_id IN (SELECT value FROM json_each(?))"
	// insertEvidencesSQL is insertEvidenceSQL over rows [relation_id,
	// memory_id, weight].
	insertEvidencesSQL = `INSERT INTO relation_evidence (org, project, user_id, relation_id, memory_id, weight)
		SELECT ?1, ?2, ?3, j.value ->> 0, j.value ->> 1, j.value ->> 2 FROM json_each(?4) AS j
		WHERE EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND id = j.value ->> 1 AND user_id = ?3)
		ON CONFLICT (org, project, relation_id, memory_id) DO UPDATE SET weight = excluded.weight`
)

// PutRelations implements engram.RelationsWriter: the relations in one
// statement, their old evidence removed in a second and their evidence
// written in a third. Relations of several namespaces are put one by one.
func (t *graphTx) PutRelations(ctx context.Context, rs []*engram.Relation) error {
	if err := t.writable(); err != nil {
		return err
	}
	if len(rs) == 0 {
		return nil
	}
	n := rs[0].Namespace
	for _, r := range rs {
		if r.Namespace != n {
			return t.putEach(ctx, rs)
		}
	}
	rows, ids, evs := relationRows(rs)
	res, err := t.exec(ctx, putRelationsSQL, n.Org, n.Project, n.User, rows)
	if err != nil {
		return mapErr(ctx, "put relations", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put relations", err)
	} else if k != len(rs) {
		return t.relationsRefused(ctx, rs)
	}
	if _, err := t.exec(ctx, deleteEvidencesSQL, n.Org, n.Project, ids); err != nil {
		return mapErr(ctx, "put relations", err)
	}
	res, err = t.exec(ctx, insertEvidencesSQL, n.Org, n.Project, n.User, evs)
	if err != nil {
		return mapErr(ctx, "put relations", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put relations", err)
	} else if k != evidenceCount(rs) {
		return engram.Errorf(engram.ENOTFOUND, "relations: an evidence memory was not found")
	}
	return nil
}

// putEach puts rs one by one.
func (t *graphTx) putEach(ctx context.Context, rs []*engram.Relation) error {
	for _, r := range rs {
		if err := t.PutRelation(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// relationRows returns rs as the JSON rows of putRelationsSQL, their ids
// as a JSON array, and their evidence as the rows of insertEvidencesSQL.
func relationRows(rs []*engram.Relation) (rows, ids, evs string) {
	rr := make([][]any, len(rs))
	is := make([]string, len(rs))
	var es [][]any
	for i, r := range rs {
		rr[i] = []any{r.ID, r.Source, r.Target, r.Label, microsPtr(r.ValidAt), microsPtr(r.InvalidAt), micros(r.CreatedAt), microsPtr(r.ExpiredAt)}
		is[i] = r.ID
		for _, ev := range r.Evidence {
			es = append(es, []any{r.ID, ev.MemoryID, ev.Weight})
		}
	}
	return mustJSON(rr), mustJSON(is), mustJSON(es)
}

// evidenceCount is the rows the evidence of rs makes: a memory listed
// twice for one relation is one row, written twice.
func evidenceCount(rs []*engram.Relation) int {
	n := 0
	for _, r := range rs {
		n += len(r.Evidence)
	}
	return n
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, numbers and nil only
	}
	return string(b)
}

// relationsRefused says why putRelationsSQL skipped one of rs: the first
// whose ends are not both entities of its user (ENOTFOUND) or whose id is
// another user's (ECONFLICT).
func (t *graphTx) relationsRefused(ctx context.Context, rs []*engram.Relation) error {
	for _, r := range rs {
		if err := t.relationBlocked(ctx, "put relations", r); err != nil {
			return err
		}
	}
	return engram.Errorf(engram.ECONFLICT, "relations: one was not written")
}

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// graphWhere returns the condition that admits the graph rows (columns
// org, project, user_id prefixed with p) of s's tenant and user, and the
// project's own with s.IncludeShared.
func graphWhere(p string, s engram.Scope) (string, []any) {
	if s.IncludeShared && s.User != "" {
		return p + "org = ? AND " + p + "project = ? AND " + p + "user_id IN (?, '')", []any{s.Org, s.Project, s.User}
	}
	return p + "org = ? AND " + p + "project = ? AND " + p + "user_id = ?", []any{s.Org, s.Project, s.User}
}

const entityCols = `e.id, e.org, e.project, e.user_id, e.name, e.norm, e.type, e.aliases, e.summary, e.status,
	e.created_at, e.updated_at,
	(SELECT count(*) FROM entity_mentions em WHERE em.org = e.org AND em.project = e.project AND em.entity_id = e.id)`

func scanEntity(sc scanner) (engram.Entity, error) {
	var (
		e        engram.Entity
		aliases  sql.NullString
		status   string
		cre, upd int64
	)
	err := sc.Scan(&e.ID, &e.Namespace.Org, &e.Namespace.Project, &e.Namespace.User, &e.Name, &e.Norm, &e.Type,
		&aliases, &e.Summary, &status, &cre, &upd, &e.Mentions)
	if err != nil {
		return e, err
	}
	if aliases.Valid {
		if e.Aliases, err = storeutil.DecodeStrings([]byte(aliases.String)); err != nil {
			return e, err
		}
	}
	e.Status, e.CreatedAt, e.UpdatedAt = engram.EntityStatus(status), fromMicros(cre), fromMicros(upd)
	return e, nil
}

const evidenceSQL = `SELECT relation_id, memory_id, weight FROM relation_evidence
	WHERE org = ? AND project = ? AND relation_id IN (SELECT value FROM json_each(?)) ORDER BY relation_id, memory_id`

// The graph's fixed statements.
const (
	putEntitySQL = `INSERT INTO entities (org, project, user_id, id, name, norm, type, aliases, summary, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org, project, id) DO UPDATE SET name = excluded.name, norm = excluded.norm, type = excluded.type,
			aliases = excluded.aliases, summary = excluded.summary, status = excluded.status,
			created_at = excluded.created_at, updated_at = excluded.updated_at
		WHERE entities.user_id = excluded.user_id`
	deleteKeysSQL = "DELETE FROM entity_keys WHERE org = ? AND project = ? AND entity_id = ?"
	// insertKeysSQL inserts an entity's keys, given as a JSON array of
	// [kind, key] pairs, in one statement.
	insertKeysSQL = `INSERT OR IGNORE INTO entity_keys (org, project, user_id, kind, key, entity_id)
		SELECT ?1, ?2, ?3, j.value ->> 0, j.value ->> 1, ?4 FROM json_each(?5) AS j`
	putMentionSQL = `INSERT INTO entity_mentions (org, project, user_id, entity_id, memory_id, at)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6
		WHERE EXISTS (SELECT 1 FROM entities WHERE org = ?1 AND project = ?2 AND id = ?4 AND user_id = ?3)
		AND EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND id = ?5 AND user_id = ?3)
		ON CONFLICT (org, project, entity_id, memory_id) DO UPDATE SET at = excluded.at`
	deleteMentionSQL = "DELETE FROM entity_mentions WHERE org = ? AND project = ? AND user_id = ? AND entity_id = ? AND memory_id = ?"
	// relationCheckSQL counts a relation's ends among the user's entities
	// and reads who owns its id, if anyone: one statement for both.
	relationCheckSQL = `SELECT (SELECT count(*) FROM entities WHERE org = ?1 AND project = ?2 AND id = ?4 AND user_id = ?3)
			+ (SELECT count(*) FROM entities WHERE org = ?1 AND project = ?2 AND id = ?5 AND user_id = ?3),
		(SELECT user_id FROM relations WHERE org = ?1 AND project = ?2 AND id = ?6)`
	// putRelationSQL writes a relation whose ends are both entities of its
	// user, over one of the same user's only. The ends are looked up by id:
	// "user_id = ? AND id IN (…)" made SQLite walk every entity of the
	// user in entities_by_norm, so that each new relation cost grew with
	// the graph.
	putRelationSQL = `INSERT INTO relations (org, project, user_id, id, source, target, label, valid_at, invalid_at, created_at, expired_at)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11
		WHERE EXISTS (SELECT 1 FROM entities WHERE org = ?1 AND project = ?2 AND id = ?5 AND user_id = ?3)
		AND EXISTS (SELECT 1 FROM entities WHERE org = ?1 AND project = ?2 AND id = ?6 AND user_id = ?3)
		ON CONFLICT (org, project, id) DO UPDATE SET source = excluded.source, target = excluded.target, label = excluded.label,
			valid_at = excluded.valid_at, invalid_at = excluded.invalid_at, created_at = excluded.created_at, expired_at = excluded.expired_at
		WHERE relations.user_id = excluded.user_id`
	deleteEvidenceSQL = "DELETE FROM relation_evidence WHERE org = ? AND project = ? AND relation_id = ?"
	insertEvidenceSQL = `INSERT INTO relation_evidence (org, project, user_id, relation_id, memory_id, weight)
			SELECT ?1, ?2, ?6, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND id = ?4 AND user_id = ?6)
			ON CONFLICT (org, project, relation_id, memory_id) DO UPDATE SET weight = excluded.weight`
)

// graphStatements are the graph's queries that the engine runs with every
// write of a memory, prepared at Open: the owner's scope (no shared
// records) in the shapes the engine uses.
func graphStatements() []string {
	s := engram.Scope{Org: "o", Project: "p", User: "u"}
	byName, _ := entitiesByKeySQL(s, "n", nil, 1)
	byToken, _ := entitiesByKeySQL(s, "t", nil, 1)
	mentions, _ := mentionsSQL(s, "memory_id", nil, 0)
	pair, _, _ := relationsSQL(s, []string{"x"}, engram.RelationFilter{With: "x", Label: "l"}, 1)
	ofMemory, _, _ := relationsSQL(s, nil, engram.RelationFilter{Memory: "x", Label: "l"}, 1)
	within, _, _ := relationsSQL(s, []string{"x"}, engram.RelationFilter{Within: true, Label: "l", NoEvidence: true}, 1)
	return []string{byName, byToken, mentions, pair, ofMemory, within, evidenceSQL, oldEntitySQL, insertEntityVersionSQL, putEntitySQL, deleteKeysSQL,
		insertKeysSQL, putMentionSQL, deleteMentionSQL, putRelationSQL, relationCheckSQL,
		deleteEvidenceSQL, insertEvidenceSQL, addEvidenceSQL, putRelationsSQL, deleteEvidencesSQL, insertEvidencesSQL}
}

// GetEntity implements engram.GraphReader.
func (t *graphTx) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.Entity, error) {
	w, args := graphWhere("e.", s)
	e, err := scanEntity(t.queryRow(ctx, "SELECT "+entityCols+" FROM entities e WHERE "+w+" AND e.id = ?", append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "entity %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get entity", err)
	}
	return &e, nil
}

// ListEntities implements engram.GraphReader.
func (t *graphTx) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error) {
	limit := f.Limit // made by storecheck.EntityLimit in front of the store
	var w where
	cond, args := graphWhere("e.", s)
	w.add(cond, args...)
	if f.Type != "" {
		w.add("e.type = ?", f.Type)
	}
	if p := engram.NormalizeName(f.Prefix); p != "" {
		w.add("substr(e.norm, 1, ?) = ?", len(p), p) // byte length: norm is compared as bytes
	}
	if f.Cursor != "" {
		norm, id, err := storeutil.EntityAfter(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("(e.norm > ? OR (e.norm = ? AND e.id > ?))", norm, norm, id)
	}
	out, err := collect(ctx, t.base, "list entities", "SELECT "+entityCols+" FROM entities e WHERE "+w.String()+
		" ORDER BY e.norm, e.id LIMIT ?", append(w.args, limit+1), scanEntity)
	return storeutil.EntityPage(out, limit, err)
}

// EntitiesByKey implements storecheck.GraphLookups.
func (t *graphTx) EntitiesByKey(ctx context.Context, s engram.Scope, kind string, keys []string, limit int) ([]engram.Entity, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	j, err := stringsJSON(keys)
	if err != nil {
		return nil, err
	}
	q, args := entitiesByKeySQL(s, kind, j, limit)
	var out []engram.Entity
	err = t.each(ctx, "find entities", q, args, func(sc scanner) error {
		e, err := scanEntity(sc)
		out = append(out, e)
		return err
	})
	return out, err
}

// entityColsBare is entityCols without the mention count.
const entityColsBare = `e.id, e.org, e.project, e.user_id, e.name, e.norm, e.type, e.aliases, e.summary, e.status,
	e.created_at, e.updated_at`

func entitiesByKeySQL(s engram.Scope, kind string, keysJSON any, limit int) (string, []any) {
	kw, kargs := graphWhere("k.", s)
	count := `(SELECT count(*) FROM entity_mentions em WHERE em.org = page.org AND em.project = page.project AND em.entity_id = page.id)`
	if kind == "t" {
		count = `(SELECT count(*) FROM (SELECT 1 FROM entity_mentions em WHERE em.org = page.org AND em.project = page.project AND em.entity_id = page.id LIMIT 100))`
	}
	// The keys drive the plan (CROSS JOIN fixes SQLite's join order): left
	// to itself the planner walked every entity of the user in name order
	// and tested each against the keys, so that every write's resolution
	// cost grew with the graph. Mentions are counted for the page only.
	q := `SELECT page.*, ` + count + ` FROM (
		SELECT ` + entityColsBare + ` FROM (
			SELECT DISTINCT k.org, k.project, k.entity_id FROM json_each(?) AS j CROSS JOIN entity_keys k
			WHERE ` + kw + ` AND k.kind = ? AND k.key = j.value) AS hit
		CROSS JOIN entities e ON e.org = hit.org AND e.project = hit.project AND e.id = hit.entity_id
		ORDER BY e.norm, e.id LIMIT ?) AS page ORDER BY page.norm, page.id`
	return q, append(append([]any{keysJSON}, kargs...), kind, limit)
}

// PutEntity implements engram.GraphWriter.
func (t *graphTx) PutEntity(ctx context.Context, e *engram.Entity) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := e.Namespace
	old, err := t.oldEntity(ctx, n, e.ID)
	switch {
	case err != nil:
		return mapErr(ctx, "put entity", err)
	case old != nil && old.Namespace.User != n.User:
		return engram.Errorf(engram.ECONFLICT, "entity %s already exists", e.ID)
	}
	aliases, err := stringsJSON(e.Aliases)
	if err != nil {
		return err
	}
	res, err := t.exec(ctx, putEntitySQL,
		n.Org, n.Project, n.User, e.ID, e.Name, e.Norm, e.Type, aliases, e.Summary, string(e.Status),
		micros(e.CreatedAt), micros(e.UpdatedAt))
	if err != nil {
		return mapErr(ctx, "put entity", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put entity", err)
	} else if k == 0 { // the id is another user's
		return engram.Errorf(engram.ECONFLICT, "entity %s already exists", e.ID)
	}
	if err := t.rekey(ctx, n, e, old); err != nil {
		return err
	}
	return t.recordEntityVersion(ctx, n, e.ID, engram.EntityChangeOf(ctx, old, e), e, e.UpdatedAt)
}

// rekey makes e's keys what its names give, replacing old's (nil for a
// new entity, whose keys went with any entity of its id): the keys are
// deleted only when old had one e lacks, and written only when e has one
// old lacked, so resolution's common writes (a new entity, an added
// alias, a type) cost one statement or none.
func (t *graphTx) rekey(ctx context.Context, n engram.Namespace, e, old *engram.Entity) error {
	want := entityKeys(e)
	var had [][2]string
	if old != nil {
		had = entityKeys(old)
	}
	stale := slices.ContainsFunc(had, func(k [2]string) bool { return !slices.Contains(want, k) })
	if stale {
		if _, err := t.exec(ctx, deleteKeysSQL, n.Org, n.Project, e.ID); err != nil {
			return mapErr(ctx, "put entity", err)
		}
	}
	if !stale && !slices.ContainsFunc(want, func(k [2]string) bool { return !slices.Contains(had, k) }) {
		return nil
	}
	keys, err := json.Marshal(want)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, insertKeysSQL, n.Org, n.Project, n.User, e.ID, string(keys))
	return mapErr(ctx, "put entity", err)
}

// entityKeys returns the (kind, key) pairs e is found under: "n" for each
// normalised name, "t" for each of their words.
func entityKeys(e *engram.Entity) [][2]string {
	var out [][2]string
	for _, k := range e.Keys() {
		out = append(out, [2]string{"n", k})
		for _, w := range engram.NameTokens(k) {
			out = append(out, [2]string{"t", w})
		}
	}
	return out
}

// DeleteEntity implements engram.GraphWriter.
func (t *graphTx) DeleteEntity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	w, args := graphWhere("e.", engram.ScopeOf(n))
	snap, err := scanEntity(t.queryRow(ctx, "SELECT "+entityCols+" FROM entities e WHERE "+w+" AND e.id = ?", append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		return mapErr(ctx, "delete entity", err)
	}
	if _, err := t.exec(ctx, "DELETE FROM entities WHERE org = ? AND project = ? AND user_id = ? AND id = ?", n.Org, n.Project, n.User, id); err != nil {
		return mapErr(ctx, "delete entity", err)
	}
	if err := t.pruneCommunities(ctx, n.Org, n.Project, n.User); err != nil {
		return err
	}
	return storeutil.RecordEntityDeletion(ctx, &snap, func() error { return t.forgetEntityHistory(ctx, n, id) },
		func(c engram.EntityChange, snap *engram.Entity, at time.Time) error {
			return t.recordEntityVersion(ctx, n, id, c, snap, at)
		})
}

// pruneGraph removes the relations of a tenant's user left without
// evidence and the entities left without mentions: what a purge of
// memories orphaned. Names are personal data; none may outlive the
// memories they came from.
func (t *base) pruneGraph(ctx context.Context, org, project, user string) error {
	if _, err := t.exec(ctx, `DELETE FROM relations WHERE org = ?1 AND project = ?2 AND user_id = ?3
		AND NOT EXISTS (SELECT 1 FROM relation_evidence ev WHERE ev.org = ?1 AND ev.project = ?2 AND ev.relation_id = relations.id)`,
		org, project, user); err != nil {
		return mapErr(ctx, "prune graph", err)
	}
	if _, err := t.exec(ctx, `DELETE FROM entities WHERE org = ?1 AND project = ?2 AND user_id = ?3
		AND NOT EXISTS (SELECT 1 FROM entity_mentions em WHERE em.org = ?1 AND em.project = ?2 AND em.entity_id = entities.id)`,
		org, project, user); err != nil {
		return mapErr(ctx, "prune graph", err)
	}
	if err := t.pruneEntityHistory(ctx, org, project, user); err != nil {
		return err
	}
	return t.pruneCommunities(ctx, org, project, user)
}

const addEvidenceSQL = `INSERT INTO relation_evidence (org, project, user_id, relation_id, memory_id, weight)
	SELECT ?1, ?2, ?6, ?3, ?4, ?5
	WHERE EXISTS (SELECT 1 FROM relations WHERE org = ?1 AND project = ?2 AND id = ?3 AND user_id = ?6)
	AND EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND id = ?4 AND user_id = ?6)
	ON CONFLICT (org, project, relation_id, memory_id) DO UPDATE SET weight = excluded.weight`

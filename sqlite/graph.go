package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

var (
	_ engram.GraphReader = (*tx)(nil)
	_ engram.GraphWriter = (*tx)(nil)
)

// entityCursorKind marks the cursors of ListEntities.
const entityCursorKind = 'n'

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
	insertEvidenceSQL = `INSERT INTO relation_evidence (org, project, relation_id, memory_id, weight)
			SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND id = ?4 AND user_id = ?6)
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

// checkIDs refuses a malformed id among ids, naming what they are.
func checkIDs(what string, ids []string) error {
	for _, id := range ids {
		if !engram.ValidID(id) {
			return invalidID(what, id)
		}
	}
	return nil
}

// GetEntity implements engram.GraphReader.
func (t *tx) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.Entity, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, invalidID("entity", id)
	}
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
func (t *tx) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	limit, err := entityLimit(f.Limit)
	if err != nil {
		return nil, "", err
	}
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
		k, err := storeutil.DecodeCursor(entityCursorKind, f.Cursor)
		norm, id, ok := strings.Cut(k, "\x00")
		if err != nil || !ok || !engram.ValidID(id) {
			return nil, "", storeutil.ErrBadCursor()
		}
		w.add("(e.norm > ? OR (e.norm = ? AND e.id > ?))", norm, norm, id)
	}
	var out []engram.Entity
	err = t.each(ctx, "list entities", "SELECT "+entityCols+" FROM entities e WHERE "+w.String()+
		" ORDER BY e.norm, e.id LIMIT ?", append(w.args, limit+1), func(sc scanner) error {
		e, err := scanEntity(sc)
		out = append(out, e)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = storeutil.EncodeCursor(entityCursorKind, last.Norm+"\x00"+last.ID)
	}
	return out, next, nil
}

// entityLimit returns the page size f.Limit asks for; EINVALID outside
// 0..MaxEntityLimit.
func entityLimit(n int) (int, error) {
	switch {
	case n == 0:
		return engram.DefaultEntityLimit, nil
	case n < 0 || n > engram.MaxEntityLimit:
		return 0, engram.Errorf(engram.EINVALID, "limit %d is outside 1..%d", n, engram.MaxEntityLimit)
	}
	return n, nil
}

// FindEntities implements engram.GraphReader.
func (t *tx) FindEntities(ctx context.Context, s engram.Scope, keys []string) ([]engram.Entity, error) {
	return t.entitiesByKey(ctx, s, "n", keys, engram.MaxEntityLimit)
}

// EntitiesByToken implements engram.GraphReader.
func (t *tx) EntitiesByToken(ctx context.Context, s engram.Scope, tokens []string, limit int) ([]engram.Entity, error) {
	if limit < 1 || limit > engram.MaxEntityLimit {
		return nil, engram.Errorf(engram.EINVALID, "limit %d is outside 1..%d", limit, engram.MaxEntityLimit)
	}
	return t.entitiesByKey(ctx, s, "t", tokens, limit)
}

func (t *tx) entitiesByKey(ctx context.Context, s engram.Scope, kind string, keys []string, limit int) ([]engram.Entity, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
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

// EntityMentions implements engram.GraphReader.
func (t *tx) EntityMentions(ctx context.Context, s engram.Scope, entityIDs []string, limit int) ([]engram.Mention, error) {
	return t.mentions(ctx, s, "entity_id", entityIDs, limit)
}

// MemoryMentions implements engram.GraphReader.
func (t *tx) MemoryMentions(ctx context.Context, s engram.Scope, memoryIDs []string) ([]engram.Mention, error) {
	return t.mentions(ctx, s, "memory_id", memoryIDs, 0)
}

func (t *tx) mentions(ctx context.Context, s engram.Scope, col string, ids []string, limit int) ([]engram.Mention, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkIDs(strings.TrimSuffix(col, "_id"), ids); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	j, err := stringsJSON(ids)
	if err != nil {
		return nil, err
	}
	q, args := mentionsSQL(s, col, j, limit)
	var out []engram.Mention
	err = t.each(ctx, "read mentions", q, args, func(sc scanner) error {
		var m engram.Mention
		var at int64
		err := sc.Scan(&m.EntityID, &m.MemoryID, &m.Namespace.Org, &m.Namespace.Project, &m.Namespace.User, &at)
		m.At = fromMicros(at)
		out = append(out, m)
		return err
	})
	return out, err
}

func mentionsSQL(s engram.Scope, col string, idsJSON any, limit int) (string, []any) {
	w, args := graphWhere("m.", s)
	// The ids drive the plan (see entitiesByKeySQL). By memory, the index
	// must be named: SQLite otherwise judges the lookups from a secondary
	// index of a WITHOUT ROWID table dearer than scanning the tenant.
	hint := ""
	if col == "memory_id" {
		hint = " INDEXED BY entity_mentions_by_memory"
	}
	q := "SELECT m.entity_id, m.memory_id, m.org, m.project, m.user_id, m.at FROM json_each(?) AS j CROSS JOIN entity_mentions m" + hint + " WHERE " + w +
		" AND m." + col + " = j.value ORDER BY m.at DESC, m.memory_id DESC, m.entity_id"
	args = append([]any{idsJSON}, args...)
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	return q, args
}

// Relations implements engram.GraphReader.
func (t *tx) Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkIDs("entity", entityIDs); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.RelationLimit(f.Limit)
	if err != nil {
		return nil, err
	}
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
		w.add("r.id IN (SELECT ev.relation_id FROM relation_evidence ev WHERE ev.org = ? AND ev.project = ? AND ev.memory_id = ?)", s.Org, s.Project, f.Memory)
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
func (t *tx) evidence(ctx context.Context, s engram.Scope, rs []engram.Relation) error {
	ids := make([]string, len(rs))
	at := make(map[string]int, len(rs))
	for i := range rs {
		ids[i], at[rs[i].ID] = rs[i].ID, i
		rs[i].Evidence = []engram.Evidence{}
	}
	j, err := stringsJSON(ids)
	if err != nil {
		return err
	}
	return t.each(ctx, "read evidence", evidenceSQL, []any{s.Org, s.Project, j}, func(sc scanner) error {
		var rid string
		var ev engram.Evidence
		if err := sc.Scan(&rid, &ev.MemoryID, &ev.Weight); err != nil {
			return err
		}
		rs[at[rid]].Evidence = append(rs[at[rid]].Evidence, ev)
		return nil
	})
}

// PutEntity implements engram.GraphWriter.
func (t *tx) PutEntity(ctx context.Context, e *engram.Entity) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
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
func (t *tx) rekey(ctx context.Context, n engram.Namespace, e, old *engram.Entity) error {
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
func (t *tx) DeleteEntity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := n.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(id) {
		return invalidID("entity", id)
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
	c := engram.DeleteChangeOf(ctx)
	at := c.At
	if at.IsZero() {
		at = time.Now()
	}
	if c.Op != engram.EntityMerged {
		if err := t.forgetEntityHistory(ctx, n, id); err != nil {
			return err
		}
		return t.recordEntityVersion(ctx, n, id, c, nil, at)
	}
	return t.recordEntityVersion(ctx, n, id, c, &snap, at)
}

// PutMention implements engram.GraphWriter.
func (t *tx) PutMention(ctx context.Context, m engram.Mention) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := m.Namespace
	if err := n.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(m.EntityID) {
		return invalidID("entity", m.EntityID)
	}
	if !engram.ValidID(m.MemoryID) {
		return invalidID("memory", m.MemoryID)
	}
	res, err := t.exec(ctx, putMentionSQL,
		n.Org, n.Project, n.User, m.EntityID, m.MemoryID, micros(m.At))
	if err != nil {
		return mapErr(ctx, "put mention", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put mention", err)
	} else if k == 0 {
		return engram.Errorf(engram.ENOTFOUND, "entity %s or memory %s not found", m.EntityID, m.MemoryID)
	}
	return nil
}

// DeleteMention implements engram.GraphWriter.
func (t *tx) DeleteMention(ctx context.Context, n engram.Namespace, entityID, memoryID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := n.Validate(); err != nil {
		return err
	}
	if err := checkIDs("entity", []string{entityID}); err != nil {
		return err
	}
	if err := checkIDs("memory", []string{memoryID}); err != nil {
		return err
	}
	_, err := t.exec(ctx, deleteMentionSQL,
		n.Org, n.Project, n.User, entityID, memoryID)
	return mapErr(ctx, "delete mention", err)
}

// PutRelation implements engram.GraphWriter.
func (t *tx) PutRelation(ctx context.Context, r *engram.Relation) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
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
func (t *tx) relationRefused(ctx context.Context, r *engram.Relation) error {
	n := r.Namespace
	var (
		ends  int
		owner sql.NullString
	)
	if err := t.queryRow(ctx, relationCheckSQL,
		n.Org, n.Project, n.User, r.Source, r.Target, r.ID).Scan(&ends, &owner); err != nil {
		return mapErr(ctx, "put relation", err)
	}
	if ends != 2 {
		return engram.Errorf(engram.ENOTFOUND, "relation %s: entity %s or %s not found", r.ID, r.Source, r.Target)
	}
	return engram.Errorf(engram.ECONFLICT, "relation %s already exists", r.ID)
}

// pruneGraph removes the relations of a tenant's user left without
// evidence and the entities left without mentions: what a purge of
// memories orphaned. Names are personal data; none may outlive the
// memories they came from.
func (t *tx) pruneGraph(ctx context.Context, org, project, user string) error {
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

// AddEvidence implements engram.GraphWriter.
func (t *tx) AddEvidence(ctx context.Context, n engram.Namespace, relationID string, ev engram.Evidence) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := checkEvidence(n, relationID, ev); err != nil {
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

const addEvidenceSQL = `INSERT INTO relation_evidence (org, project, relation_id, memory_id, weight)
	SELECT ?1, ?2, ?3, ?4, ?5
	WHERE EXISTS (SELECT 1 FROM relations WHERE org = ?1 AND project = ?2 AND id = ?3 AND user_id = ?6)
	AND EXISTS (SELECT 1 FROM memories WHERE org = ?1 AND project = ?2 AND id = ?4 AND user_id = ?6)
	ON CONFLICT (org, project, relation_id, memory_id) DO UPDATE SET weight = excluded.weight`

// checkEvidence refuses a bad namespace, relation id or evidence.
func checkEvidence(n engram.Namespace, relationID string, ev engram.Evidence) error {
	if err := n.Validate(); err != nil {
		return err
	}
	if err := checkIDs("relation", []string{relationID}); err != nil {
		return err
	}
	if err := checkIDs("memory", []string{ev.MemoryID}); err != nil {
		return err
	}
	if ev.Weight <= 0 || ev.Weight > 1 {
		return engram.Errorf(engram.EINVALID, "evidence weight %v is outside (0, 1]", ev.Weight)
	}
	return nil
}

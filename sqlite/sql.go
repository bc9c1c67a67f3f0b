package sqlite

import (
	"database/sql"
	"fmt"
	"strconv"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// SQL shared by the transaction methods. Statements whose text does not
// depend on the request are prepared once per connection pool at Open
// (writeStatements, readStatements); the rest are built per call.

const (
	insertEpisodeSQL = `INSERT INTO episodes (org, project, user_id, agent, session, id, role, speaker,
		content, modality, occurred_at, received_at, metadata, media)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	deleteEpisodeSQL = `DELETE FROM episodes WHERE org = ? AND project = ? AND user_id = ? AND id = ?`

	insertMemorySQL = `INSERT INTO memories (org, project, user_id, agent, session, id, kind,
		abstraction, cues, value, language, confidence, importance, status, valid_from, valid_to,
		created_at, updated_at, expired_at, expires_at, sources, superseded_by, metadata, version,
		access_count, last_accessed)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	replaceMemorySQL = `UPDATE memories SET user_id = ?, agent = ?, session = ?, kind = ?,
		abstraction = ?, cues = ?, value = ?, language = ?, confidence = ?, importance = ?,
		status = ?, valid_from = ?, valid_to = ?, created_at = ?, updated_at = ?, expired_at = ?,
		expires_at = ?, sources = ?, superseded_by = ?, metadata = ?, version = ?,
		access_count = ?, last_accessed = ?
		WHERE rid = ?`
	memoryForReplaceSQL = `SELECT rid, user_id, value, abstraction, cues, sources FROM memories
		WHERE org = ? AND project = ? AND user_id = ? AND id = ?`
	insertMemoryFTSSQL = `INSERT INTO memories_fts (rowid, value, abstraction, cues, ns) VALUES (?, ?, ?, ?, ?)`
	deleteMemoryFTSSQL = `INSERT INTO memories_fts (memories_fts, rowid, value, abstraction, cues, ns) VALUES ('delete', ?, ?, ?, ?, ?)`
	insertSourcesSQL   = `INSERT OR IGNORE INTO memory_sources (org, project, user_id, episode_id, memory_id)
		SELECT ?, ?, ?, j.value, ? FROM json_each(?) AS j`
	deleteSourcesSQL = `DELETE FROM memory_sources WHERE org = ? AND project = ? AND user_id = ? AND memory_id = ?`
	// Sources and vectors go with the memory through their foreign keys.
	deleteMemorySQL     = `DELETE FROM memories WHERE org = ? AND project = ? AND user_id = ? AND id = ? RETURNING rid, user_id, value, abstraction, cues`
	deleteVersionsSQL   = `DELETE FROM memory_versions WHERE org = ? AND project = ? AND user_id = ? AND memory_id = ?`
	scrubMemoryAuditSQL = `UPDATE audit SET detail = '' WHERE org = ? AND project = ? AND user_id = ?
		AND detail != '' AND EXISTS (SELECT 1 FROM json_each(audit.ids) AS j WHERE j.value = ?)`
	// touchSQL adds ?5 accesses to each memory listed in ?4, looked up by
	// key (a count of the list per updated row made a flush of thousands
	// of reads quadratic).
	touchSQL = `UPDATE memories SET last_accessed = ?1, access_count = access_count + ?5
		WHERE org = ?2 AND project = ?3 AND user_id = ?6 AND id IN (SELECT j.value FROM json_each(?4) AS j)`

	insertVersionSQL = `INSERT INTO memory_versions (org, project, user_id, agent, session,
		memory_id, version, op, old, new, actor, reason, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertAuditSQL = `INSERT INTO audit (org, project, user_id, agent, session, id, actor, op, ids,
		detail, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	memoryExistsSQL     = `SELECT 1 FROM memories WHERE org = ? AND project = ? AND user_id = ? AND id = ?`
	deleteEmbeddingsSQL = `DELETE FROM memory_vectors
		WHERE org = ? AND project = ? AND user_id = ? AND memory_id = ? AND embedder = ?`
	insertVectorSQL = `INSERT INTO memory_vectors (org, project, user_id, memory_id, embedder, field, dim, vec)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	deleteVectorsExceptSQL = `DELETE FROM memory_vectors WHERE embedder <> ?`

	getMetaSQL    = `SELECT value FROM meta WHERE key = ?`
	setMetaSQL    = `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	deleteMetaSQL = `DELETE FROM meta WHERE key = ?`

	// The row value comparison is answered from the UNIQUE (org, project,
	// user_id, id) index, which also gives the order.
	scanMemoriesSQL = "SELECT " + storeutil.MemoryCols + ` FROM memories m
		WHERE (m.org, m.project, m.user_id, m.id) > (?, ?, ?, ?) ORDER BY m.org, m.project, m.user_id, m.id LIMIT ?`
	// lapsedSQL reads memories_lapsing (migration 6).
	lapsedSQL = "SELECT " + storeutil.MemoryCols + ` FROM memories m
		WHERE m.status = 'active' AND m.expires_at IS NOT NULL AND m.expires_at <= ?
		ORDER BY m.expires_at, m.org, m.project, m.id LIMIT ?`
)

// bm25Expr ranks memories_fts rows; lower is better, as in FTS5. The ns
// column weighs 0: the namespace token is a filter, not relevance.
var bm25Expr = "bm25(memories_fts, " + strconv.FormatFloat(weightValue, 'f', -1, 64) + ", " +
	strconv.FormatFloat(weightAbstraction, 'f', -1, 64) + ", " +
	strconv.FormatFloat(weightCues, 'f', -1, 64) + ", 0)"

// getEpisodeSQL selects the episode of s with an id. Ids are unique per
// user, so only a scope that includes shared records can hold two: the
// user's own comes first.
func getEpisodeSQL(s engram.Scope) (string, []any) {
	w, args := scopeWhere("e.", s)
	return "SELECT " + storeutil.EpisodeCols + " FROM episodes e WHERE " + w + " AND e.id = ? ORDER BY e.user_id = '' LIMIT 1", args
}

// getMemorySQL selects the memory of s with an id. Ids are unique per
// user, so only a scope that includes shared records can hold two: the
// user's own comes first.
func getMemorySQL(s engram.Scope) (string, []any) {
	w, args := scopeWhere("m.", s)
	return "SELECT " + storeutil.MemoryCols + " FROM memories m WHERE " + w + " AND m.id = ? ORDER BY m.user_id = '' LIMIT 1", args
}

// versionsSQL selects the history of the memory of s with an id, which
// follows the scope's arguments; a scope that includes shared records may
// hold two memories' histories under the id (see storeutil.OwnVersions).
func versionsSQL(s engram.Scope) (string, []any) {
	w, args := scopeWhere("v.", s)
	return "SELECT " + storeutil.VersionCols + " FROM memory_versions v WHERE " + w +
		" AND v.memory_id = ? ORDER BY v.version", args
}

// getMemoriesSQL selects the memories of s among n ids, which follow the
// scope's arguments.
func getMemoriesSQL(s engram.Scope, n int) (string, []any) {
	w, args := scopeWhere("m.", s)
	return "SELECT " + storeutil.MemoryCols + " FROM memories m WHERE " + w + " AND m.id IN (" + placeholders(n) + ")", args
}

// scanVectorsSQL selects the vectors of the active memories of s; the
// status and the embedder follow the scope's arguments. CROSS JOIN fixes
// the join order whatever the planner estimates: memories_by_status leads
// to the scope's active memories, and the primary key of memory_vectors to
// each one's vectors. Driving from memory_vectors instead would read every
// vector of the tenant to keep those of one user.
func scanVectorsSQL(s engram.Scope) (string, []any) {
	w, args := scopeWhere("m.", s)
	return "SELECT m.id, m.org, m.project, m.user_id, m.agent, m.session, v.field, v.dim, v.vec " +
		"FROM memories m CROSS JOIN memory_vectors v " +
		"WHERE " + w + " AND m.status = ? AND v.org = m.org AND v.project = m.project AND " +
		"v.user_id = m.user_id AND v.memory_id = m.id AND v.embedder = ?", args
}

// scopeShapes returns one scope of each shape scopeWhere distinguishes, so
// the per-scope statements can be prepared ahead.
func scopeShapes() []engram.Scope {
	var out []engram.Scope
	for i := range 8 {
		s := engram.Scope{Org: "o", Project: "p", User: "u", IncludeShared: i&4 != 0}
		if i&1 != 0 {
			s.Agent = "a" // an ExactAgent scope without one has the same shape
		}
		if i&2 != 0 {
			s.Session = "s"
		}
		out = append(out, s)
	}
	return out
}

func readStatements() []string {
	var qs []string
	for _, s := range scopeShapes() {
		for _, f := range []func(engram.Scope) (string, []any){getEpisodeSQL, getMemorySQL, versionsSQL, scanVectorsSQL} {
			q, _ := f(s)
			qs = append(qs, q)
		}
	}
	return append(qs, getMetaSQL, scanMemoriesSQL, lapsedSQL, ftsTablesSQL)
}

// writeStatements are the statements prepared on the writer; those of
// memories_fts only when fts is set (it exists), since preparing a
// statement on a missing table fails.
func writeStatements(fts bool) []string {
	qs := append(append(readStatements(),
		insertEpisodeSQL, deleteEpisodeSQL,
		insertMemorySQL, replaceMemorySQL, memoryForReplaceSQL, insertSourcesSQL, deleteSourcesSQL, deleteMemorySQL, scrubMemoryAuditSQL,
		deleteVersionsSQL, touchSQL, insertVersionSQL, insertAuditSQL, memoryExistsSQL,
		deleteEmbeddingsSQL, insertVectorSQL, deleteVectorsExceptSQL, setMetaSQL, deleteMetaSQL), graphStatements()...)
	if fts {
		qs = append(qs, insertMemoryFTSSQL, deleteMemoryFTSSQL)
	}
	return qs
}

type scanner interface{ Scan(dest ...any) error }

func scanEpisode(sc scanner) (engram.Episode, error) {
	var (
		e         engram.Episode
		modality  string
		occ, rec  int64
		md, media []byte
	)
	n := &e.Namespace
	if err := sc.Scan(&e.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &e.Role, &e.Speaker,
		&e.Content, &modality, &occ, &rec, &md, &media); err != nil {
		return e, err
	}
	e.Modality = engram.Modality(modality)
	e.OccurredAt, e.ReceivedAt = fromMicros(occ), fromMicros(rec)
	return e, storeutil.DecodeEpisodeJSON(&e, md, media)
}

// scanMemory scans storeutil.MemoryCols followed by extra destinations.
func scanMemory(sc scanner, extra ...any) (engram.Memory, error) {
	var (
		m                         engram.Memory
		kind, status              string
		cues, sources, md         []byte
		created, updated          int64
		validFrom, validTo        sql.NullInt64
		expiredAt, expiresAt, acc sql.NullInt64
	)
	n := &m.Namespace
	dest := []any{&m.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &kind, &m.Abstraction,
		&cues, &m.Value, &m.Language, &m.Confidence, &m.Importance, &status, &validFrom, &validTo,
		&created, &updated, &expiredAt, &expiresAt, &sources, &m.SupersededBy,
		&md, &m.Version, &m.AccessCount, &acc}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return m, err
	}
	m.Kind, m.Status = engram.Kind(kind), engram.Status(status)
	m.ValidFrom, m.ValidTo = timePtr(validFrom), timePtr(validTo)
	m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
	m.ExpiredAt, m.ExpiresAt, m.LastAccessed = timePtr(expiredAt), timePtr(expiresAt), timePtr(acc)
	var err error
	if m.Cues, err = storeutil.DecodeStrings(cues); err != nil {
		return m, fmt.Errorf("memory %s cues: %w", m.ID, err)
	}
	if m.Sources, err = storeutil.DecodeStrings(sources); err != nil {
		return m, fmt.Errorf("memory %s sources: %w", m.ID, err)
	}
	if m.Metadata, err = storeutil.DecodeMap(md); err != nil {
		return m, fmt.Errorf("memory %s metadata: %w", m.ID, err)
	}
	return m, nil
}

func scanVersion(sc scanner) (engram.Version, error) {
	var (
		v       engram.Version
		op      string
		old, nw []byte
		at      int64
	)
	n := &v.Namespace
	if err := sc.Scan(&v.MemoryID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &v.Version,
		&op, &old, &nw, &v.Actor, &v.Reason, &at); err != nil {
		return v, err
	}
	v.Op, v.At = engram.Op(op), fromMicros(at)
	return v, storeutil.DecodeVersionStates(&v, old, nw)
}

func scanAudit(sc scanner) (engram.AuditEntry, error) {
	var (
		a   engram.AuditEntry
		ids []byte
		at  int64
	)
	n := &a.Namespace
	if err := sc.Scan(&a.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &a.Actor, &a.Op,
		&ids, &a.Detail, &at); err != nil {
		return a, err
	}
	a.At = fromMicros(at)
	var err error
	if a.IDs, err = storeutil.DecodeStrings(ids); err != nil {
		return a, fmt.Errorf("audit entry %s ids: %w", a.ID, err)
	}
	return a, nil
}

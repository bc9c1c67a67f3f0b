package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// tx implements engram.Tx over one database/sql transaction. View hands it
// out as an engram.Reader on a query_only connection.
type tx struct {
	stx      *sql.Tx
	stmts    map[string]*sql.Stmt    // prepared on the pool at Open
	cache    *stmtCache              // the pool's queries built per call
	bound    map[*sql.Stmt]*sql.Stmt // those statements bound to stx
	readOnly bool
	// detached is set in a group-commit transaction: statements run
	// without their caller's cancellation, since SQLite answers an
	// interrupted write by rolling back the whole transaction, and with it
	// the other callers' updates. A caller whose context ended fails at
	// its next statement instead.
	detached bool
}

// stmtCtx returns the context to run a statement with, or ctx's error
// when the caller of a detached transaction gave up.
func (t *tx) stmtCtx(ctx context.Context) (context.Context, error) {
	if !t.detached {
		return ctx, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// The store implements every optional capability: both on the same tx.
var (
	_ engram.Tx           = (*tx)(nil)
	_ engram.VectorReader = (*tx)(nil)
	_ engram.VectorWriter = (*tx)(nil)
	_ engram.ChangeLog    = (*tx)(nil)
	_ engram.MetaReader   = (*tx)(nil)
	_ engram.MetaWriter   = (*tx)(nil)
	_ engram.Dumper       = (*tx)(nil)
)

// stmt returns the prepared statement for q bound to this transaction, or
// nil when q is built per call.
func (t *tx) stmt(ctx context.Context, q string) *sql.Stmt {
	s, ok := t.stmts[q]
	if !ok {
		if s = t.cache.get(q); s == nil {
			return nil
		}
	}
	if b, ok := t.bound[s]; ok {
		return b
	}
	b := t.stx.StmtContext(ctx, s)
	if t.bound == nil {
		t.bound = make(map[*sql.Stmt]*sql.Stmt)
	}
	t.bound[s] = b
	return b
}

func (t *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx, err := t.stmtCtx(ctx)
	if err != nil {
		return nil, err
	}
	if s := t.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.stx.QueryContext(ctx, q, args...)
}

// queryRow does not stop for a caller that gave up: *sql.Row cannot
// carry the error, and the caller's next query or exec reports it.
func (t *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if t.detached {
		ctx = context.WithoutCancel(ctx)
	}
	if s := t.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.stx.QueryRowContext(ctx, q, args...)
}

func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx, err := t.stmtCtx(ctx)
	if err != nil {
		return nil, err
	}
	if s := t.stmt(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.stx.ExecContext(ctx, q, args...)
}

// writable guards the write methods: a Reader from View must not be
// type-asserted into writing.
func (t *tx) writable() error {
	if t.readOnly {
		return errors.New("sqlite: write in a read-only transaction")
	}
	return nil
}

// shortID keeps an echoed id from making an error message arbitrarily long.
func shortID(id string) string {
	if len(id) > 40 {
		return id[:40] + "…"
	}
	return id
}

func invalidID(what, id string) error { return storeutil.InvalidID(what, id, shortID) }

// GetEpisode returns the episode with id in s; ENOTFOUND if there is none
// in s, EINVALID for a malformed scope or id.
func (t *tx) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, invalidID("episode", id)
	}
	q, args := getEpisodeSQL(s)
	e, err := scanEpisode(t.queryRow(ctx, q, append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "episode %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get episode", err)
	}
	return &e, nil
}

// GetMemory returns the memory with id in s, in any status; ENOTFOUND if
// there is none in s, EINVALID for a malformed scope or id.
func (t *tx) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, invalidID("memory", id)
	}
	q, args := getMemorySQL(s)
	m, err := scanMemory(t.queryRow(ctx, q, append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get memory", err)
	}
	return &m, nil
}

// getMemoriesChunk is how many ids one query of GetMemories binds: far
// below SQLite's limit on variables, and large enough that a typical
// candidate list of a search takes one query.
const getMemoriesChunk = 500

// GetMemories returns the memories among ids that s contains, in any status
// and in no particular order, each once. Ids that are malformed, unknown or
// outside s are skipped; EINVALID for a bad scope.
func (t *tx) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(ids))
	want := make([]any, 0, len(ids))
	for _, id := range ids {
		if engram.ValidID(id) && !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	var out []engram.Memory
	for len(want) > 0 {
		chunk := want[:min(len(want), getMemoriesChunk)]
		want = want[len(chunk):]
		q, args := getMemoriesSQL(s, len(chunk))
		rows, err := t.query(ctx, q, append(args, chunk...)...)
		if err != nil {
			return nil, mapErr(ctx, "get memories", err)
		}
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				rows.Close()
				return nil, mapErr(ctx, "get memories", err)
			}
			out = append(out, m)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, mapErr(ctx, "get memories", err)
		}
	}
	return out, nil
}

// ListEpisodes returns a page of the episodes in s matching f, by
// (occurred_at, id); EINVALID for a bad scope, filter or cursor.
func (t *tx) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) ([]engram.Episode, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	w := &where{}
	w.addScope("e.", s)
	if err := episodeFilter(w, &f); err != nil {
		return nil, "", err
	}
	limit, _ := engram.ClampLimit(f.Limit) // checked by episodeFilter
	if f.Cursor != "" {
		occ, id, err := storeutil.DecodeEpisodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("(e.occurred_at, e.id) > (?, ?)", occ, id)
	}
	q := "SELECT " + episodeCols + " FROM episodes e WHERE " + w.String() +
		" ORDER BY e.occurred_at, e.id LIMIT ?"
	rows, err := t.query(ctx, q, append(w.args, limit+1)...)
	if err != nil {
		return nil, "", mapErr(ctx, "list episodes", err)
	}
	defer rows.Close()
	var out []engram.Episode
	for rows.Next() {
		e, err := scanEpisode(rows)
		if err != nil {
			return nil, "", mapErr(ctx, "list episodes", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", mapErr(ctx, "list episodes", err)
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = storeutil.EncodeEpisodeCursor(micros(last.OccurredAt), last.ID)
	}
	return out, next, nil
}

// ListMemories returns a page of the memories in s matching f, newest id
// first; EINVALID for a bad scope, filter or cursor.
func (t *tx) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	w := &where{}
	w.addScope("m.", s)
	if err := memoryFilter(w, &f); err != nil {
		return nil, "", err
	}
	limit, _ := engram.ClampLimit(f.Limit) // checked by memoryFilter
	if f.Cursor != "" {
		id, err := storeutil.DecodeIDCursor('m', f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("m.id < ?", id)
	}
	q := "SELECT " + memoryCols + " FROM memories m WHERE " + w.String() + " ORDER BY m.id DESC LIMIT ?"
	rows, err := t.query(ctx, q, append(w.args, limit+1)...)
	if err != nil {
		return nil, "", mapErr(ctx, "list memories", err)
	}
	defer rows.Close()
	var out []engram.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, "", mapErr(ctx, "list memories", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, "", mapErr(ctx, "list memories", err)
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = storeutil.EncodeCursor('m', out[limit-1].ID)
	}
	return out, next, nil
}

// SearchText ranks the memories in s matching f by BM25 against query, best
// first, at most limit of them (0 means engram.DefaultLimit). f.Limit and
// f.Cursor are ignored. A query without terms gives no hits and no error;
// EINVALID for a bad scope, filter or limit.
func (t *tx) SearchText(ctx context.Context, s engram.Scope, query string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	f.Limit, f.Cursor = 0, ""
	w := &where{}
	w.addScope("m.", s)
	if err := memoryFilter(w, &f); err != nil {
		return nil, err
	}
	match := scopeMatch(s, matchQuery(query))
	if match == "" {
		return nil, nil
	}
	if on, err := t.FullTextIndexed(ctx); err != nil {
		return nil, err
	} else if !on {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "the store's full-text index is off (engram fulltext on builds it)")
	}
	q := "SELECT " + memoryCols + ", " + bm25Expr + " AS r FROM memories_fts " +
		"JOIN memories m ON m.rid = memories_fts.rowid " +
		"WHERE memories_fts MATCH ? AND " + w.String() + " ORDER BY r, m.id DESC LIMIT ?"
	args := make([]any, 0, len(w.args)+2)
	args = append(append(append(args, match), w.args...), n)
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return nil, mapErr(ctx, "search", err)
	}
	defer rows.Close()
	var hits []engram.TextHit
	for rows.Next() {
		var rank float64
		m, err := scanMemory(rows, &rank)
		if err != nil {
			return nil, mapErr(ctx, "search", err)
		}
		hits = append(hits, engram.TextHit{Memory: m, Score: -rank})
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, "search", err)
	}
	return hits, nil
}

// Versions returns the history of memory id in s, oldest first; ENOTFOUND
// if s holds neither the memory nor any of its versions.
func (t *tx) Versions(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, invalidID("memory", id)
	}
	q, args := versionsSQL(s)
	rows, err := t.query(ctx, q, append(args, id)...)
	if err != nil {
		return nil, mapErr(ctx, "versions", err)
	}
	defer rows.Close()
	var out []engram.Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, mapErr(ctx, "versions", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, "versions", err)
	}
	if len(out) == 0 {
		if _, err := t.GetMemory(ctx, s, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Audit returns a page of the audit entries in s matching f, newest first;
// EINVALID for a bad scope, limit or cursor.
func (t *tx) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) ([]engram.AuditEntry, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	limit, err := engram.ClampLimit(f.Limit)
	if err != nil {
		return nil, "", err
	}
	w := &where{}
	w.addScope("a.", s)
	auditFilter(w, &f)
	if f.Cursor != "" {
		id, err := storeutil.DecodeIDCursor('a', f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("a.id < ?", id)
	}
	q := "SELECT " + auditCols + " FROM audit a WHERE " + w.String() + " ORDER BY a.id DESC LIMIT ?"
	rows, err := t.query(ctx, q, append(w.args, limit+1)...)
	if err != nil {
		return nil, "", mapErr(ctx, "audit", err)
	}
	defer rows.Close()
	var out []engram.AuditEntry
	for rows.Next() {
		a, err := scanAudit(rows)
		if err != nil {
			return nil, "", mapErr(ctx, "audit", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, "", mapErr(ctx, "audit", err)
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = storeutil.EncodeCursor('a', out[limit-1].ID)
	}
	return out, next, nil
}

// exportPageSize is how many records Export reads at a time.
const exportPageSize = 500

// Export calls fn for every record in s: episodes by (occurred_at, id),
// memories by id, versions by (memory id, version), audit entries by id,
// reading them a page at a time within the transaction. An error from fn
// stops the export and is returned as is.
func (t *tx) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return storeutil.ExportAll(ctx, t, s, exportPageSize, fn)
}

// ExportPage returns up to limit records of type kind in s after the
// cursor after, in Export's order, and the next page's cursor ("" after
// the last); EINVALID for a bad scope, kind, limit or cursor.
func (t *tx) ExportPage(ctx context.Context, s engram.Scope, kind, after string, limit int) ([]engram.Record, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if err := storeutil.CheckExportPage(kind, limit); err != nil {
		return nil, "", err
	}
	q, args, scan, err := exportPageQuery(s, kind, after)
	if err != nil {
		return nil, "", err
	}
	var out []engram.Record
	err = t.each(ctx, "export", q+" LIMIT ?", append(args, limit+1), func(sc scanner) error {
		r, err := scan(sc)
		out = append(out, r)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	out, next := storeutil.ExportNext(out, limit)
	return out, next, nil
}

// exportPageQuery returns the query of the records of kind in s after the
// cursor after, without its LIMIT, and how to scan one row into a record.
func exportPageQuery(s engram.Scope, kind, after string) (string, []any, func(scanner) (engram.Record, error), error) {
	w := &where{}
	switch kind {
	case engram.RecordEpisode:
		w.addScope("e.", s)
		if after != "" {
			occ, id, err := storeutil.DecodeEpisodeCursor(after)
			if err != nil {
				return "", nil, nil, err
			}
			w.add("(e.occurred_at, e.id) > (?, ?)", occ, id)
		}
		return "SELECT " + episodeCols + " FROM episodes e WHERE " + w.String() + " ORDER BY e.occurred_at, e.id", w.args,
			func(sc scanner) (engram.Record, error) {
				e, err := scanEpisode(sc)
				return engram.Record{Type: kind, Episode: &e}, err
			}, nil
	case engram.RecordMemory:
		w.addScope("m.", s)
		if err := afterID(w, "m.id", 'm', after); err != nil {
			return "", nil, nil, err
		}
		return "SELECT " + memoryCols + " FROM memories m WHERE " + w.String() + " ORDER BY m.id", w.args,
			func(sc scanner) (engram.Record, error) {
				m, err := scanMemory(sc)
				return engram.Record{Type: kind, Memory: &m}, err
			}, nil
	case engram.RecordVersion:
		w.addScope("v.", s)
		if after != "" {
			id, n, err := storeutil.DecodeVersionCursor(after)
			if err != nil {
				return "", nil, nil, err
			}
			w.add("(v.memory_id, v.version) > (?, ?)", id, n)
		}
		return "SELECT " + versionCols + " FROM memory_versions v WHERE " + w.String() + " ORDER BY v.memory_id, v.version", w.args,
			func(sc scanner) (engram.Record, error) {
				v, err := scanVersion(sc)
				return engram.Record{Type: kind, Version: &v}, err
			}, nil
	default: // engram.RecordAudit, as CheckExportPage made sure
		w.addScope("a.", s)
		if err := afterID(w, "a.id", 'a', after); err != nil {
			return "", nil, nil, err
		}
		return "SELECT " + auditCols + " FROM audit a WHERE " + w.String() + " ORDER BY a.id", w.args,
			func(sc scanner) (engram.Record, error) {
				a, err := scanAudit(sc)
				return engram.Record{Type: kind, Audit: &a}, err
			}, nil
	}
}

// afterID adds the condition col > the id that cursor c of the list kind
// resumes after; nothing for an empty cursor.
func afterID(w *where, col string, kind byte, c string) error {
	if c == "" {
		return nil
	}
	id, err := storeutil.DecodeIDCursor(kind, c)
	if err != nil {
		return err
	}
	w.add(col+" > ?", id)
	return nil
}

// Meta returns the store-wide value under key, or "" if there is none;
// EINVALID for an empty or overlong key.
func (t *tx) Meta(ctx context.Context, key string) (string, error) {
	if err := storeutil.CheckMetaKey(key); err != nil {
		return "", err
	}
	var v string
	err := t.queryRow(ctx, getMetaSQL, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, mapErr(ctx, "meta", err)
}

// ScanMemories returns up to limit memories of every tenant, in any status,
// ordered by (org, project, id) and strictly after the key after; the zero
// key starts at the beginning. Strings compare byte by byte. It is for
// maintenance only: it crosses tenants. EINVALID if limit is not positive.
func (t *tx) ScanMemories(ctx context.Context, after engram.MemoryKey, limit int) ([]engram.Memory, error) {
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "scan limit %d is not positive", limit)
	}
	var out []engram.Memory
	err := t.each(ctx, "scan memories", scanMemoriesSQL, []any{after.Org, after.Project, after.ID, limit},
		func(sc scanner) error {
			m, err := scanMemory(sc)
			if err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Lapsed implements engram.Expirer: up to limit active memories of every
// tenant whose expires_at is at or before at, soonest first. EINVALID if
// limit is not positive.
func (t *tx) Lapsed(ctx context.Context, at time.Time, limit int) ([]engram.Memory, error) {
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "lapsed limit %d is not positive", limit)
	}
	var out []engram.Memory
	err := t.each(ctx, "read lapsed memories", lapsedSQL, []any{micros(at), limit}, func(sc scanner) error {
		m, err := scanMemory(sc)
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// fnError marks an error returned by the caller's export function, so that
// it reaches the caller unwrapped.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// each runs q and calls emit for every row; an fnError from emit comes back
// unwrapped, anything else is mapped with op.
func (t *tx) each(ctx context.Context, op, q string, args []any, emit func(scanner) error) error {
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return mapErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := emit(rows); err != nil {
			var fe fnError
			if errors.As(err, &fe) {
				return fe.err
			}
			return mapErr(ctx, op, err)
		}
	}
	return mapErr(ctx, op, rows.Err())
}

// InsertEpisode stores e and indexes its content. EINVALID if e fails
// Validate or has no id, ECONFLICT if its tenant already has that id.
func (t *tx) InsertEpisode(ctx context.Context, e *engram.Episode) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckEpisode(e); err != nil {
		return err
	}
	md, err := mapJSON(e.Metadata)
	if err != nil {
		return err
	}
	media, err := jsonText(e.Media, len(e.Media) == 0)
	if err != nil {
		return err
	}
	n := e.Namespace
	_, err = t.exec(ctx, insertEpisodeSQL, n.Org, n.Project, n.User, n.Agent, n.Session, e.ID,
		e.Role, e.Speaker, e.Content, string(e.Modality), micros(e.OccurredAt), micros(e.ReceivedAt), md, media)
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "episode %s already exists", e.ID)
	}
	return mapErr(ctx, "insert episode", err)
}

// memoryArgs encodes the JSON columns of m.
func memoryArgs(m *engram.Memory) (cues, sources, md any, err error) {
	if cues, err = stringsJSON(m.Cues); err != nil {
		return
	}
	if sources, err = stringsJSON(m.Sources); err != nil {
		return
	}
	md, err = mapJSON(m.Metadata)
	return
}

// InsertMemory stores m, indexes its text and records its sources.
// EINVALID if m fails Validate or has no id, ECONFLICT if its tenant
// already has that id.
func (t *tx) InsertMemory(ctx context.Context, m *engram.Memory) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckMemory(m); err != nil {
		return err
	}
	cues, sources, md, err := memoryArgs(m)
	if err != nil {
		return err
	}
	n := m.Namespace
	res, err := t.exec(ctx, insertMemorySQL, n.Org, n.Project, n.User, n.Agent, n.Session, m.ID,
		string(m.Kind), m.Abstraction, cues, m.Value, m.Language, m.Confidence, m.Importance,
		string(m.Status), microsPtr(m.ValidFrom), microsPtr(m.ValidTo), micros(m.CreatedAt),
		micros(m.UpdatedAt), microsPtr(m.ExpiredAt), microsPtr(m.ExpiresAt), sources,
		m.SupersededBy, md, m.Version, m.AccessCount, microsPtr(m.LastAccessed))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "memory %s already exists", m.ID)
	} else if err != nil {
		return mapErr(ctx, "insert memory", err)
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return mapErr(ctx, "insert memory", err)
	}
	if err := t.indexMemory(ctx, rid, m); err != nil {
		return err
	}
	if sources != nil {
		if _, err := t.exec(ctx, insertSourcesSQL, n.Org, n.Project, m.ID, sources); err != nil {
			return mapErr(ctx, "insert memory sources", err)
		}
	}
	return t.logChange(ctx, n.Org, n.Project, m.ID)
}

// indexMemory adds m's row to memories_fts, when there is one.
func (t *tx) indexMemory(ctx context.Context, rid int64, m *engram.Memory) error {
	if on, err := t.FullTextIndexed(ctx); err != nil || !on {
		return err
	}
	n := m.Namespace
	if _, err := t.exec(ctx, insertMemoryFTSSQL, rid, ftsText(m.Value), ftsText(m.Abstraction), cuesText(m.Cues),
		nsToken(n.Org, n.Project, n.User)); err != nil {
		return mapErr(ctx, "index memory", err)
	}
	return nil
}

// ReplaceMemory overwrites every field of the memory with m's tenant and
// id, namespace included, and re-indexes its text when that changed.
// ENOTFOUND if the tenant has no such memory; EINVALID if m fails Validate.
func (t *tx) ReplaceMemory(ctx context.Context, m *engram.Memory) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckMemory(m); err != nil {
		return err
	}
	cues, sources, md, err := memoryArgs(m)
	if err != nil {
		return err
	}
	n := m.Namespace
	var (
		rid                       int64
		oldUser, oldValue, oldAbs string
		oldCues, oldSources       sql.NullString
	)
	err = t.queryRow(ctx, memoryForReplaceSQL, n.Org, n.Project, m.ID).Scan(&rid, &oldUser, &oldValue, &oldAbs, &oldCues, &oldSources)
	if errors.Is(err, sql.ErrNoRows) {
		return engram.Errorf(engram.ENOTFOUND, "memory %s not found", m.ID)
	} else if err != nil {
		return mapErr(ctx, "replace memory", err)
	}
	// Log under the old owner too, in case the replace moves the memory.
	if err := t.logChange(ctx, n.Org, n.Project, m.ID); err != nil {
		return err
	}
	if _, err := t.exec(ctx, replaceMemorySQL, n.User, n.Agent, n.Session, string(m.Kind),
		m.Abstraction, cues, m.Value, m.Language, m.Confidence, m.Importance, string(m.Status),
		microsPtr(m.ValidFrom), microsPtr(m.ValidTo), micros(m.CreatedAt), micros(m.UpdatedAt),
		microsPtr(m.ExpiredAt), microsPtr(m.ExpiresAt), sources, m.SupersededBy, md, m.Version,
		m.AccessCount, microsPtr(m.LastAccessed), rid); err != nil {
		return mapErr(ctx, "replace memory", err)
	}
	// Most replacements change only status or validity; leave the index be.
	// A move to another user changes the row's namespace token.
	if oldValue != m.Value || oldAbs != m.Abstraction || oldCues.String != nullString(cues) || oldUser != n.User {
		old := indexedMemory{rid: rid, org: n.Org, project: n.Project, user: oldUser, value: oldValue, abstraction: oldAbs, cues: oldCues}
		if err := t.unindexMemory(ctx, old); err != nil {
			return err
		}
		if err := t.indexMemory(ctx, rid, m); err != nil {
			return err
		}
	}
	if oldSources.String != nullString(sources) {
		if _, err := t.exec(ctx, deleteSourcesSQL, n.Org, n.Project, m.ID); err != nil {
			return mapErr(ctx, "replace memory sources", err)
		}
		if sources != nil {
			if _, err := t.exec(ctx, insertSourcesSQL, n.Org, n.Project, m.ID, sources); err != nil {
				return mapErr(ctx, "replace memory sources", err)
			}
		}
	}
	return t.logChange(ctx, n.Org, n.Project, m.ID)
}

func nullString(v any) string {
	s, _ := v.(string)
	return s
}

// InsertVersion appends v to its memory's history. EINVALID for a bad
// namespace, memory id, version number or empty op; ECONFLICT if that
// version exists.
func (t *tx) InsertVersion(ctx context.Context, v *engram.Version) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckVersion(v, shortID); err != nil {
		return err
	}
	old, err := jsonText(v.Old, v.Old == nil)
	if err != nil {
		return err
	}
	nw, err := jsonText(v.New, v.New == nil)
	if err != nil {
		return err
	}
	n := v.Namespace
	_, err = t.exec(ctx, insertVersionSQL, n.Org, n.Project, n.User, n.Agent, n.Session, v.MemoryID,
		v.Version, string(v.Op), old, nw, v.Actor, v.Reason, micros(v.At))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "version %d of memory %s already exists", v.Version, v.MemoryID)
	}
	return mapErr(ctx, "insert version", err)
}

// InsertAudit appends a to the audit log. EINVALID for a bad namespace or
// id or an empty op; ECONFLICT if the tenant has an entry with that id.
func (t *tx) InsertAudit(ctx context.Context, a *engram.AuditEntry) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckAudit(a, shortID); err != nil {
		return err
	}
	ids, err := stringsJSON(a.IDs)
	if err != nil {
		return err
	}
	n := a.Namespace
	_, err = t.exec(ctx, insertAuditSQL, n.Org, n.Project, n.User, n.Agent, n.Session, a.ID, a.Actor,
		a.Op, ids, a.Detail, micros(a.At))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "audit entry %s already exists", a.ID)
	}
	return mapErr(ctx, "insert audit", err)
}

// PurgeMemory deletes the memory with n's tenant and id, its text index
// row, sources, vectors and versions, and clears the detail of the audit
// entries of its user that name it. Nothing to delete is not an error;
// EINVALID for a bad namespace or id.
func (t *tx) PurgeMemory(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := n.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(id) {
		return invalidID("memory", id)
	}
	if err := t.logChange(ctx, n.Org, n.Project, id); err != nil {
		return err
	}
	var r indexedMemory
	err := t.queryRow(ctx, deleteMemorySQL, n.Org, n.Project, id).Scan(&r.rid, &r.user, &r.value, &r.abstraction, &r.cues)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return mapErr(ctx, "purge memory", err)
	default:
		r.org, r.project = n.Org, n.Project
		if err := t.unindexMemory(ctx, r); err != nil {
			return err
		}
		// Earlier audit entries of the memory keep that they happened, not
		// the reasons given, which may quote the text.
		if _, err := t.exec(ctx, scrubMemoryAuditSQL, n.Org, n.Project, r.user, id); err != nil {
			return mapErr(ctx, "purge memory", err)
		}
		if err := t.pruneGraph(ctx, n.Org, n.Project, r.user); err != nil {
			return err
		}
	}
	if _, err := t.exec(ctx, deleteVersionsSQL, n.Org, n.Project, id); err != nil {
		return mapErr(ctx, "purge memory", err)
	}
	return nil
}

// PurgeEpisode deletes the episode with n's tenant and id and its text
// index row. Nothing to delete is not an error; EINVALID for a bad
// namespace or id.
func (t *tx) PurgeEpisode(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := n.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(id) {
		return invalidID("episode", id)
	}
	_, err := t.exec(ctx, deleteEpisodeSQL, n.Org, n.Project, id)
	return mapErr(ctx, "purge episode", err)
}

// PurgeScope deletes every episode, memory, version, text index row, source
// and vector in s, ignoring s.IncludeShared (it never widens a write), and
// keeps the audit log as tombstones (detail cleared). EINVALID if s names no user, agent or session.
func (t *tx) PurgeScope(ctx context.Context, s engram.Scope) (engram.PurgeCounts, error) {
	var c engram.PurgeCounts
	if err := t.writable(); err != nil {
		return c, err
	}
	if err := s.Validate(); err != nil {
		return c, err
	}
	if s.User == "" && s.Agent == "" && s.Session == "" {
		return c, engram.Errorf(engram.EINVALID, "purge: the scope names no user, agent or session; a whole project cannot be purged")
	}
	s.IncludeShared = false

	mw, margs := scopeWhere("m.", s)
	vw, vargs := scopeWhere("memory_versions.", s)
	dmw, dmargs := scopeWhere("memories.", s)
	dew, deargs := scopeWhere("episodes.", s)

	if err := t.logScopeChanges(ctx, s); err != nil {
		return c, err
	}
	// Index rows first, while the rows that hold their text still exist.
	if err := t.unindexScope(ctx, mw, margs); err != nil {
		return c, err
	}
	// Versions in the scope, and any left under another namespace by a
	// memory that moved into it.
	// The leading tenant terms keep the OR from scanning other tenants.
	res, err := t.exec(ctx, "DELETE FROM memory_versions WHERE memory_versions.org = ? AND memory_versions.project = ? AND (("+
		vw+") OR memory_versions.memory_id IN (SELECT m.id FROM memories m WHERE "+mw+"))",
		append(append([]any{s.Org, s.Project}, vargs...), margs...)...)
	if err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	if c.Versions, err = affected(res); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	if res, err = t.exec(ctx, "DELETE FROM memories WHERE "+dmw, dmargs...); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	if c.Memories, err = affected(res); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	if res, err = t.exec(ctx, "DELETE FROM episodes WHERE "+dew, deargs...); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	if c.Episodes, err = affected(res); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	if c.Resources, err = t.purgeScopeResources(ctx, s); err != nil {
		return c, err
	}
	if err := t.purgeIdentities(ctx, s); err != nil {
		return c, err
	}
	// The memories' mentions and evidence went with them; the entities
	// and relations they leave without any go too.
	if err := t.pruneGraph(ctx, s.Org, s.Project, s.User); err != nil {
		return c, err
	}
	// The audit log keeps that each change happened, when and by whom, but
	// not what the client wrote about it.
	aw, aargs := scopeWhere("audit.", s)
	if _, err := t.exec(ctx, "UPDATE audit SET detail = '' WHERE detail != '' AND "+aw, aargs...); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	// The scope's background jobs go too: they name its episodes.
	jw, jargs := scopeWhere("jobs.", s)
	if _, err := t.exec(ctx, "DELETE FROM jobs WHERE "+jw, jargs...); err != nil {
		return c, mapErr(ctx, "purge scope", err)
	}
	return c, nil
}

func affected(r sql.Result) (int, error) {
	n, err := r.RowsAffected()
	return int(n), err
}

// Touch adds to access_count the number of times each memory of the tenant
// is listed in ids, and sets last_accessed to at; unknown ids are ignored.
// EINVALID for a bad namespace or a malformed id.
func (t *tx) Touch(ctx context.Context, tenant engram.Namespace, ids []string, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := tenant.Validate(); err != nil {
		return err
	}
	for _, id := range ids {
		if !engram.ValidID(id) {
			return invalidID("memory", id)
		}
	}
	// The ids are counted here and written in one statement per distinct
	// count (few: most memories are read once or twice per flush), each
	// looking its ids up by key.
	times := map[string]int{}
	for _, id := range ids {
		times[id]++
	}
	byCount := map[int][]string{}
	for id, n := range times {
		byCount[n] = append(byCount[n], id)
	}
	for n, list := range byCount {
		j, err := stringsJSON(list)
		if err != nil {
			return err
		}
		if _, err := t.exec(ctx, touchSQL, micros(at), tenant.Org, tenant.Project, j, n); err != nil {
			return mapErr(ctx, "touch", err)
		}
	}
	return nil
}

// SetMeta stores value under key, replacing any value there; an empty value
// deletes the key. EINVALID for an empty or overlong key or a value that is
// not UTF-8.
func (t *tx) SetMeta(ctx context.Context, key, value string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckMetaKey(key); err != nil {
		return err
	}
	if !utf8.ValidString(value) {
		return engram.Errorf(engram.EINVALID, "meta value of %q is not UTF-8", key)
	}
	var err error
	if value == "" {
		_, err = t.exec(ctx, deleteMetaSQL, key)
	} else {
		_, err = t.exec(ctx, setMetaSQL, key, value)
	}
	return mapErr(ctx, "set meta", err)
}

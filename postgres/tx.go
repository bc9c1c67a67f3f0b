package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/engramhq/engram/textsearch"
	"github.com/jackc/pgx/v5"
)

// tx implements engram.Tx over one pgx transaction. View hands it out as an
// engram.Reader of a read-only transaction.
type tx struct {
	db       *DB
	ptx      querier // the transaction, or a connection outside one for ReadFresh
	readOnly bool
	changes  map[change]struct{} // memories this transaction changed, logged before commit
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

func (t *tx) writable() error {
	if t.readOnly {
		return errors.New("postgres: write in a read-only transaction")
	}
	return nil
}

func (t *tx) mapErr(ctx context.Context, op string, err error) error {
	return t.db.mapErr(ctx, op, err)
}

// shortID keeps an echoed id from making an error message arbitrarily long.
func shortID(id string) string {
	if len(id) > 40 {
		id = id[:40] + "…"
	}
	if !utf8.ValidString(id) {
		return fmt.Sprintf("%+q", id)
	}
	return id
}

func invalidID(what, id string) error { return storeutil.InvalidID(what, id, shortID) }

const episodeCols = `e.id, e.org, e.project, e.user_id, e.agent, e.session, e.role, e.speaker,
	e.content, e.modality, e.occurred_at, e.received_at, e.metadata, e.media`

const memoryCols = `m.id, m.org, m.project, m.user_id, m.agent, m.session, m.kind, m.abstraction,
	m.cues, m.value, m.language, m.confidence, m.importance, m.status, m.valid_from, m.valid_to,
	m.created_at, m.updated_at, m.expired_at, m.expires_at, m.sources, m.superseded_by,
	m.metadata, m.version, m.access_count, m.last_accessed`

// getMemoriesSQL reads the memories of tenant $1 among the ids $2. Only
// the tenant and each id go to the database, one primary-key lookup per
// id whatever the statistics say: with the user in the condition the
// planner may walk the user's whole index, and on a table not yet
// analysed it read the whole table for a hundred ids (OFFSET 0 keeps the
// lookups from being flattened into a join).
const getMemoriesSQL = `SELECT m.* FROM unnest($2::text[]) AS u(id)
	CROSS JOIN LATERAL (SELECT ` + memoryCols + ` FROM memories m WHERE m.tenant = $1 AND m.id = u.id OFFSET 0) m`

const versionCols = `v.memory_id, v.org, v.project, v.user_id, v.agent, v.session, v.version,
	v.op, v.old, v.new, v.actor, v.reason, v.at`

const auditCols = `a.id, a.org, a.project, a.user_id, a.agent, a.session, a.actor, a.op, a.ids,
	a.detail, a.at`

func scanEpisode(row pgx.Row) (engram.Episode, error) {
	var (
		e         engram.Episode
		modality  string
		md, media []byte
	)
	n := &e.Namespace
	if err := row.Scan(&e.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &e.Role, &e.Speaker,
		&e.Content, &modality, &e.OccurredAt, &e.ReceivedAt, &md, &media); err != nil {
		return e, err
	}
	e.Modality = engram.Modality(modality)
	e.OccurredAt, e.ReceivedAt = utc(e.OccurredAt), utc(e.ReceivedAt)
	var err error
	if e.Metadata, err = storeutil.DecodeMap(md); err != nil {
		return e, fmt.Errorf("episode %s metadata: %w", e.ID, err)
	}
	if len(media) > 0 {
		if err := json.Unmarshal(media, &e.Media); err != nil {
			return e, fmt.Errorf("episode %s media: %w", e.ID, err)
		}
	}
	return e, nil
}

// scanMemory scans memoryCols followed by extra destinations.
func scanMemory(row pgx.Row, extra ...any) (engram.Memory, error) {
	var (
		m            engram.Memory
		kind, status string
		md           []byte
	)
	n := &m.Namespace
	dest := []any{&m.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &kind, &m.Abstraction,
		&m.Cues, &m.Value, &m.Language, &m.Confidence, &m.Importance, &status, &m.ValidFrom, &m.ValidTo,
		&m.CreatedAt, &m.UpdatedAt, &m.ExpiredAt, &m.ExpiresAt, &m.Sources, &m.SupersededBy,
		&md, &m.Version, &m.AccessCount, &m.LastAccessed}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return m, err
	}
	m.Kind, m.Status = engram.Kind(kind), engram.Status(status)
	m.ValidFrom, m.ValidTo = utcPtr(m.ValidFrom), utcPtr(m.ValidTo)
	m.CreatedAt, m.UpdatedAt = utc(m.CreatedAt), utc(m.UpdatedAt)
	m.ExpiredAt, m.ExpiresAt, m.LastAccessed = utcPtr(m.ExpiredAt), utcPtr(m.ExpiresAt), utcPtr(m.LastAccessed)
	m.Cues, m.Sources = nilIfEmpty(m.Cues), nilIfEmpty(m.Sources)
	var err error
	if m.Metadata, err = storeutil.DecodeMap(md); err != nil {
		return m, fmt.Errorf("memory %s metadata: %w", m.ID, err)
	}
	return m, nil
}

func scanVersion(row pgx.Row) (engram.Version, error) {
	var (
		v       engram.Version
		op      string
		old, nw []byte
	)
	n := &v.Namespace
	if err := row.Scan(&v.MemoryID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &v.Version,
		&op, &old, &nw, &v.Actor, &v.Reason, &v.At); err != nil {
		return v, err
	}
	v.Op, v.At = engram.Op(op), utc(v.At)
	for _, f := range []struct {
		b   []byte
		dst **engram.Memory
	}{{old, &v.Old}, {nw, &v.New}} {
		if len(f.b) == 0 {
			continue
		}
		*f.dst = new(engram.Memory)
		if err := storeutil.UnmarshalNumbers(f.b, *f.dst); err != nil {
			return v, fmt.Errorf("version %d of memory %s: %w", v.Version, v.MemoryID, err)
		}
	}
	return v, nil
}

func scanAudit(row pgx.Row) (engram.AuditEntry, error) {
	var a engram.AuditEntry
	n := &a.Namespace
	if err := row.Scan(&a.ID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &a.Actor, &a.Op,
		&a.IDs, &a.Detail, &a.At); err != nil {
		return a, err
	}
	a.At = utc(a.At)
	a.IDs = nilIfEmpty(a.IDs)
	return a, nil
}

// fnError marks an error returned by the caller's function, so that it
// reaches the caller unwrapped.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// each runs sql and calls emit for every row as it arrives; an fnError from
// emit comes back unwrapped, anything else is mapped with op.
func (t *tx) each(ctx context.Context, op, sql string, args []any, emit func(pgx.Row) error) error {
	rows, err := t.ptx.Query(ctx, sql, args...)
	if err != nil {
		return t.mapErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := emit(rows); err != nil {
			var fe fnError
			if errors.As(err, &fe) {
				return fe.err
			}
			return t.mapErr(ctx, op, err)
		}
	}
	return t.mapErr(ctx, op, rows.Err())
}

// GetEpisode returns the episode with id in s; ENOTFOUND if there is none
// in s, EINVALID for a malformed scope or id.
func (t *tx) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, invalidID("episode", id)
	}
	q := &query{}
	q.scope("e.", s)
	q.where("e.id = " + q.arg(id))
	e, err := scanEpisode(t.ptx.QueryRow(ctx, "SELECT "+episodeCols+" FROM episodes e WHERE "+q.String(), q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "episode %s not found", id)
	} else if err != nil {
		return nil, t.mapErr(ctx, "get episode", err)
	}
	return &e, nil
}

// GetMemory returns the memory with id in s, in any status; ENOTFOUND if
// there is none in s, EINVALID for a malformed scope or id. Inside Update
// it locks the row until the commit, so that a read-modify-write of one
// memory by two servers at once is serialised rather than lost.
func (t *tx) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, invalidID("memory", id)
	}
	q := &query{}
	q.scope("m.", s)
	q.where("m.id = " + q.arg(id))
	sql := "SELECT " + memoryCols + " FROM memories m WHERE " + q.String()
	if !t.readOnly {
		sql += " FOR NO KEY UPDATE"
	}
	m, err := scanMemory(t.ptx.QueryRow(ctx, sql, q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	} else if err != nil {
		return nil, t.mapErr(ctx, "get memory", err)
	}
	return &m, nil
}

// GetMemories returns the memories among ids that s contains, in any status
// and in no particular order, each once. Ids that are malformed, unknown or
// outside s are skipped; EINVALID for a bad scope.
func (t *tx) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(ids))
	want := make([]string, 0, len(ids))
	for _, id := range ids {
		if engram.ValidID(id) && !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	// The scope is checked here, by its reference rule (see
	// getMemoriesSQL).
	var out []engram.Memory
	err := t.each(ctx, "get memories", getMemoriesSQL, []any{s.Tenant(), want},
		func(row pgx.Row) error {
			m, err := scanMemory(row)
			if err == nil && s.Contains(m.Namespace) {
				out = append(out, m)
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListEpisodes returns a page of the episodes in s matching f, by
// (occurred_at, id); EINVALID for a bad scope, filter or cursor.
func (t *tx) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) ([]engram.Episode, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	q := &query{}
	q.scope("e.", s)
	if err := episodeFilter(q, &f); err != nil {
		return nil, "", err
	}
	limit, _ := engram.ClampLimit(f.Limit) // checked by episodeFilter
	if f.Cursor != "" {
		occMicros, id, err := storeutil.DecodeEpisodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		q.where("(e.occurred_at, e.id) > (" + q.arg(time.UnixMicro(occMicros).UTC()) + ", " + q.arg(id) + ")")
	}
	sql := "SELECT " + episodeCols + " FROM episodes e WHERE " + q.String() +
		" ORDER BY e.occurred_at, e.id LIMIT " + q.arg(limit+1)
	var out []engram.Episode
	err := t.each(ctx, "list episodes", sql, q.args, func(row pgx.Row) error {
		e, err := scanEpisode(row)
		out = append(out, e)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = storeutil.EncodeEpisodeCursor(last.OccurredAt.UnixMicro(), last.ID)
	}
	return out, next, nil
}

// ListMemories returns a page of the memories in s matching f, newest id
// first; EINVALID for a bad scope, filter or cursor.
func (t *tx) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	q := &query{}
	q.scope("m.", s)
	if err := memoryFilter(q, &f); err != nil {
		return nil, "", err
	}
	limit, _ := engram.ClampLimit(f.Limit) // checked by memoryFilter
	if f.Cursor != "" {
		id, err := storeutil.DecodeIDCursor('m', f.Cursor)
		if err != nil {
			return nil, "", err
		}
		q.where("m.id < " + q.arg(id))
	}
	sql := "SELECT " + memoryCols + " FROM memories m WHERE " + q.String() + " ORDER BY m.id DESC LIMIT " + q.arg(limit+1)
	var out []engram.Memory
	err := t.each(ctx, "list memories", sql, q.args, func(row pgx.Row) error {
		m, err := scanMemory(row)
		out = append(out, m)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = storeutil.EncodeCursor('m', out[limit-1].ID)
	}
	return out, next, nil
}

// rankWeights are ts_rank_cd's weights of the D, C, B and A labels: value
// (C) 1, cues (B) 1.5, abstraction (A) 2, relative to one another as the
// embedded store weighs its columns in BM25, scaled so A is 1.
const rankWeights = "'{0, 0.5, 0.75, 1}'"

// SearchText ranks the memories in s matching f by ts_rank_cd (cover
// density, with length normalisation) against the terms of query, best
// first, at most limit of them (0 means engram.DefaultLimit); equal scores
// are ordered by id, newest first. f.Limit and f.Cursor are ignored. A
// query without terms gives no hits and no error; EINVALID for a bad scope,
// filter or limit.
func (t *tx) SearchText(ctx context.Context, s engram.Scope, text string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	f.Limit, f.Cursor = 0, ""
	q := &query{}
	tsq := q.arg(tsQuery(text))
	q.scope("m.", s)
	if err := memoryFilter(q, &f); err != nil {
		return nil, err
	}
	if q.args[0] == "" {
		return nil, nil
	}
	q.where("m.tsv @@ tq.q")
	// Normalisation 1 divides by 1 + log(length): longer texts need more
	// matches, as in BM25.
	sql := "SELECT " + memoryCols + ", ts_rank_cd(" + rankWeights + ", m.tsv, tq.q, 1) AS r " +
		"FROM websearch_to_tsquery('simple', " + tsq + ") AS tq(q), memories m WHERE " + q.String() +
		" ORDER BY r DESC, m.id DESC LIMIT " + q.arg(n)
	var hits []engram.TextHit
	err = t.each(ctx, "search", sql, q.args, func(row pgx.Row) error {
		var rank float32
		m, err := scanMemory(row, &rank)
		hits = append(hits, engram.TextHit{Memory: m, Score: float64(rank)})
		return err
	})
	if err != nil {
		return nil, err
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
	q := &query{}
	q.scope("v.", s)
	q.where("v.memory_id = " + q.arg(id))
	var out []engram.Version
	err := t.each(ctx, "versions", "SELECT "+versionCols+" FROM memory_versions v WHERE "+q.String()+" ORDER BY v.version",
		q.args, func(row pgx.Row) error {
			v, err := scanVersion(row)
			out = append(out, v)
			return err
		})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		mq := &query{}
		mq.scope("m.", s)
		mq.where("m.id = " + mq.arg(id))
		var exists bool
		if err := t.ptx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM memories m WHERE "+mq.String()+")", mq.args...).Scan(&exists); err != nil {
			return nil, t.mapErr(ctx, "versions", err)
		}
		if !exists {
			return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
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
	q := &query{}
	q.scope("a.", s)
	if err := auditFilter(q, &f); err != nil {
		return nil, "", err
	}
	if f.Cursor != "" {
		id, err := storeutil.DecodeIDCursor('a', f.Cursor)
		if err != nil {
			return nil, "", err
		}
		q.where("a.id < " + q.arg(id))
	}
	sql := "SELECT " + auditCols + " FROM audit a WHERE " + q.String() + " ORDER BY a.id DESC LIMIT " + q.arg(limit+1)
	var out []engram.AuditEntry
	err = t.each(ctx, "audit", sql, q.args, func(row pgx.Row) error {
		a, err := scanAudit(row)
		out = append(out, a)
		return err
	})
	if err != nil {
		return nil, "", err
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
	q := &query{}
	sql, scan, err := exportPageQuery(q, s, kind, after)
	if err != nil {
		return nil, "", err
	}
	var out []engram.Record
	err = t.each(ctx, "export", sql+" LIMIT "+q.arg(limit+1), q.args, func(row pgx.Row) error {
		r, err := scan(row)
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
// cursor after, without its LIMIT, with its arguments in q, and how to scan
// one row into a record.
func exportPageQuery(q *query, s engram.Scope, kind, after string) (string, func(pgx.Row) (engram.Record, error), error) {
	switch kind {
	case engram.RecordEpisode:
		q.scope("e.", s)
		if after != "" {
			occ, id, err := storeutil.DecodeEpisodeCursor(after)
			if err != nil {
				return "", nil, err
			}
			q.where("(e.occurred_at, e.id) > (" + q.arg(time.UnixMicro(occ).UTC()) + ", " + q.arg(id) + ")")
		}
		return "SELECT " + episodeCols + " FROM episodes e WHERE " + q.String() + " ORDER BY e.occurred_at, e.id",
			func(row pgx.Row) (engram.Record, error) {
				e, err := scanEpisode(row)
				return engram.Record{Type: kind, Episode: &e}, err
			}, nil
	case engram.RecordMemory:
		q.scope("m.", s)
		if err := afterID(q, "m.id", 'm', after); err != nil {
			return "", nil, err
		}
		return "SELECT " + memoryCols + " FROM memories m WHERE " + q.String() + " ORDER BY m.id",
			func(row pgx.Row) (engram.Record, error) {
				m, err := scanMemory(row)
				return engram.Record{Type: kind, Memory: &m}, err
			}, nil
	case engram.RecordVersion:
		q.scope("v.", s)
		if after != "" {
			id, n, err := storeutil.DecodeVersionCursor(after)
			if err != nil {
				return "", nil, err
			}
			q.where("(v.memory_id, v.version) > (" + q.arg(id) + ", " + q.arg(n) + ")")
		}
		return "SELECT " + versionCols + " FROM memory_versions v WHERE " + q.String() + " ORDER BY v.memory_id, v.version",
			func(row pgx.Row) (engram.Record, error) {
				v, err := scanVersion(row)
				return engram.Record{Type: kind, Version: &v}, err
			}, nil
	default: // engram.RecordAudit, as CheckExportPage made sure
		q.scope("a.", s)
		if err := afterID(q, "a.id", 'a', after); err != nil {
			return "", nil, err
		}
		return "SELECT " + auditCols + " FROM audit a WHERE " + q.String() + " ORDER BY a.id",
			func(row pgx.Row) (engram.Record, error) {
				a, err := scanAudit(row)
				return engram.Record{Type: kind, Audit: &a}, err
			}, nil
	}
}

// afterID adds the condition col > the id that cursor c of the list kind
// resumes after; nothing for an empty cursor.
func afterID(q *query, col string, kind byte, c string) error {
	if c == "" {
		return nil
	}
	id, err := storeutil.DecodeIDCursor(kind, c)
	if err != nil {
		return err
	}
	q.where(col + " > " + q.arg(id))
	return nil
}

// checkMetaKey adds to storeutil.CheckMetaKey the refusal of a NUL
// character, which a text column cannot hold (EINVALID).
func checkMetaKey(key string) error {
	if err := storeutil.CheckMetaKey(key); err != nil {
		return err
	}
	return storable("meta key", key)
}

// Meta returns the store-wide value under key, or "" if there is none;
// EINVALID for an empty or overlong key.
func (t *tx) Meta(ctx context.Context, key string) (string, error) {
	if err := checkMetaKey(key); err != nil {
		return "", err
	}
	var v string
	err := t.ptx.QueryRow(ctx, "SELECT value FROM meta WHERE key = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, t.mapErr(ctx, "meta", err)
}

// ScanMemories returns up to limit memories of every tenant, in any status,
// ordered by (org, project, id) byte by byte and strictly after the key
// after; the zero key starts at the beginning. It is for maintenance only:
// it crosses tenants (and shards). EINVALID if limit is not positive.
func (t *tx) ScanMemories(ctx context.Context, after engram.MemoryKey, limit int) ([]engram.Memory, error) {
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "scan limit %d is not positive", limit)
	}
	for _, s := range []string{after.Org, after.Project, after.ID} {
		if err := storable("scan key", s); err != nil {
			return nil, err
		}
	}
	var out []engram.Memory
	err := t.each(ctx, "scan memories", "SELECT "+memoryCols+` FROM memories m
		WHERE (m.org, m.project, m.id) > ($1, $2, $3) ORDER BY m.org, m.project, m.id LIMIT $4`,
		[]any{after.Org, after.Project, after.ID, limit},
		func(row pgx.Row) error {
			m, err := scanMemory(row)
			out = append(out, m)
			return err
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Lapsed implements engram.Expirer: up to limit active memories of every
// tenant whose expires_at is at or before at, soonest first. It crosses
// tenants (and shards). EINVALID if limit is not positive.
func (t *tx) Lapsed(ctx context.Context, at time.Time, limit int) ([]engram.Memory, error) {
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "lapsed limit %d is not positive", limit)
	}
	var out []engram.Memory
	err := t.each(ctx, "read lapsed memories", "SELECT "+memoryCols+` FROM memories m
		WHERE m.status = 'active' AND m.expires_at IS NOT NULL AND m.expires_at <= $1
		ORDER BY m.expires_at, m.org, m.project, m.id LIMIT $2`,
		[]any{at, limit},
		func(row pgx.Row) error {
			m, err := scanMemory(row)
			out = append(out, m)
			return err
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// InsertEpisode stores e. EINVALID if e fails Validate, has no id or holds
// text PostgreSQL cannot store; ECONFLICT if its tenant already has that id.
func (t *tx) InsertEpisode(ctx context.Context, e *engram.Episode) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storeutil.CheckEpisode(e); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"content", e.Content}, {"role", e.Role}, {"speaker", e.Speaker}} {
		if err := storable("episode: "+f.name, f.v); err != nil {
			return err
		}
	}
	md, err := mapJSON("episode: metadata", e.Metadata)
	if err != nil {
		return err
	}
	media, err := jsonText("episode: media", e.Media, len(e.Media) == 0)
	if err != nil {
		return err
	}
	n := e.Namespace
	// ON CONFLICT DO NOTHING: a duplicate is reported without an error from
	// the server, which would abort the whole transaction.
	tag, err := t.ptx.Exec(ctx, `INSERT INTO episodes (tenant, org, project, user_id, agent, session, id,
		role, speaker, content, modality, occurred_at, received_at, metadata, media)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, e.ID, e.Role, e.Speaker, e.Content,
		string(e.Modality), e.OccurredAt, e.ReceivedAt, md, media)
	if err != nil {
		return t.mapErr(ctx, "insert episode", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "episode %s already exists", e.ID)
	}
	return nil
}

func checkMemory(m *engram.Memory) error {
	if err := storeutil.CheckMemory(m); err != nil {
		return err
	}
	return checkMemoryText("memory", m)
}

// memoryArgs returns the values of the columns after the namespace and id,
// in the order of insertMemorySQL, search text included.
func memoryArgs(m *engram.Memory) ([]any, error) {
	md, err := mapJSON("memory: metadata", m.Metadata)
	if err != nil {
		return nil, err
	}
	return []any{string(m.Kind), m.Abstraction, nilIfEmpty(m.Cues), m.Value, m.Language, m.Confidence,
		m.Importance, string(m.Status), m.ValidFrom, m.ValidTo, m.CreatedAt, m.UpdatedAt, m.ExpiredAt,
		m.ExpiresAt, nilIfEmpty(m.Sources), m.SupersededBy, md, m.Version, m.AccessCount, m.LastAccessed,
		textsearch.Words(m.Abstraction), textsearch.Words(textsearch.SegmentCues(m.Cues)), textsearch.Words(m.Value)}, nil
}

// InsertMemory stores and indexes m. EINVALID if m fails Validate, has no
// id or holds text PostgreSQL cannot store; ECONFLICT if its tenant
// already has that id.
func (t *tx) InsertMemory(ctx context.Context, m *engram.Memory) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := checkMemory(m); err != nil {
		return err
	}
	rest, err := memoryArgs(m)
	if err != nil {
		return err
	}
	n := m.Namespace
	args := append([]any{n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, m.ID}, rest...)
	tag, err := t.ptx.Exec(ctx, `INSERT INTO memories (tenant, org, project, user_id, agent, session, id,
		kind, abstraction, cues, value, language, confidence, importance, status, valid_from, valid_to,
		created_at, updated_at, expired_at, expires_at, sources, superseded_by, metadata, version,
		access_count, last_accessed, search_abstraction, search_cues, search_value)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
		$20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30) ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return t.mapErr(ctx, "insert memory", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "memory %s already exists", m.ID)
	}
	t.changed(n.Tenant(), n.User, m.ID)
	return nil
}

// ReplaceMemory overwrites every field of the memory with m's tenant and
// id, namespace included, and re-indexes its text. ENOTFOUND if the tenant
// has no such memory; EINVALID if m fails Validate or holds text
// PostgreSQL cannot store.
func (t *tx) ReplaceMemory(ctx context.Context, m *engram.Memory) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := checkMemory(m); err != nil {
		return err
	}
	rest, err := memoryArgs(m)
	if err != nil {
		return err
	}
	n := m.Namespace
	args := append([]any{n.Tenant(), m.ID, n.User, n.Agent, n.Session}, rest...)
	// The CTE locks the row and reads the user it had, whose cached index
	// must drop the memory when the replacement moves it to another user.
	var oldUser string
	err = t.ptx.QueryRow(ctx, `WITH old AS (
			SELECT id, user_id FROM memories WHERE tenant = $1 AND id = $2 FOR NO KEY UPDATE)
		UPDATE memories m SET user_id = $3, agent = $4, session = $5, kind = $6, abstraction = $7,
			cues = $8, value = $9, language = $10, confidence = $11, importance = $12, status = $13,
			valid_from = $14, valid_to = $15, created_at = $16, updated_at = $17, expired_at = $18,
			expires_at = $19, sources = $20, superseded_by = $21, metadata = $22, version = $23,
			access_count = $24, last_accessed = $25, search_abstraction = $26, search_cues = $27,
			search_value = $28
		FROM old WHERE m.tenant = $1 AND m.id = old.id RETURNING old.user_id`, args...).Scan(&oldUser)
	if errors.Is(err, pgx.ErrNoRows) {
		return engram.Errorf(engram.ENOTFOUND, "memory %s not found", m.ID)
	} else if err != nil {
		return t.mapErr(ctx, "replace memory", err)
	}
	t.changed(n.Tenant(), n.User, m.ID)
	if oldUser != n.User {
		t.changed(n.Tenant(), oldUser, m.ID)
	}
	return nil
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
	for _, f := range []struct{ name, v string }{{"op", string(v.Op)}, {"actor", v.Actor}, {"reason", v.Reason}} {
		if err := storable("version: "+f.name, f.v); err != nil {
			return err
		}
	}
	old, err := jsonText("version: old", v.Old, v.Old == nil)
	if err != nil {
		return err
	}
	nw, err := jsonText("version: new", v.New, v.New == nil)
	if err != nil {
		return err
	}
	n := v.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO memory_versions (tenant, org, project, user_id, agent, session,
		memory_id, version, op, old, new, actor, reason, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, v.MemoryID, v.Version, string(v.Op),
		old, nw, v.Actor, v.Reason, v.At)
	if err != nil {
		return t.mapErr(ctx, "insert version", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "version %d of memory %s already exists", v.Version, v.MemoryID)
	}
	return nil
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
	for _, f := range append([]string{a.Op, a.Actor, a.Detail}, a.IDs...) {
		if err := storable("audit entry", f); err != nil {
			return err
		}
	}
	n := a.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO audit (tenant, org, project, user_id, agent, session, id,
		actor, op, ids, detail, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT DO NOTHING`,
		n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, a.ID, a.Actor, a.Op, nilIfEmpty(a.IDs),
		a.Detail, a.At)
	if err != nil {
		return t.mapErr(ctx, "insert audit", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "audit entry %s already exists", a.ID)
	}
	return nil
}

// PurgeMemory deletes the memory with n's tenant and id, its vectors (by
// the foreign key) and its versions, and clears the detail of the audit
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
	rows, err := t.ptx.Query(ctx, `WITH v AS (
			DELETE FROM memory_versions WHERE tenant = $1 AND memory_id = $2)
		DELETE FROM memories WHERE tenant = $1 AND id = $2 RETURNING user_id`, n.Tenant(), id)
	if err != nil {
		return t.mapErr(ctx, "purge memory", err)
	}
	users, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return t.mapErr(ctx, "purge memory", err)
	}
	for _, u := range users {
		t.changed(n.Tenant(), u, id)
		// Earlier audit entries of the memory keep that they happened,
		// not the reasons given, which may quote the text.
		if _, err := t.ptx.Exec(ctx, `UPDATE audit SET detail = '' WHERE tenant = $1 AND user_id = $2
			AND detail <> '' AND $3 = ANY (ids)`, n.Tenant(), u, id); err != nil {
			return t.mapErr(ctx, "purge memory", err)
		}
		if err := t.pruneGraph(ctx, n.Tenant(), u); err != nil {
			return err
		}
	}
	return nil
}

// PurgeEpisode deletes the episode with n's tenant and id. Nothing to
// delete is not an error; EINVALID for a bad namespace or id.
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
	_, err := t.ptx.Exec(ctx, "DELETE FROM episodes WHERE tenant = $1 AND id = $2", n.Tenant(), id)
	return t.mapErr(ctx, "purge episode", err)
}

// PurgeScope deletes every episode, memory, version and vector in s,
// ignoring s.IncludeShared (it never widens a write), and keeps the audit
// log as tombstones (detail cleared). EINVALID if s names no user, agent or session.
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
	// The statement timeout is for searches and ordinary writes; a purge
	// of a large scope (100k memories took 14 s) must not be cut off and
	// rolled back by it, so its statements run until done or until ctx
	// ends.
	if _, err := t.ptx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}

	// Versions in the scope, and any left under another namespace by a
	// memory that moved into it; while the memories still exist.
	vq := &query{}
	vq.scope("v.", s)
	mq := &query{args: vq.args}
	mq.scope("m.", s)
	tag, err := t.ptx.Exec(ctx, "DELETE FROM memory_versions v WHERE v.tenant = $1 AND (("+vq.String()+
		") OR v.memory_id IN (SELECT m.id FROM memories m WHERE "+mq.String()+"))", mq.args...)
	if err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}
	c.Versions = int(tag.RowsAffected())

	q := &query{}
	q.scope("m.", s)
	rows, err := t.ptx.Query(ctx, "DELETE FROM memories m WHERE "+q.String()+" RETURNING m.user_id, m.id", q.args...)
	if err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}
	var user, id string
	_, err = pgx.ForEachRow(rows, []any{&user, &id}, func() error {
		c.Memories++
		t.changed(s.Tenant(), user, id)
		return nil
	})
	if err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}

	q = &query{}
	q.scope("e.", s)
	if tag, err = t.ptx.Exec(ctx, "DELETE FROM episodes e WHERE "+q.String(), q.args...); err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}
	c.Episodes = int(tag.RowsAffected())
	if c.Resources, err = t.purgeScopeResources(ctx, s); err != nil {
		return c, err
	}
	if err := t.purgeIdentities(ctx, s); err != nil {
		return c, err
	}
	// The memories' mentions and evidence went with them; the entities
	// and relations they leave without any go too.
	if err := t.pruneGraph(ctx, s.Tenant(), s.User); err != nil {
		return c, err
	}

	// The audit log keeps that each change happened, when and by whom, but
	// not what the client wrote about it.
	q = &query{}
	q.scope("a.", s)
	if _, err = t.ptx.Exec(ctx, "UPDATE audit a SET detail = '' WHERE a.detail <> '' AND "+q.String(), q.args...); err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}
	// The scope's background jobs go too: they name its episodes.
	q = &query{}
	q.scope("j.", s)
	if _, err := t.ptx.Exec(ctx, "DELETE FROM jobs j WHERE "+q.String(), q.args...); err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}
	return c, nil
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
	if len(ids) == 0 {
		return nil
	}
	_, err := t.ptx.Exec(ctx, `UPDATE memories m SET access_count = m.access_count + c.n, last_accessed = $1
		FROM (SELECT u.id, count(*) AS n FROM unnest($3::text[]) AS u(id) GROUP BY u.id) c
		WHERE m.tenant = $2 AND m.id = c.id`, at, tenant.Tenant(), ids)
	return t.mapErr(ctx, "touch", err)
}

// SetMeta stores value under key, replacing any value there; an empty value
// deletes the key. EINVALID for an empty or overlong key or a value that is
// not UTF-8 or holds a NUL character.
func (t *tx) SetMeta(ctx context.Context, key, value string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := checkMetaKey(key); err != nil {
		return err
	}
	if err := storable(fmt.Sprintf("meta value of %q", key), value); err != nil {
		return err
	}
	var err error
	if value == "" {
		_, err = t.ptx.Exec(ctx, "DELETE FROM meta WHERE key = $1", key)
	} else {
		_, err = t.ptx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	}
	return t.mapErr(ctx, "set meta", err)
}

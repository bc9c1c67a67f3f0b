package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

const episodeCols = `e.id, e.org, e.project, e.user_id, e.agent, e.session, e.role, e.speaker,
	e.content, e.modality, e.occurred_at, e.received_at, e.metadata, e.media`

const memoryCols = `m.id, m.org, m.project, m.user_id, m.agent, m.session, m.kind, m.abstraction,
	m.cues, m.value, m.language, m.confidence, m.importance, m.status, m.valid_from, m.valid_to,
	m.created_at, m.updated_at, m.expired_at, m.expires_at, m.sources, m.superseded_by,
	m.metadata, m.version, m.access_count, m.last_accessed`

// getMemoriesSQL reads the memories of tenant $1 and the users $3 (the
// scope's, and the project's empty one when it includes shared records)
// among the ids $2. Only the key goes to the database, one primary-key
// lookup per id and user whatever the statistics say: with the agent or
// session in the condition the planner may walk the user's whole index,
// and on a table not yet analysed it read the whole table for a hundred
// ids (OFFSET 0 keeps the lookups from being flattened into a join).
const getMemoriesSQL = `SELECT m.* FROM unnest($2::text[]) AS u(id)
	CROSS JOIN LATERAL (SELECT ` + memoryCols + ` FROM memories m
		WHERE m.tenant = $1 AND m.user_id = ANY($3::text[]) AND m.id = u.id OFFSET 0) m`

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

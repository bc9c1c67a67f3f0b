package postgres

import (
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// getMemoriesSQL reads the memories of tenant $1 and the users $3 (the
// scope's, and the project's empty one when it includes shared records)
// among the ids $2. Only the key goes to the database, one primary-key
// lookup per id and user whatever the statistics say: with the agent or
// session in the condition the planner may walk the user's whole index,
// and on a table not yet analysed it read the whole table for a hundred
// ids (OFFSET 0 keeps the lookups from being flattened into a join).
const getMemoriesSQL = `SELECT m.* FROM unnest($2::text[]) AS u(id)
	CROSS JOIN LATERAL (SELECT ` + storeutil.MemoryCols + ` FROM memories m
		WHERE m.tenant = $1 AND m.user_id = ANY($3::text[]) AND m.id = u.id OFFSET 0) m`

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
	return e, storeutil.DecodeEpisodeJSON(&e, md, media)
}

// scanMemory scans storeutil.MemoryCols followed by extra destinations.
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
	return v, storeutil.DecodeVersionStates(&v, old, nw)
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

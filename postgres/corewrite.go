package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/textsearch"
	"github.com/jackc/pgx/v5"
)

// InsertEpisode stores e. EINVALID if e fails Validate, has no id or holds
// text PostgreSQL cannot store; ECONFLICT if its user already has that id
// in the tenant (another user's episode with the id is no conflict).
func (t *coreTx) InsertEpisode(ctx context.Context, e *engram.Episode) error {
	if err := t.writable(); err != nil {
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

// writeArgs checks that t may write and that m is storable, and returns
// head followed by the values of m's columns (memoryArgs).
func (t *coreTx) writeArgs(m *engram.Memory, head ...any) ([]any, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	if err := checkMemory(m); err != nil {
		return nil, err
	}
	rest, err := memoryArgs(m)
	if err != nil {
		return nil, err
	}
	return append(head, rest...), nil
}

// InsertMemory stores and indexes m. EINVALID if m fails Validate, has no
// id or holds text PostgreSQL cannot store; ECONFLICT if its user already
// has that id in the tenant (another user's memory with the id is no
// conflict).
func (t *coreTx) InsertMemory(ctx context.Context, m *engram.Memory) error {
	n := m.Namespace
	args, err := t.writeArgs(m, n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, m.ID)
	if err != nil {
		return err
	}
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

// ReplaceMemory overwrites every field of the memory with m's tenant, user
// and id, its agent and session included, and re-indexes its text.
// ENOTFOUND if the user has no such memory; EINVALID if m fails Validate
// or holds text PostgreSQL cannot store.
func (t *coreTx) ReplaceMemory(ctx context.Context, m *engram.Memory) error {
	n := m.Namespace
	args, err := t.writeArgs(m, n.Tenant(), m.ID, n.User, n.Agent, n.Session)
	if err != nil {
		return err
	}
	// The CTE locks the row.
	var oldUser string
	err = t.ptx.QueryRow(ctx, `WITH old AS (
			SELECT id, user_id FROM memories WHERE tenant = $1 AND user_id = $3 AND id = $2 FOR NO KEY UPDATE)
		UPDATE memories m SET agent = $4, session = $5, kind = $6, abstraction = $7,
			cues = $8, value = $9, language = $10, confidence = $11, importance = $12, status = $13,
			valid_from = $14, valid_to = $15, created_at = $16, updated_at = $17, expired_at = $18,
			expires_at = $19, sources = $20, superseded_by = $21, metadata = $22, version = $23,
			access_count = $24, last_accessed = $25, search_abstraction = $26, search_cues = $27,
			search_value = $28
		FROM old WHERE m.tenant = $1 AND m.user_id = old.user_id AND m.id = old.id RETURNING old.user_id`, args...).Scan(&oldUser)
	if errors.Is(err, pgx.ErrNoRows) {
		return engram.Errorf(engram.ENOTFOUND, "memory %s not found", m.ID)
	} else if err != nil {
		return t.mapErr(ctx, "replace memory", err)
	}
	t.changed(n.Tenant(), n.User, m.ID)
	return nil
}

// InsertVersion appends v to its memory's history. EINVALID for a bad
// namespace, memory id, version number or empty op; ECONFLICT if that
// version exists.
func (t *coreTx) InsertVersion(ctx context.Context, v *engram.Version) error {
	if err := t.writable(); err != nil {
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

// Touch adds to access_count the number of times each memory of the
// tenant's user is listed in ids, and sets last_accessed to at; unknown ids are ignored.
// EINVALID for a bad namespace or a malformed id.
func (t *coreTx) Touch(ctx context.Context, tenant engram.Namespace, ids []string, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := t.ptx.Exec(ctx, `UPDATE memories m SET access_count = m.access_count + c.n, last_accessed = $1
		FROM (SELECT u.id, count(*) AS n FROM unnest($3::text[]) AS u(id) GROUP BY u.id) c
		WHERE m.tenant = $2 AND m.user_id = $4 AND m.id = c.id`, at, tenant.Tenant(), ids, tenant.User)
	return t.mapErr(ctx, "touch", err)
}

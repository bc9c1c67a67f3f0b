package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/engramhq/engram"
)

// InsertEpisode stores e. EINVALID if e fails Validate or has no id,
// ECONFLICT if its user already has that id in the tenant (another user's
// episode with the id is no conflict).
func (t *memoryTx) InsertEpisode(ctx context.Context, e *engram.Episode) error {
	if err := t.writable(); err != nil {
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

// writeArgs checks that t may write and that m is storable, and returns
// m's JSON columns (memoryArgs).
func (t *memoryTx) writeArgs(m *engram.Memory) (cues, sources, md any, err error) {
	if err := t.writable(); err != nil {
		return nil, nil, nil, err
	}
	return memoryArgs(m)
}

// InsertMemory stores m, indexes its text and records its sources.
// EINVALID if m fails Validate or has no id, ECONFLICT if its user already
// has that id in the tenant (another user's memory with the id is no
// conflict).
func (t *memoryTx) InsertMemory(ctx context.Context, m *engram.Memory) error {
	cues, sources, md, err := t.writeArgs(m)
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
		if _, err := t.exec(ctx, insertSourcesSQL, n.Org, n.Project, n.User, m.ID, sources); err != nil {
			return mapErr(ctx, "insert memory sources", err)
		}
	}
	return t.logChange(ctx, n, m.ID)
}

// indexMemory adds m's row to memories_fts, when there is one.
func (t *memoryTx) indexMemory(ctx context.Context, rid int64, m *engram.Memory) error {
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

// ReplaceMemory overwrites every field of the memory with m's tenant, user
// and id, its agent and session included, and re-indexes its text when
// that changed. ENOTFOUND if the user has no such memory; EINVALID if m
// fails Validate.
func (t *memoryTx) ReplaceMemory(ctx context.Context, m *engram.Memory) error {
	cues, sources, md, err := t.writeArgs(m)
	if err != nil {
		return err
	}
	n := m.Namespace
	var (
		rid                       int64
		oldUser, oldValue, oldAbs string
		oldCues, oldSources       sql.NullString
	)
	err = t.queryRow(ctx, memoryForReplaceSQL, n.Org, n.Project, n.User, m.ID).Scan(&rid, &oldUser, &oldValue, &oldAbs, &oldCues, &oldSources)
	if errors.Is(err, sql.ErrNoRows) {
		return engram.Errorf(engram.ENOTFOUND, "memory %s not found", m.ID)
	} else if err != nil {
		return mapErr(ctx, "replace memory", err)
	}
	if _, err := t.exec(ctx, replaceMemorySQL, n.User, n.Agent, n.Session, string(m.Kind),
		m.Abstraction, cues, m.Value, m.Language, m.Confidence, m.Importance, string(m.Status),
		microsPtr(m.ValidFrom), microsPtr(m.ValidTo), micros(m.CreatedAt), micros(m.UpdatedAt),
		microsPtr(m.ExpiredAt), microsPtr(m.ExpiresAt), sources, m.SupersededBy, md, m.Version,
		m.AccessCount, microsPtr(m.LastAccessed), rid); err != nil {
		return mapErr(ctx, "replace memory", err)
	}
	// Most replacements change only status or validity; leave the index be.
	if oldValue != m.Value || oldAbs != m.Abstraction || oldCues.String != nullString(cues) {
		old := indexedMemory{rid: rid, org: n.Org, project: n.Project, user: oldUser, value: oldValue, abstraction: oldAbs, cues: oldCues}
		if err := t.unindexMemory(ctx, old); err != nil {
			return err
		}
		if err := t.indexMemory(ctx, rid, m); err != nil {
			return err
		}
	}
	if oldSources.String != nullString(sources) {
		if _, err := t.exec(ctx, deleteSourcesSQL, n.Org, n.Project, n.User, m.ID); err != nil {
			return mapErr(ctx, "replace memory sources", err)
		}
		if sources != nil {
			if _, err := t.exec(ctx, insertSourcesSQL, n.Org, n.Project, n.User, m.ID, sources); err != nil {
				return mapErr(ctx, "replace memory sources", err)
			}
		}
	}
	return t.logChange(ctx, n, m.ID)
}

func nullString(v any) string {
	s, _ := v.(string)
	return s
}

// InsertVersion appends v to its memory's history. EINVALID for a bad
// namespace, memory id, version number or empty op; ECONFLICT if that
// version exists.
func (t *memoryTx) InsertVersion(ctx context.Context, v *engram.Version) error {
	if err := t.writable(); err != nil {
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

// PurgeMemory deletes the memory with n's tenant, user and id, its text index
// row, sources, vectors and versions, and clears the detail of the audit
// entries of its user that name it. Nothing to delete is not an error;
// EINVALID for a bad namespace or id.
func (t *memoryTx) PurgeMemory(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := t.logChange(ctx, n, id); err != nil {
		return err
	}
	var r indexedMemory
	err := t.queryRow(ctx, deleteMemorySQL, n.Org, n.Project, n.User, id).Scan(&r.rid, &r.user, &r.value, &r.abstraction, &r.cues)
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
	if _, err := t.exec(ctx, deleteVersionsSQL, n.Org, n.Project, n.User, id); err != nil {
		return mapErr(ctx, "purge memory", err)
	}
	return nil
}

// PurgeEpisode deletes the episode with n's tenant, user and id. Nothing
// to delete is not an error; EINVALID for a bad namespace or id.
func (t *memoryTx) PurgeEpisode(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, deleteEpisodeSQL, n.Org, n.Project, n.User, id)
	return mapErr(ctx, "purge episode", err)
}

func affected(r sql.Result) (int, error) {
	n, err := r.RowsAffected()
	return int(n), err
}

// Touch adds to access_count the number of times each memory of the tenant
// is listed in ids, and sets last_accessed to at; unknown ids are ignored.
// EINVALID for a bad namespace or a malformed id.
func (t *memoryTx) Touch(ctx context.Context, tenant engram.Namespace, ids []string, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
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
		if _, err := t.exec(ctx, touchSQL, micros(at), tenant.Org, tenant.Project, j, n, tenant.User); err != nil {
			return mapErr(ctx, "touch", err)
		}
	}
	return nil
}

package sqlite

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// Audit returns a page of the audit entries in s matching f, newest first;
// EINVALID for a bad scope, limit or cursor.
func (t *adminTx) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) ([]engram.AuditEntry, string, error) {
	limit := f.Limit // clamped in front of the store
	w := &where{}
	w.addScope("a.", s)
	auditFilter(w, &f)
	if f.Cursor != "" {
		id, err := storeutil.AuditAfter(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("a.id < ?", id)
	}
	q := "SELECT " + storeutil.AuditCols + " FROM audit a WHERE " + w.String() + " ORDER BY a.id DESC LIMIT ?"
	out, err := collect(ctx, t.base, "audit", q, append(w.args, limit+1), scanAudit)
	return storeutil.AuditPage(out, limit, err)
}

// Export calls fn for every record in s: episodes by (occurred_at, id),
// memories by id, versions by (memory id, version), audit entries by id,
// reading them a page at a time within the transaction. An error from fn
// stops the export and is returned as is.
func (t *adminTx) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	return storeutil.ExportAll(ctx, t, s, exportPageSize, fn)
}

// ExportPage returns up to limit records of type kind in s after the
// cursor after, in Export's order, and the next page's cursor ("" after
// the last); EINVALID for a bad scope, kind, limit or cursor.
func (t *adminTx) ExportPage(ctx context.Context, s engram.Scope, kind, after string, limit int) ([]engram.Record, string, error) {
	return storeutil.ExportPage(s, kind, limit, func(n int) ([]engram.Record, error) {
		q, args, scan, err := exportPageQuery(s, kind, after)
		if err != nil {
			return nil, err
		}
		var out []engram.Record
		err = t.each(ctx, "export", q+" LIMIT ?", append(args, n), func(sc scanner) error {
			r, err := scan(sc)
			out = append(out, r)
			return err
		})
		return out, err
	})
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
		return "SELECT " + storeutil.EpisodeCols + " FROM episodes e WHERE " + w.String() + " ORDER BY e.occurred_at, e.id", w.args,
			func(sc scanner) (engram.Record, error) {
				e, err := scanEpisode(sc)
				return storeutil.EpisodeRecord(&e), err
			}, nil
	case engram.RecordMemory:
		w.addScope("m.", s)
		if err := afterID(w, "m.id", 'm', after); err != nil {
			return "", nil, nil, err
		}
		return "SELECT " + storeutil.MemoryCols + " FROM memories m WHERE " + w.String() + " ORDER BY m.id", w.args,
			func(sc scanner) (engram.Record, error) {
				m, err := scanMemory(sc)
				return storeutil.MemoryRecord(&m), err
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
		return "SELECT " + storeutil.VersionCols + " FROM memory_versions v WHERE " + w.String() + " ORDER BY v.memory_id, v.version", w.args,
			func(sc scanner) (engram.Record, error) {
				v, err := scanVersion(sc)
				return storeutil.VersionRecord(&v), err
			}, nil
	default: // engram.RecordAudit, as CheckExportPage made sure
		w.addScope("a.", s)
		if err := afterID(w, "a.id", 'a', after); err != nil {
			return "", nil, nil, err
		}
		return "SELECT " + storeutil.AuditCols + " FROM audit a WHERE " + w.String() + " ORDER BY a.id", w.args,
			func(sc scanner) (engram.Record, error) {
				a, err := scanAudit(sc)
				return storeutil.AuditRecord(&a), err
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

// InsertAudit appends a to the audit log. EINVALID for a bad namespace or
// id or an empty op; ECONFLICT if its user has an entry with that id in
// the tenant (another user's entry with the id is no conflict).
func (t *adminTx) InsertAudit(ctx context.Context, a *engram.AuditEntry) error {
	if err := t.writable(); err != nil {
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

// PurgeScope deletes every episode, memory, version, text index row, source
// and vector in s, ignoring s.IncludeShared (it never widens a write), and
// keeps the audit log as tombstones (detail cleared). EINVALID if s names no user, agent or session.
func (t *adminTx) PurgeScope(ctx context.Context, s engram.Scope) (engram.PurgeCounts, error) {
	var c engram.PurgeCounts
	if err := t.writable(); err != nil {
		return c, err
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
		vw+") OR (memory_versions.user_id, memory_versions.memory_id) IN (SELECT m.user_id, m.id FROM memories m WHERE "+mw+"))",
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

package postgres

import (
	"context"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// exportPageSize is how many records Export reads at a time.
const exportPageSize = 500

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
		q := &query{}
		sql, scan, err := exportPageQuery(q, s, kind, after)
		if err != nil {
			return nil, err
		}
		var out []engram.Record
		err = t.each(ctx, "export", sql+" LIMIT "+q.arg(n), q.args, func(row pgx.Row) error {
			r, err := scan(row)
			out = append(out, r)
			return err
		})
		return out, err
	})
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
		return "SELECT " + storeutil.EpisodeCols + " FROM episodes e WHERE " + q.String() + " ORDER BY e.occurred_at, e.id",
			func(row pgx.Row) (engram.Record, error) {
				e, err := scanEpisode(row)
				return storeutil.EpisodeRecord(&e), err
			}, nil
	case engram.RecordMemory:
		q.scope("m.", s)
		if err := afterID(q, "m.id", 'm', after); err != nil {
			return "", nil, err
		}
		return "SELECT " + storeutil.MemoryCols + " FROM memories m WHERE " + q.String() + " ORDER BY m.id",
			func(row pgx.Row) (engram.Record, error) {
				m, err := scanMemory(row)
				return storeutil.MemoryRecord(&m), err
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
		return "SELECT " + storeutil.VersionCols + " FROM memory_versions v WHERE " + q.String() + " ORDER BY v.memory_id, v.version",
			func(row pgx.Row) (engram.Record, error) {
				v, err := scanVersion(row)
				return storeutil.VersionRecord(&v), err
			}, nil
	default: // engram.RecordAudit, as CheckExportPage made sure
		q.scope("a.", s)
		if err := afterID(q, "a.id", 'a', after); err != nil {
			return "", nil, err
		}
		return "SELECT " + storeutil.AuditCols + " FROM audit a WHERE " + q.String() + " ORDER BY a.id",
			func(row pgx.Row) (engram.Record, error) {
				a, err := scanAudit(row)
				return storeutil.AuditRecord(&a), err
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

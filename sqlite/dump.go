package sqlite

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// Dump calls fn for every record of every tenant, as engram.Reader.Dump
// describes; TEXT columns compare by bytes (the BINARY collation), which
// gives the documented order. The change-log horizon is left out: it
// numbers this database's changes and means nothing in another. fn's error
// stops the dump and is returned as is. It is for maintenance only.
func (t *adminTx) Dump(ctx context.Context, fn func(engram.DumpRecord) error) error {
	call := func(r engram.DumpRecord) error {
		if err := fn(r); err != nil {
			return storeutil.FnError{Err: err}
		}
		return nil
	}
	steps := []struct {
		q    string
		emit func(scanner) error
	}{
		{"SELECT " + episodeCols + " FROM episodes e ORDER BY e.org, e.project, e.id, e.user_id", storeutil.DumpRow(scanEpisode, storeutil.EpisodeRecord, fn)},
		{"SELECT " + memoryCols + " FROM memories m ORDER BY m.org, m.project, m.id, m.user_id", storeutil.DumpRow(func(sc scanner) (engram.Memory, error) { return scanMemory(sc) }, storeutil.MemoryRecord, fn)},
		{"SELECT " + versionCols + " FROM memory_versions v ORDER BY v.org, v.project, v.memory_id, v.user_id, v.version", storeutil.DumpRow(scanVersion, storeutil.VersionRecord, fn)},
		{"SELECT " + auditCols + " FROM audit a ORDER BY a.org, a.project, a.id, a.user_id", storeutil.DumpRow(scanAudit, storeutil.AuditRecord, fn)},
		{`SELECT m.id, m.org, m.project, m.user_id, m.agent, m.session, v.embedder, v.field, v.dim, v.vec
			FROM memory_vectors v JOIN memories m ON m.org = v.org AND m.project = v.project AND m.user_id = v.user_id AND m.id = v.memory_id
			ORDER BY v.org, v.project, v.memory_id, v.user_id, v.embedder, v.field`, func(sc scanner) error {
			var (
				r    engram.StoredVector
				dim  int
				blob []byte
			)
			n := &r.Namespace
			if err := sc.Scan(&r.MemoryID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &r.Embedder, &r.Field, &dim, &blob); err != nil {
				return err
			}
			var err error
			if r.Vec, err = storeutil.DecodeVec(blob, dim); err != nil {
				return fmt.Errorf("memory %s %s vector: %w", r.MemoryID, r.Field, err)
			}
			return call(engram.DumpRecord{Record: engram.Record{Type: engram.RecordVector}, Vector: &r})
		}},
		{"SELECT key, value FROM meta WHERE key <> '" + metaHorizon + "' ORDER BY key", func(sc scanner) error {
			var e engram.MetaEntry
			if err := sc.Scan(&e.Key, &e.Value); err != nil {
				return err
			}
			return call(engram.DumpRecord{Record: engram.Record{Type: engram.RecordMeta}, Meta: &e})
		}},
	}
	for _, st := range steps {
		if err := t.each(ctx, "dump", st.q, nil, st.emit); err != nil {
			return err
		}
	}
	return nil
}

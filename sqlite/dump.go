package sqlite

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// Dump calls fn for every record of every tenant, as engram.Reader.Dump
// describes; TEXT columns compare by bytes (the BINARY collation), which
// gives the documented order. The change-log horizon is left out: it
// numbers this database's changes and means nothing in another. fn's error
// stops the dump and is returned as is. It is for maintenance only.
func (t *adminTx) Dump(ctx context.Context, fn func(engram.DumpRecord) error) error {
	steps := []struct {
		q    string
		emit func(scanner) error
	}{
		{"SELECT " + storeutil.EpisodeCols + " FROM episodes e ORDER BY e.org, e.project, e.id, e.user_id", storeutil.DumpRow(scanEpisode, storeutil.EpisodeRecord, fn)},
		{"SELECT " + storeutil.MemoryCols + " FROM memories m ORDER BY m.org, m.project, m.id, m.user_id", storeutil.DumpRow(func(sc scanner) (engram.Memory, error) { return scanMemory(sc) }, storeutil.MemoryRecord, fn)},
		{"SELECT " + storeutil.VersionCols + " FROM memory_versions v ORDER BY v.org, v.project, v.memory_id, v.user_id, v.version", storeutil.DumpRow(scanVersion, storeutil.VersionRecord, fn)},
		{"SELECT " + storeutil.AuditCols + " FROM audit a ORDER BY a.org, a.project, a.id, a.user_id", storeutil.DumpRow(scanAudit, storeutil.AuditRecord, fn)},
		{"SELECT " + storeutil.DumpVectorCols + `
			FROM memory_vectors v JOIN memories m ON m.org = v.org AND m.project = v.project AND m.user_id = v.user_id AND m.id = v.memory_id
			ORDER BY v.org, v.project, v.memory_id, v.user_id, v.embedder, v.field`, storeutil.DumpVectorRow[scanner](fn)},
		{"SELECT key, value FROM meta WHERE key <> '" + metaHorizon + "' ORDER BY key", storeutil.DumpMetaRow[scanner](fn)},
	}
	for _, st := range steps {
		if err := t.each(ctx, "dump", st.q, nil, st.emit); err != nil {
			return err
		}
	}
	return nil
}

package postgres

import (
	"context"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// Dump calls fn for every record of every tenant, as engram.Reader.Dump
// describes; keys are compared with the "C" collation, which is byte
// order. fn's error stops the dump and is returned as is; fn must not use
// the Reader while the dump runs. It is for maintenance only.
func (t *adminTx) Dump(ctx context.Context, fn func(engram.DumpRecord) error) error {
	// Each step is one statement over a whole table, read as fast as fn
	// takes it: the statement timeout would cut a large store's dump off.
	if _, err := t.ptx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return t.mapErr(ctx, "dump", err)
	}
	steps := []struct {
		q    string
		emit func(pgx.Row) error
	}{
		{"SELECT " + storeutil.EpisodeCols + ` FROM episodes e ORDER BY e.org COLLATE "C", e.project COLLATE "C", e.id COLLATE "C", e.user_id COLLATE "C"`, storeutil.DumpRow(scanEpisode, storeutil.EpisodeRecord, fn)},
		{"SELECT " + storeutil.MemoryCols + ` FROM memories m ORDER BY m.org COLLATE "C", m.project COLLATE "C", m.id COLLATE "C", m.user_id COLLATE "C"`, storeutil.DumpRow(func(row pgx.Row) (engram.Memory, error) { return scanMemory(row) }, storeutil.MemoryRecord, fn)},
		{"SELECT " + storeutil.VersionCols + ` FROM memory_versions v
			ORDER BY v.org COLLATE "C", v.project COLLATE "C", v.memory_id COLLATE "C", v.user_id COLLATE "C", v.version`, storeutil.DumpRow(scanVersion, storeutil.VersionRecord, fn)},
		{"SELECT " + storeutil.AuditCols + ` FROM audit a ORDER BY a.org COLLATE "C", a.project COLLATE "C", a.id COLLATE "C", a.user_id COLLATE "C"`, storeutil.DumpRow(scanAudit, storeutil.AuditRecord, fn)},
		{"SELECT " + storeutil.DumpVectorCols + `
			FROM memory_vectors v JOIN memories m ON m.tenant = v.tenant AND m.user_id = v.user_id AND m.id = v.memory_id
			ORDER BY m.org COLLATE "C", m.project COLLATE "C", v.memory_id COLLATE "C", v.user_id COLLATE "C", v.embedder COLLATE "C", v.field COLLATE "C"`, storeutil.DumpVectorRow[pgx.Row](fn)},
		{`SELECT key, value FROM meta ORDER BY key COLLATE "C"`, storeutil.DumpMetaRow[pgx.Row](fn)},
	}
	for _, st := range steps {
		if err := t.each(ctx, "dump", st.q, nil, st.emit); err != nil {
			return err
		}
	}
	return nil
}

// ScanMemories returns up to limit memories of every tenant, in any status,
// ordered by (org, project, id) byte by byte and strictly after the key
// after; the zero key starts at the beginning. It is for maintenance only:
// it crosses tenants (and shards). EINVALID if limit is not positive.
func (t *adminTx) ScanMemories(ctx context.Context, after engram.MemoryKey, limit int) ([]engram.Memory, error) {
	for _, s := range []string{after.Org, after.Project, after.User, after.ID} {
		if err := storable("scan key", s); err != nil {
			return nil, err
		}
	}
	return memoryRows(ctx, t.base, "scan memories", "SELECT "+storeutil.MemoryCols+` FROM memories m
		WHERE (m.org, m.project, m.user_id, m.id) > ($1, $2, $3, $4) ORDER BY m.org, m.project, m.user_id, m.id LIMIT $5`,
		[]any{after.Org, after.Project, after.User, after.ID, limit})
}

// memoryRows returns the memories sql selects (its columns storeutil.MemoryCols),
// with the error of the query or of a row.
func memoryRows(ctx context.Context, t *base, op, sql string, args []any) ([]engram.Memory, error) {
	return collect(ctx, t, op, sql, args, func(row pgx.Row) (engram.Memory, error) { return scanMemory(row) })
}

// Lapsed implements engram.Expirer: up to limit active memories of every
// tenant whose expires_at is at or before at, soonest first. It crosses
// tenants (and shards). EINVALID if limit is not positive.
func (t *adminTx) Lapsed(ctx context.Context, at time.Time, limit int) ([]engram.Memory, error) {
	return memoryRows(ctx, t.base, "read lapsed memories", "SELECT "+storeutil.MemoryCols+` FROM memories m
		WHERE m.status = 'active' AND m.expires_at IS NOT NULL AND m.expires_at <= $1
		ORDER BY m.expires_at, m.org, m.project, m.id LIMIT $2`,
		[]any{at, limit})
}

package postgres

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/jackc/pgx/v5"
)

// PurgeMemory deletes the memory with n's tenant and id, its vectors (by
// the foreign key) and its versions, and clears the detail of the audit
// entries of its user that name it. Nothing to delete is not an error;
// EINVALID for a bad namespace or id.
func (t *adminTx) PurgeMemory(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	rows, err := t.ptx.Query(ctx, `WITH v AS (
			DELETE FROM memory_versions WHERE tenant = $1 AND user_id = $3 AND memory_id = $2)
		DELETE FROM memories WHERE tenant = $1 AND user_id = $3 AND id = $2 RETURNING user_id`, n.Tenant(), id, n.User)
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

// PurgeEpisode deletes the episode with n's tenant, user and id. Nothing
// to delete is not an error; EINVALID for a bad namespace or id.
func (t *adminTx) PurgeEpisode(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.ptx.Exec(ctx, "DELETE FROM episodes WHERE tenant = $1 AND user_id = $2 AND id = $3", n.Tenant(), n.User, id)
	return t.mapErr(ctx, "purge episode", err)
}

// PurgeScope deletes every episode, memory, version and vector in s,
// ignoring s.IncludeShared (it never widens a write), and keeps the audit
// log as tombstones (detail cleared). EINVALID if s names no user, agent or session.
func (t *adminTx) PurgeScope(ctx context.Context, s engram.Scope) (engram.PurgeCounts, error) {
	var c engram.PurgeCounts
	if err := t.checkPurgeScope(s); err != nil {
		return c, err
	}
	s.IncludeShared = false
	// The statement timeout is for searches and ordinary writes; a purge
	// of a large scope (100k memories took 14 s) must not be cut off and
	// rolled back by it, so its statements run until done or until ctx
	// ends.
	if _, err := t.ptx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return c, t.mapErr(ctx, "purge scope", err)
	}
	var err error
	if c.Versions, err = t.purgeScopeVersions(ctx, s); err != nil {
		return c, err
	}
	if c.Memories, err = t.purgeScopeMemories(ctx, s); err != nil {
		return c, err
	}
	if c.Episodes, err = t.purgeScopeEpisodes(ctx, s); err != nil {
		return c, err
	}
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
	if err := t.clearScopeAudit(ctx, s); err != nil {
		return c, err
	}
	return c, t.purgeScopeJobs(ctx, s)
}

// checkPurgeScope refuses a purge in a read-only transaction, of a bad
// scope, or of a scope that names no user, agent or session (EINVALID).
func (t *adminTx) checkPurgeScope(s engram.Scope) error {
	if err := t.writable(); err != nil {
		return err
	}
	return nil
}

// purgeScopeVersions deletes the versions in s, and any left under another
// namespace by a memory that moved into it; it runs while the memories
// still exist, and says how many it deleted.
func (t *adminTx) purgeScopeVersions(ctx context.Context, s engram.Scope) (int, error) {
	vq := &query{}
	vq.scope("v.", s)
	mq := &query{args: vq.args}
	mq.scope("m.", s)
	tag, err := t.ptx.Exec(ctx, "DELETE FROM memory_versions v WHERE v.tenant = $1 AND (("+vq.String()+
		") OR (v.user_id, v.memory_id) IN (SELECT m.user_id, m.id FROM memories m WHERE "+mq.String()+"))", mq.args...)
	if err != nil {
		return 0, t.mapErr(ctx, "purge scope", err)
	}
	return int(tag.RowsAffected()), nil
}

// purgeScopeMemories deletes the memories in s (their vectors go by the
// foreign key), marks each changed, and says how many it deleted.
func (t *adminTx) purgeScopeMemories(ctx context.Context, s engram.Scope) (int, error) {
	q := &query{}
	q.scope("m.", s)
	rows, err := t.ptx.Query(ctx, "DELETE FROM memories m WHERE "+q.String()+" RETURNING m.user_id, m.id", q.args...)
	if err != nil {
		return 0, t.mapErr(ctx, "purge scope", err)
	}
	var (
		n        int
		user, id string
	)
	_, err = pgx.ForEachRow(rows, []any{&user, &id}, func() error {
		n++
		t.changed(s.Tenant(), user, id)
		return nil
	})
	if err != nil {
		return n, t.mapErr(ctx, "purge scope", err)
	}
	return n, nil
}

// purgeScopeEpisodes deletes the episodes in s and says how many.
func (t *adminTx) purgeScopeEpisodes(ctx context.Context, s engram.Scope) (int, error) {
	q := &query{}
	q.scope("e.", s)
	tag, err := t.ptx.Exec(ctx, "DELETE FROM episodes e WHERE "+q.String(), q.args...)
	if err != nil {
		return 0, t.mapErr(ctx, "purge scope", err)
	}
	return int(tag.RowsAffected()), nil
}

// clearScopeAudit clears the detail of the audit entries in s: the log
// keeps that each change happened, when and by whom, but not what the
// client wrote about it.
func (t *adminTx) clearScopeAudit(ctx context.Context, s engram.Scope) error {
	q := &query{}
	q.scope("a.", s)
	if _, err := t.ptx.Exec(ctx, "UPDATE audit a SET detail = '' WHERE a.detail <> '' AND "+q.String(), q.args...); err != nil {
		return t.mapErr(ctx, "purge scope", err)
	}
	return nil
}

// purgeScopeJobs deletes the scope's background jobs: they name its
// episodes.
func (t *adminTx) purgeScopeJobs(ctx context.Context, s engram.Scope) error {
	q := &query{}
	q.scope("j.", s)
	if _, err := t.ptx.Exec(ctx, "DELETE FROM jobs j WHERE "+q.String(), q.args...); err != nil {
		return t.mapErr(ctx, "purge scope", err)
	}
	return nil
}

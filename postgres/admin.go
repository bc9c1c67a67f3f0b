package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// adminTx is the bookkeeping of a transaction: the audit log, store-wide
// meta values, exports, the cross-tenant dump and scans for maintenance,
// and the purges of memories, episodes and whole scopes.
type adminTx struct{ *base }

// Audit returns a page of the audit entries in s matching f, newest first;
// EINVALID for a bad scope, limit or cursor.
func (t *adminTx) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) ([]engram.AuditEntry, string, error) {
	limit := f.Limit // clamped in front of the store
	q := &query{}
	q.scope("a.", s)
	if err := auditFilter(q, &f); err != nil {
		return nil, "", err
	}
	if f.Cursor != "" {
		id, err := storeutil.AuditAfter(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		q.where("a.id < " + q.arg(id))
	}
	sql := "SELECT " + storeutil.AuditCols + " FROM audit a WHERE " + q.String() + " ORDER BY a.id DESC LIMIT " + q.arg(limit+1)
	var out []engram.AuditEntry
	err := t.each(ctx, "audit", sql, q.args, func(row pgx.Row) error {
		a, err := scanAudit(row)
		out = append(out, a)
		return err
	})
	return storeutil.AuditPage(out, limit, err)
}

// InsertAudit appends a to the audit log. EINVALID for a bad namespace or
// id or an empty op; ECONFLICT if its user has an entry with that id in
// the tenant (another user's entry with the id is no conflict).
func (t *adminTx) InsertAudit(ctx context.Context, a *engram.AuditEntry) error {
	if err := t.writable(); err != nil {
		return err
	}
	for _, f := range append([]string{a.Op, a.Actor, a.Detail}, a.IDs...) {
		if err := storable("audit entry", f); err != nil {
			return err
		}
	}
	n := a.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO audit (tenant, org, project, user_id, agent, session, id,
		actor, op, ids, detail, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT DO NOTHING`,
		n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, a.ID, a.Actor, a.Op, nilIfEmpty(a.IDs),
		a.Detail, a.At)
	if err != nil {
		return t.mapErr(ctx, "insert audit", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "audit entry %s already exists", a.ID)
	}
	return nil
}

// checkMetaKey adds to storeutil.CheckMetaKey the refusal of a NUL
// character, which a text column cannot hold (EINVALID).
func checkMetaKey(key string) error {
	if err := storeutil.CheckMetaKey(key); err != nil {
		return err
	}
	return storable("meta key", key)
}

// Meta returns the store-wide value under key, or "" if there is none;
// EINVALID for an empty or overlong key.
func (t *adminTx) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := t.ptx.QueryRow(ctx, "SELECT value FROM meta WHERE key = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, t.mapErr(ctx, "meta", err)
}

// SetMeta stores value under key, replacing any value there; an empty value
// deletes the key. EINVALID for an empty or overlong key or a value that is
// not UTF-8 or holds a NUL character.
func (t *adminTx) SetMeta(ctx context.Context, key, value string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storable(fmt.Sprintf("meta value of %q", key), value); err != nil {
		return err
	}
	var err error
	if value == "" {
		_, err = t.ptx.Exec(ctx, "DELETE FROM meta WHERE key = $1", key)
	} else {
		_, err = t.ptx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	}
	return t.mapErr(ctx, "set meta", err)
}

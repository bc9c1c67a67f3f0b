package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/engramhq/engram"
)

// VaultKey returns the wrapped data key of org/project, or ENOTFOUND.
func (t *adminTx) VaultKey(ctx context.Context, org, project string) (*engram.VaultKey, error) {
	k := engram.VaultKey{Org: org, Project: project}
	var created int64
	err := t.queryRow(ctx, `SELECT wrapped, created_at FROM vault_keys WHERE org = ? AND project = ?`, org, project).
		Scan(&k.Wrapped, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "tenant %s/%s has no vault key", org, project)
	} else if err != nil {
		return nil, mapErr(ctx, "get vault key", err)
	}
	k.CreatedAt = fromMicros(created)
	return &k, nil
}

// VaultKeys returns every tenant's wrapped data key ordered by tenant.
func (t *adminTx) VaultKeys(ctx context.Context) ([]engram.VaultKey, error) {
	rows, err := t.query(ctx, `SELECT org, project, wrapped, created_at FROM vault_keys ORDER BY org, project`)
	if err != nil {
		return nil, mapErr(ctx, "list vault keys", err)
	}
	defer rows.Close()
	var out []engram.VaultKey
	for rows.Next() {
		var k engram.VaultKey
		var created int64
		if err := rows.Scan(&k.Org, &k.Project, &k.Wrapped, &created); err != nil {
			return nil, mapErr(ctx, "list vault keys", err)
		}
		k.CreatedAt = fromMicros(created)
		out = append(out, k)
	}
	return out, mapErr(ctx, "list vault keys", rows.Err())
}

// InsertVaultKey stores a tenant's first data key; EINVALID for a bad
// tenant or an empty key, ECONFLICT if the tenant has one.
func (t *adminTx) InsertVaultKey(ctx context.Context, k *engram.VaultKey) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO vault_keys (org, project, wrapped, created_at) VALUES (?, ?, ?, ?)`,
		k.Org, k.Project, k.Wrapped, micros(k.CreatedAt))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "tenant %s/%s already has a vault key", k.Org, k.Project)
	}
	return mapErr(ctx, "insert vault key", err)
}

// ReplaceVaultKey overwrites a tenant's wrapped key; ENOTFOUND if it has
// none.
func (t *adminTx) ReplaceVaultKey(ctx context.Context, k *engram.VaultKey) error {
	if err := t.writable(); err != nil {
		return err
	}
	res, err := t.exec(ctx, `UPDATE vault_keys SET wrapped = ? WHERE org = ? AND project = ?`, k.Wrapped, k.Org, k.Project)
	if err != nil {
		return mapErr(ctx, "replace vault key", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return mapErr(ctx, "replace vault key", err)
	} else if n == 0 {
		return engram.Errorf(engram.ENOTFOUND, "tenant %s/%s has no vault key", k.Org, k.Project)
	}
	return nil
}

package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// VaultKey returns the wrapped data key of org/project, or ENOTFOUND.
func (t *keyTx) VaultKey(ctx context.Context, org, project string) (*engram.VaultKey, error) {
	none := engram.Errorf(engram.ENOTFOUND, "tenant %s/%s has no vault key", org, project)
	if storable("org", org) != nil || storable("project", project) != nil {
		return nil, none
	}
	k := engram.VaultKey{Org: org, Project: project}
	err := t.ptx.QueryRow(ctx, `SELECT wrapped, created_at FROM vault_keys WHERE org = $1 AND project = $2`, org, project).
		Scan(&k.Wrapped, &k.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none
	} else if err != nil {
		return nil, t.mapErr(ctx, "get vault key", err)
	}
	k.CreatedAt = k.CreatedAt.UTC()
	return &k, nil
}

// VaultKeys returns every tenant's wrapped data key ordered by tenant.
func (t *keyTx) VaultKeys(ctx context.Context) ([]engram.VaultKey, error) {
	rows, err := t.ptx.Query(ctx, `SELECT org, project, wrapped, created_at FROM vault_keys ORDER BY org, project`)
	if err != nil {
		return nil, t.mapErr(ctx, "list vault keys", err)
	}
	defer rows.Close()
	var out []engram.VaultKey
	for rows.Next() {
		var k engram.VaultKey
		if err := rows.Scan(&k.Org, &k.Project, &k.Wrapped, &k.CreatedAt); err != nil {
			return nil, t.mapErr(ctx, "list vault keys", err)
		}
		k.CreatedAt = k.CreatedAt.UTC()
		out = append(out, k)
	}
	return out, t.mapErr(ctx, "list vault keys", rows.Err())
}

// InsertVaultKey stores a tenant's first data key; EINVALID for a bad
// tenant or an empty key, ECONFLICT if the tenant has one.
func (t *keyTx) InsertVaultKey(ctx context.Context, k *engram.VaultKey) error {
	if err := t.checkVaultKey(k); err != nil {
		return err
	}
	// ON CONFLICT DO NOTHING: a duplicate is reported without an error from
	// the server, which would abort the whole transaction.
	tag, err := t.ptx.Exec(ctx, `INSERT INTO vault_keys (org, project, wrapped, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, k.Org, k.Project, k.Wrapped, k.CreatedAt)
	if err != nil {
		return t.mapErr(ctx, "insert vault key", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "tenant %s/%s already has a vault key", k.Org, k.Project)
	}
	return nil
}

// ReplaceVaultKey overwrites a tenant's wrapped key; ENOTFOUND if it has
// none.
func (t *keyTx) ReplaceVaultKey(ctx context.Context, k *engram.VaultKey) error {
	if err := t.checkVaultKey(k); err != nil {
		return err
	}
	tag, err := t.ptx.Exec(ctx, `UPDATE vault_keys SET wrapped = $1 WHERE org = $2 AND project = $3`, k.Wrapped, k.Org, k.Project)
	if err != nil {
		return t.mapErr(ctx, "replace vault key", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ENOTFOUND, "tenant %s/%s has no vault key", k.Org, k.Project)
	}
	return nil
}

func (t *keyTx) checkVaultKey(k *engram.VaultKey) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storable("org", k.Org); err != nil {
		return err
	}
	return storable("project", k.Project)
}

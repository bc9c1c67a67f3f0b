package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/engramhq/engram"
)

const keyCols = `id, name, org, project, user_id, role, hash, created_at, revoked_at`

func scanKey(sc scanner) (engram.APIKey, error) {
	var (
		k       engram.APIKey
		created int64
		revoked sql.NullInt64
	)
	if err := sc.Scan(&k.ID, &k.Name, &k.Org, &k.Project, &k.User, &k.Role, &k.Hash, &created, &revoked); err != nil {
		return k, err
	}
	k.CreatedAt = fromMicros(created)
	if revoked.Valid {
		t := fromMicros(revoked.Int64)
		k.RevokedAt = &t
	}
	return k, nil
}

// GetKey returns the key with this id, revoked or not, or ENOTFOUND.
func (t *adminTx) GetKey(ctx context.Context, id string) (*engram.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "no API key %q", shortID(id))
	} else if err != nil {
		return nil, mapErr(ctx, "get key", err)
	}
	return &k, nil
}

// ListKeys returns the keys of org/project, or of every tenant when org is
// "", ordered by id.
func (t *adminTx) ListKeys(ctx context.Context, org, project string) ([]engram.APIKey, error) {
	q, args := `SELECT `+keyCols+` FROM api_keys ORDER BY id`, []any(nil)
	if org != "" {
		q, args = `SELECT `+keyCols+` FROM api_keys WHERE org = ? AND project = ? ORDER BY id`, []any{org, project}
	}
	return collect(ctx, t.base, "list keys", q, args, scanKey)
}

// InsertKey stores a new key; EINVALID without an id, a role or a hash,
// ECONFLICT if the id exists.
func (t *adminTx) InsertKey(ctx context.Context, k *engram.APIKey) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO api_keys (`+keyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Name, k.Org, k.Project, k.User, k.Role, k.Hash, micros(k.CreatedAt), microsPtr(k.RevokedAt))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "API key %s already exists", k.ID)
	}
	return mapErr(ctx, "insert key", err)
}

// RevokeKey marks the key revoked at the time at, keeping an earlier
// revocation; ENOTFOUND if there is no such key.
func (t *adminTx) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	res, err := t.exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, micros(at), id)
	if err != nil {
		return mapErr(ctx, "revoke key", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return mapErr(ctx, "revoke key", err)
	} else if n == 0 {
		return engram.Errorf(engram.ENOTFOUND, "no API key %q", shortID(id))
	}
	return nil
}

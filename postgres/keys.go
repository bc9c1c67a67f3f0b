package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
)

// keyTx is the key capability of a transaction: API keys
// (engram.KeyReader and KeyWriter) and tenants' wrapped vault keys
// (engram.VaultKeyReader and VaultKeyWriter).
type keyTx struct{ *base }

const keyCols = `id, name, org, project, user_id, role, hash, created_at, revoked_at`

func scanKey(row pgx.Row) (engram.APIKey, error) {
	var k engram.APIKey
	if err := row.Scan(&k.ID, &k.Name, &k.Org, &k.Project, &k.User, &k.Role, &k.Hash, &k.CreatedAt, &k.RevokedAt); err != nil {
		return k, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	if k.RevokedAt != nil {
		t := k.RevokedAt.UTC()
		k.RevokedAt = &t
	}
	return k, nil
}

// GetKey returns the key with this id, revoked or not, or ENOTFOUND.
func (t *keyTx) GetKey(ctx context.Context, id string) (*engram.APIKey, error) {
	if storable("key id", id) != nil {
		return nil, engram.Errorf(engram.ENOTFOUND, "no API key %q", shortID(id))
	}
	k, err := scanKey(t.ptx.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "no API key %q", shortID(id))
	} else if err != nil {
		return nil, t.mapErr(ctx, "get key", err)
	}
	return &k, nil
}

// ListKeys returns the keys of org/project, or of every tenant when org is
// "", ordered by id.
func (t *keyTx) ListKeys(ctx context.Context, org, project string) ([]engram.APIKey, error) {
	q, args := `SELECT `+keyCols+` FROM api_keys ORDER BY id`, []any(nil)
	if org != "" {
		if storable("org", org) != nil || storable("project", project) != nil {
			return nil, nil
		}
		q, args = `SELECT `+keyCols+` FROM api_keys WHERE org = $1 AND project = $2 ORDER BY id`, []any{org, project}
	}
	return collect(ctx, t.base, "list keys", q, args, scanKey)
}

// InsertKey stores a new key; EINVALID without an id, a role or a hash,
// ECONFLICT if the id exists.
func (t *keyTx) InsertKey(ctx context.Context, k *engram.APIKey) error {
	if err := t.writable(); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"key id", k.ID}, {"key name", k.Name}, {"key role", k.Role}} {
		if err := storable(f.name, f.v); err != nil {
			return err
		}
	}
	// ON CONFLICT DO NOTHING: a duplicate is reported without an error from
	// the server, which would abort the whole transaction.
	tag, err := t.ptx.Exec(ctx, `INSERT INTO api_keys (`+keyCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT DO NOTHING`,
		k.ID, k.Name, k.Org, k.Project, k.User, k.Role, k.Hash, k.CreatedAt, k.RevokedAt)
	if err != nil {
		return t.mapErr(ctx, "insert key", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "API key %s already exists", k.ID)
	}
	return nil
}

// RevokeKey marks the key revoked at the time at, keeping an earlier
// revocation; ENOTFOUND if there is no such key.
func (t *keyTx) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	if storable("key id", id) != nil {
		return engram.Errorf(engram.ENOTFOUND, "no API key %q", shortID(id))
	}
	tag, err := t.ptx.Exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`, at, id)
	if err != nil {
		return t.mapErr(ctx, "revoke key", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ENOTFOUND, "no API key %q", shortID(id))
	}
	return nil
}

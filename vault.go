package engram

import (
	"context"
	"time"
)

// The vault keeps memories of kind vault encrypted at rest. Each tenant has
// one random data key, stored wrapped (encrypted) by a master key that only
// the server process holds; a vault memory's sensitive fields are sealed
// under its tenant's data key. Reading a vault memory needs two things: the
// request asks for the vault, and the caller may read it (WithVault marks
// both, see package http). Without them vault memories are left out of
// lists, searches and exports, and getting one by id answers ENOTFOUND.

// VaultKey is the wrapped data key of one tenant (Org, Project).
type VaultKey struct {
	Org       string    `json:"org"`
	Project   string    `json:"project"`
	Wrapped   []byte    `json:"wrapped"` // the data key sealed by the master key
	CreatedAt time.Time `json:"created_at"`
}

// VaultKeyReader is the capability of a Reader whose store keeps the
// vault's wrapped data keys. They are tenant records looked up by tenant.
type VaultKeyReader interface {
	// VaultKey returns the wrapped data key of the tenant org/project, or
	// ENOTFOUND when it has none yet.
	VaultKey(ctx context.Context, org, project string) (*VaultKey, error)
	// VaultKeys returns the wrapped data keys of every tenant, ordered by
	// (org, project), for rotating the master key.
	VaultKeys(ctx context.Context) ([]VaultKey, error)
}

// VaultKeyWriter is the capability of a Tx whose store keeps the vault's
// wrapped data keys.
type VaultKeyWriter interface {
	// InsertVaultKey stores a tenant's first data key; ECONFLICT if the
	// tenant has one, so two servers never make two keys for one tenant.
	InsertVaultKey(ctx context.Context, k *VaultKey) error
	// ReplaceVaultKey overwrites a tenant's wrapped key (the same data key
	// wrapped by a new master key); ENOTFOUND if the tenant has none.
	ReplaceVaultKey(ctx context.Context, k *VaultKey) error
}

type vaultKey struct{}

// WithVault returns a context whose reads include vault memories,
// decrypted and audited: the request asked for the vault and its caller
// may read it. by says who was allowed (e.g. "key 0123abcd"); the audit
// entry of each read records it.
func WithVault(ctx context.Context, by string) context.Context {
	return context.WithValue(ctx, vaultKey{}, by)
}

// VaultFrom reports whether ctx was made by WithVault.
func VaultFrom(ctx context.Context) bool {
	_, ok := ctx.Value(vaultKey{}).(string)
	return ok
}

// VaultGrantFrom returns the by of WithVault, or "".
func VaultGrantFrom(ctx context.Context) string {
	by, _ := ctx.Value(vaultKey{}).(string)
	return by
}

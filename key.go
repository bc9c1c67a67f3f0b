package engram

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"
)

// API keys authenticate clients of the HTTP API. A key is bound to one
// tenant (org and project) and optionally one user, and carries a role. Its
// secret is shown once, when it is made; the store keeps only the SHA-256
// of it, which is enough because the secret is 256 random bits (nothing to
// guess, so nothing a slow hash would protect), and the key's id, which the
// secret starts with, so a presented secret is looked up by id and compared
// in constant time.

// Roles of an API key, each allowing what the one before allows and more.
const (
	RoleRead  = "read"  // GET requests and search
	RoleWrite = "write" // and adding, changing, deleting and importing records
	RoleAdmin = "admin" // and managing keys and purging a scope
)

// roleRank orders the roles; an unknown role ranks 0 and allows nothing.
func roleRank(role string) int {
	switch role {
	case RoleRead:
		return 1
	case RoleWrite:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// keyPrefix starts every secret so that one is recognisable in a log or a
// leak scanner; the id and a separator follow, then the random part.
const keyPrefix = "ek_"

// APIKey is a stored API key. Hash is the SHA-256 of the secret; it never
// leaves the process (it is not serialized).
type APIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name,omitempty"`
	Org       string     `json:"org"`
	Project   string     `json:"project"`
	User      string     `json:"user,omitempty"`
	Role      string     `json:"role"`
	Hash      []byte     `json:"-"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Allows reports whether the key's role includes role.
func (k *APIKey) Allows(role string) bool {
	return roleRank(k.Role) >= roleRank(role) && roleRank(role) > 0
}

// Matches reports, in time independent of where they differ, whether
// secret is this key's secret.
func (k *APIKey) Matches(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	return len(k.Hash) == len(h) && subtle.ConstantTimeCompare(k.Hash, h[:]) == 1
}

// KeySpec says what a new key is bound to: the org and project of
// Namespace and, when set, its user (agent and session must be empty).
type KeySpec struct {
	Namespace Namespace `json:"namespace"`
	Role      string    `json:"role"`
	Name      string    `json:"name,omitempty"`
}

// NewAPIKey makes a key for spec at the time now and returns it with its
// secret; EINVALID for an unknown role, a bad namespace or a name longer
// than MaxNameLen.
func NewAPIKey(spec KeySpec, now time.Time) (*APIKey, string, error) {
	if roleRank(spec.Role) == 0 {
		return nil, "", Errorf(EINVALID, "role %q is not one of read, write, admin", spec.Role)
	}
	n := spec.Namespace
	if err := n.Validate(); err != nil {
		return nil, "", err
	}
	if n.Agent != "" || n.Session != "" {
		return nil, "", Errorf(EINVALID, "namespace.agent and namespace.session must be empty: a key is bound to an org, a project and optionally a user")
	}
	if err := validName("name", spec.Name); err != nil {
		return nil, "", err
	}
	var id [8]byte
	var random [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, "", err
	}
	if _, err := rand.Read(random[:]); err != nil {
		return nil, "", err
	}
	k := &APIKey{
		ID: hex.EncodeToString(id[:]), Name: spec.Name,
		Org: n.Org, Project: n.Project, User: n.User, Role: spec.Role,
		CreatedAt: now,
	}
	secret := keyPrefix + k.ID + "_" + hex.EncodeToString(random[:])
	h := sha256.Sum256([]byte(secret))
	k.Hash = h[:]
	return k, secret, nil
}

// KeyID returns the id a secret names, and false when secret does not have
// the shape of one.
func KeyID(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, keyPrefix)
	if !ok {
		return "", false
	}
	id, random, ok := strings.Cut(rest, "_")
	if !ok || len(id) != 16 || len(random) != 64 {
		return "", false
	}
	return id, true
}

// KeyReader is the capability of a Reader whose store keeps API keys. Keys
// are not tenant records: these calls cross tenants, and callers (the HTTP
// server, the CLI) decide who may see which.
type KeyReader interface {
	// GetKey returns the key with this id, revoked or not, or ENOTFOUND.
	GetKey(ctx context.Context, id string) (*APIKey, error)
	// ListKeys returns the keys of the tenant org/project (of every tenant
	// when org is ""), revoked ones included, ordered by id.
	ListKeys(ctx context.Context, org, project string) ([]APIKey, error)
}

// KeyWriter is the capability of a Tx whose store keeps API keys.
type KeyWriter interface {
	// InsertKey stores a new key; ECONFLICT if its id exists.
	InsertKey(ctx context.Context, k *APIKey) error
	// RevokeKey marks the key revoked at the time at; ENOTFOUND if there is
	// no such key. Revoking a revoked key keeps the first time.
	RevokeKey(ctx context.Context, id string, at time.Time) error
}

// KeyService authenticates API keys and manages them.
type KeyService interface {
	// Authenticate returns the unrevoked key whose secret this is, or an
	// EUNAUTHORIZED error that does not say which check failed.
	Authenticate(ctx context.Context, secret string) (*APIKey, error)
	// CreateKey makes and stores a key; it returns the key and its secret,
	// which is not kept and cannot be shown again.
	CreateKey(ctx context.Context, spec KeySpec) (*APIKey, string, error)
	// ListKeys returns the keys of org/project (every key when org is "").
	ListKeys(ctx context.Context, org, project string) ([]APIKey, error)
	// RevokeKey revokes the key id of org/project (of any tenant when org
	// is ""); ENOTFOUND when it belongs to another tenant or does not exist.
	RevokeKey(ctx context.Context, org, project, id string) error
}

// Keys is the KeyService over a Store, through its transactions'
// KeyReader and KeyWriter.
type Keys struct {
	Store Store
}

// Authenticate implements KeyService.
func (ks Keys) Authenticate(ctx context.Context, secret string) (*APIKey, error) {
	denied := Errorf(EUNAUTHORIZED, "the API key is not valid: it is malformed, unknown or revoked")
	id, ok := KeyID(secret)
	if !ok {
		return nil, denied
	}
	var k *APIKey
	err := ReadFresh(ctx, ks.Store, func(r Reader) error { // one read
		var err error
		k, err = r.GetKey(ctx, id)
		return err
	})
	switch {
	case IsNotFound(err):
		return nil, denied
	case err != nil:
		return nil, err
	case !k.Matches(secret) || k.RevokedAt != nil:
		return nil, denied
	}
	return k, nil
}

// CreateKey implements KeyService.
func (ks Keys) CreateKey(ctx context.Context, spec KeySpec) (*APIKey, string, error) {
	k, secret, err := NewAPIKey(spec, time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, "", err
	}
	err = ks.Store.Update(ctx, func(tx Tx) error {
		return tx.InsertKey(ctx, k)
	})
	if err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// ListKeys implements KeyService.
func (ks Keys) ListKeys(ctx context.Context, org, project string) ([]APIKey, error) {
	var out []APIKey
	err := ks.Store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.ListKeys(ctx, org, project)
		return err
	})
	return out, err
}

// RevokeKey implements KeyService.
func (ks Keys) RevokeKey(ctx context.Context, org, project, id string) error {
	return ks.Store.Update(ctx, func(tx Tx) error {
		k, err := tx.GetKey(ctx, id)
		if err != nil {
			return err
		}
		if org != "" && (k.Org != org || k.Project != project) {
			return Errorf(ENOTFOUND, "no API key %q in %s/%s", id, org, project)
		}
		return tx.RevokeKey(ctx, id, time.Now().UTC().Truncate(time.Microsecond))
	})
}

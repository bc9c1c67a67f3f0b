package vault

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// sealedPrefix starts the stored value of a sealed memory; the version
// lets a later format live beside this one.
const sealedPrefix = "vault:v1:"

// Vault seals and opens vault memories. It keeps the data keys it has
// unwrapped in memory, by tenant; a data key never changes once made (a
// rotation rewraps it), so the cache is never stale.
type Vault struct {
	master cipher.AEAD

	mu   sync.Mutex
	keys map[tenant]cipher.AEAD
}

type tenant struct{ org, project string }

// New returns a Vault with the master key master; an error unless it is
// KeySize bytes.
func New(master []byte) (*Vault, error) {
	aead, err := newAEAD(master)
	if err != nil {
		return nil, err
	}
	return &Vault{master: aead, keys: map[tenant]cipher.AEAD{}}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("vault: a key is %d bytes, not %d", KeySize, len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Check unwraps every data key the store holds, so that a server started
// with another master key refuses to start rather than fail on each read.
// It fails with the store's error, or with one saying the master key is not
// the vault's.
func (v *Vault) Check(ctx context.Context, st engram.Store) error {
	var keys []engram.VaultKey
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		keys, err = r.VaultKeys(ctx)
		return err
	})
	if err != nil {
		return err
	}
	for i := range keys {
		if _, err := v.unwrap(&keys[i]); err != nil {
			return err
		}
	}
	return nil
}

// DataKey returns the data key of the tenant of n. Without one stored it
// makes and stores one when create is set, else returns nil, nil (the
// tenant has no vault memories). It fails with the store's error, or an
// EINTERNAL error when the master key does not open the stored key.
func (v *Vault) DataKey(ctx context.Context, st engram.Store, n engram.Namespace, create bool) (cipher.AEAD, error) {
	t := tenant{n.Org, n.Project}
	v.mu.Lock()
	k := v.keys[t]
	v.mu.Unlock()
	if k != nil {
		return k, nil
	}
	wk, err := readKey(ctx, st, t)
	if err != nil || (wk == nil && !create) {
		return nil, err
	}
	if wk == nil {
		if wk, err = v.makeKey(ctx, st, t); err != nil {
			return nil, err
		}
	}
	if k, err = v.unwrap(wk); err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.keys[t] = k
	v.mu.Unlock()
	return k, nil
}

// readKey returns the wrapped key of t, nil when it has none.
func readKey(ctx context.Context, st engram.Store, t tenant) (*engram.VaultKey, error) {
	var wk *engram.VaultKey
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		wk, err = r.VaultKey(ctx, t.org, t.project)
		return err
	})
	if engram.IsNotFound(err) {
		return nil, nil
	}
	return wk, err
}

// makeKey stores a new random data key for t, wrapped, and returns what
// the store holds afterwards: another server may have made one first.
func (v *Vault) makeKey(ctx context.Context, st engram.Store, t tenant) (*engram.VaultKey, error) {
	dk := make([]byte, KeySize)
	if _, err := rand.Read(dk); err != nil {
		return nil, err
	}
	wk := &engram.VaultKey{Org: t.org, Project: t.project, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	wk.Wrapped = seal(v.master, dk, wrapAD(t))
	err := st.Update(ctx, func(tx engram.Tx) error {
		return tx.InsertVaultKey(ctx, wk)
	})
	if engram.ErrorCode(err) == engram.ECONFLICT {
		return readKey(ctx, st, t)
	}
	return wk, err
}

func (v *Vault) unwrap(wk *engram.VaultKey) (cipher.AEAD, error) {
	dk, err := open(v.master, wk.Wrapped, wrapAD(tenant{wk.Org, wk.Project}))
	if err != nil {
		return nil, engram.Errorf(engram.EINTERNAL, "the vault's master key does not open the data key of tenant %s/%s: the key given (%s or --vault-key-file) is not the one the vault was made with, or the stored key was altered", wk.Org, wk.Project, EnvKey)
	}
	return newAEAD(dk)
}

// wrapAD binds a wrapped data key to its tenant.
func wrapAD(t tenant) []byte {
	return adOf("engram vault data key", t.org, t.project)
}

// memoryAD binds a sealed memory to its namespace and id.
func memoryAD(m *engram.Memory) []byte {
	n := m.Namespace
	return adOf("engram vault memory v1", n.Org, n.Project, n.User, n.Agent, n.Session, m.ID)
}

// adOf joins parts, each prefixed with its length, so no two lists of
// parts give the same bytes.
func adOf(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// seal returns a random nonce followed by the ciphertext of plain.
func seal(aead cipher.AEAD, plain, ad []byte) []byte {
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(fmt.Sprintf("vault: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return aead.Seal(nonce, nonce, plain, ad)
}

func open(aead cipher.AEAD, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("vault: sealed data too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], ad)
}

// secret is what a sealed memory hides.
type secret struct {
	Value       string         `json:"v"`
	Abstraction string         `json:"a,omitempty"`
	Cues        []string       `json:"c,omitempty"`
	Metadata    map[string]any `json:"m,omitempty"`
	Language    string         `json:"l,omitempty"`
}

// Seal returns m as it is stored: its secret fields sealed under dk into
// Value, the others emptied. A memory of another kind, or one already
// sealed, is returned as is.
func Seal(dk cipher.AEAD, m engram.Memory) (engram.Memory, error) {
	if m.Kind != engram.KindVault || IsSealed(&m) {
		return m, nil
	}
	plain, err := json.Marshal(secret{m.Value, m.Abstraction, m.Cues, m.Metadata, m.Language})
	if err != nil {
		return m, fmt.Errorf("vault: seal memory %s: %w", m.ID, err)
	}
	m.Value = sealedPrefix + base64.RawStdEncoding.EncodeToString(seal(dk, plain, memoryAD(&m)))
	m.Abstraction, m.Cues, m.Metadata, m.Language = "", nil, nil, ""
	return m, nil
}

// Open returns m with its sealed fields restored. A memory that is not
// sealed is returned as is. A nil dk (the tenant has no data key), a
// ciphertext altered by a single bit or moved from another memory fail with
// an EINTERNAL error naming the memory: never garbage.
func Open(dk cipher.AEAD, m engram.Memory) (engram.Memory, error) {
	if !IsSealed(&m) {
		return m, nil
	}
	fail := engram.Errorf(engram.EINTERNAL, "vault memory %s cannot be decrypted: its stored ciphertext was altered, moved from another memory, or sealed under another key", m.ID)
	if dk == nil {
		return m, fail
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(m.Value, sealedPrefix))
	if err != nil {
		return m, fail
	}
	plain, err := open(dk, raw, memoryAD(&m))
	if err != nil {
		return m, fail
	}
	var s secret
	if err := storeutil.UnmarshalNumbers(plain, &s); err != nil {
		return m, fail
	}
	m.Value, m.Abstraction, m.Cues, m.Metadata, m.Language = s.Value, s.Abstraction, s.Cues, s.Metadata, s.Language
	return m, nil
}

// IsSealed reports whether m is a vault memory as stored, sealed.
func IsSealed(m *engram.Memory) bool {
	return m.Kind == engram.KindVault && strings.HasPrefix(m.Value, sealedPrefix)
}

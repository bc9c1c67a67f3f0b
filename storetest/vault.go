package storetest

import (
	"bytes"
	"testing"

	"github.com/engramhq/engram"
)

func vaultKey(st engram.Store, org, project string) (*engram.VaultKey, error) {
	var k *engram.VaultKey
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		k, err = r.VaultKey(ctx, org, project)
		return err
	})
	return k, err
}

// testVaultKeys: a tenant's wrapped data key round-trips, a second one for
// the same tenant is ECONFLICT and changes nothing, a replacement needs an
// existing key, tenants do not see each other's, and the list is in tenant
// order.
func testVaultKeys(t *testing.T, open Opener) {
	st := open(t)
	if _, err := vaultKey(st, "acme", "app"); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("VaultKey of a tenant without one: %v, want ENOTFOUND", err)
	}
	a := &engram.VaultKey{Org: "acme", Project: "app", Wrapped: []byte{0, 1, 2, 255}, CreatedAt: At(0)}
	g := &engram.VaultKey{Org: "globex", Project: "app", Wrapped: []byte("globex key"), CreatedAt: At(1)}
	insert := func(k *engram.VaultKey) error {
		return st.Update(ctx, func(tx engram.Tx) error { return tx.InsertVaultKey(ctx, k) })
	}
	replace := func(k *engram.VaultKey) error {
		return st.Update(ctx, func(tx engram.Tx) error { return tx.ReplaceVaultKey(ctx, k) })
	}
	for _, k := range []*engram.VaultKey{g, a} {
		if err := insert(k); err != nil {
			t.Fatalf("InsertVaultKey: %v", err)
		}
	}
	got, err := vaultKey(st, "acme", "app")
	if err != nil || !bytes.Equal(got.Wrapped, a.Wrapped) || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("VaultKey = %+v, %v; want %+v", got, err, a)
	}
	second := &engram.VaultKey{Org: "acme", Project: "app", Wrapped: []byte("another"), CreatedAt: At(2)}
	if err := insert(second); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Errorf("a second key for a tenant: %v, want ECONFLICT", err)
	}
	if got, _ := vaultKey(st, "acme", "app"); !bytes.Equal(got.Wrapped, a.Wrapped) {
		t.Errorf("a refused second key changed the first: %q", got.Wrapped)
	}
	if err := replace(&engram.VaultKey{Org: "initech", Project: "app", Wrapped: []byte("x")}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("replacing a key that does not exist: %v, want ENOTFOUND", err)
	}
	if err := replace(second); err != nil {
		t.Fatalf("ReplaceVaultKey: %v", err)
	}
	if got, _ := vaultKey(st, "acme", "app"); !bytes.Equal(got.Wrapped, second.Wrapped) {
		t.Errorf("after ReplaceVaultKey the key is %q", got.Wrapped)
	}
	if got, _ := vaultKey(st, "globex", "app"); !bytes.Equal(got.Wrapped, g.Wrapped) {
		t.Errorf("replacing acme's key changed globex's: %q", got.Wrapped)
	}
	if err := insert(&engram.VaultKey{Org: "acme", Project: "other"}); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("a key without bytes: %v, want EINVALID", err)
	}
	var all []engram.VaultKey
	err = st.View(ctx, func(r engram.Reader) error {
		var err error
		all, err = r.VaultKeys(ctx)
		return err
	})
	if err != nil || len(all) != 2 || all[0].Org != "acme" || all[1].Org != "globex" {
		t.Errorf("VaultKeys = %+v, %v; want acme then globex", all, err)
	}
}

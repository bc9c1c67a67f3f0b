package storetest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func newKey(t testing.TB, spec engram.KeySpec) (*engram.APIKey, string) {
	t.Helper()
	k, secret, err := engram.NewAPIKey(spec, At(0))
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

func getKey(st engram.Store, id string) (*engram.APIKey, error) {
	var k *engram.APIKey
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		k, err = r.GetKey(ctx, id)
		return err
	})
	return k, err
}

func listKeys(t testing.TB, st engram.Store, org, project string) []string {
	t.Helper()
	var ids []string
	err := st.View(ctx, func(r engram.Reader) error {
		ks, err := r.ListKeys(ctx, org, project)
		for _, k := range ks {
			ids = append(ids, k.ID)
		}
		return err
	})
	if err != nil {
		t.Fatalf("ListKeys(%q, %q): %v", org, project, err)
	}
	return ids
}

func insertKey(st engram.Store, k *engram.APIKey) error {
	return st.Update(ctx, func(tx engram.Tx) error { return tx.InsertKey(ctx, k) })
}

func revokeKey(st engram.Store, id string, at time.Time) error {
	return st.Update(ctx, func(tx engram.Tx) error { return tx.RevokeKey(ctx, id, at) })
}

// testKeys: keys round-trip with their binding, list per tenant in id
// order, and a revocation keeps its first time.
func testKeys(t *testing.T, open Opener) {
	st := open(t)
	a, _ := newKey(t, engram.KeySpec{Namespace: engram.Namespace{Org: "acme", Project: "app", User: "u1"}, Role: engram.RoleRead, Name: "ci 🙂"})
	b, _ := newKey(t, engram.KeySpec{Namespace: engram.Namespace{Org: "acme", Project: "app"}, Role: engram.RoleAdmin})
	c, _ := newKey(t, engram.KeySpec{Namespace: engram.Namespace{Org: "globex", Project: "app"}, Role: engram.RoleWrite})
	for _, k := range []*engram.APIKey{a, b, c} {
		if err := insertKey(st, k); err != nil {
			t.Fatalf("InsertKey: %v", err)
		}
	}
	got, err := getKey(st, a.ID)
	if err != nil {
		t.Fatalf("GetKey: %v", err)
	}
	if !bytes.Equal(got.Hash, a.Hash) {
		t.Errorf("hash = %x, want %x", got.Hash, a.Hash)
	}
	sameJSON(t, "key", got, a)
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("created_at %v is not in UTC", got.CreatedAt)
	}

	want := []string{a.ID, b.ID}
	if b.ID < a.ID {
		want = []string{b.ID, a.ID}
	}
	if got := listKeys(t, st, "acme", "app"); !slices.Equal(got, want) {
		t.Errorf("ListKeys(acme, app) = %v, want %v", got, want)
	}
	if got := listKeys(t, st, "globex", "app"); !slices.Equal(got, []string{c.ID}) {
		t.Errorf("ListKeys(globex, app) = %v, want [%s]", got, c.ID)
	}
	if got := listKeys(t, st, "", ""); len(got) != 3 {
		t.Errorf("ListKeys of every tenant = %v, want 3 keys", got)
	}
	if got := listKeys(t, st, "acme", "other"); len(got) != 0 {
		t.Errorf("ListKeys(acme, other) = %v, want none", got)
	}

	first := At(time.Hour)
	if err := revokeKey(st, a.ID, first); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	if err := revokeKey(st, a.ID, At(2*time.Hour)); err != nil {
		t.Fatalf("RevokeKey again: %v", err)
	}
	got, err = getKey(st, a.ID)
	if err != nil {
		t.Fatalf("GetKey after revoking: %v", err)
	}
	if got.RevokedAt == nil || !got.RevokedAt.Equal(first) {
		t.Errorf("revoked_at = %v, want the first revocation %v", got.RevokedAt, first)
	}
	if got, err := getKey(st, b.ID); err != nil || got.RevokedAt != nil {
		t.Errorf("the other key: %+v, %v; want it unrevoked", got, err)
	}
}

// testKeysRefusals: unknown ids are ENOTFOUND, duplicates ECONFLICT, and a
// key without a hash is refused.
func testKeysRefusals(t *testing.T, open Opener) {
	st := open(t)
	k, _ := newKey(t, engram.KeySpec{Namespace: engram.Namespace{Org: "acme", Project: "app"}, Role: engram.RoleWrite})
	if err := insertKey(st, k); err != nil {
		t.Fatal(err)
	}
	if err := insertKey(st, k); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Errorf("InsertKey of a duplicate: %v, want ECONFLICT", err)
	}
	for _, id := range []string{"0000000000000000", "", "bad\xff", "nul\x00"} {
		if _, err := getKey(st, id); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("GetKey(%q): %v, want ENOTFOUND", id, err)
		}
		if err := revokeKey(st, id, At(0)); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("RevokeKey(%q): %v, want ENOTFOUND", id, err)
		}
	}
	bad := *k
	bad.ID, bad.Hash = "0123456789abcdef", nil
	if err := insertKey(st, &bad); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("InsertKey without a hash: %v, want EINVALID", err)
	}
	bad.Hash, bad.Org = k.Hash, ""
	if err := insertKey(st, &bad); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("InsertKey without an org: %v, want EINVALID", err)
	}
}

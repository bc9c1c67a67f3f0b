package storecheck_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storecheck"
)

// backend is a transaction whose every method but the few it defines
// panics (its embedded Tx is nil), so a check that lets a call through to
// it shows, and the few record what they were given.
type backend struct {
	storecheck.Tx
	limit int
	ids   []string
}

func (b *backend) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	b.ids = []string{id}
	return &engram.Memory{ID: id}, nil
}

func (b *backend) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	b.ids = ids
	return nil, nil
}

func (b *backend) SearchText(ctx context.Context, s engram.Scope, q string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	b.limit = limit
	return nil, nil
}

func (b *backend) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error) {
	b.limit = f.Limit
	return nil, "", nil
}

func (b *backend) ListObservations(ctx context.Context, s engram.Scope, f engram.ObservationFilter) ([]engram.Observation, error) {
	b.limit = f.Limit
	return nil, nil
}

func (b *backend) Mentions(ctx context.Context, s engram.Scope, col string, ids []string, limit int) ([]engram.Mention, error) {
	b.ids, b.limit = append([]string{col}, ids...), limit
	return nil, nil
}

func (b *backend) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	b.limit = limit
	return nil, nil
}

var scope = engram.Scope{Org: "o", Project: "p", User: "u"}

// TestRefusedBeforeTheBackend calls methods of every concern with bad
// arguments: each gives its EINVALID (or ENOTFOUND) without reaching the
// backend, whose methods here would panic.
func TestRefusedBeforeTheBackend(t *testing.T) {
	ctx := context.Background()
	tx := storecheck.NewTx(&backend{}, storecheck.Options{Short: func(id string) string { return id[:min(len(id), 8)] }})
	bad := engram.Scope{Org: "", Project: "p"}
	long := strings.Repeat("x", 100)
	cases := []struct {
		name, code, msg string
		call            func() error
	}{
		{"GetMemory scope", engram.EINVALID, "", func() error { _, err := tx.GetMemory(ctx, bad, engram.NewID()); return err }},
		{"GetMemory id", engram.EINVALID, `memory id "xxxxxxxx" is not a valid id`, func() error { _, err := tx.GetMemory(ctx, scope, long); return err }},
		{"SearchText limit", engram.EINVALID, "", func() error { _, err := tx.SearchText(ctx, scope, "q", engram.MemoryFilter{}, -1); return err }},
		{"SearchText filter", engram.EINVALID, "kind", func() error {
			_, err := tx.SearchText(ctx, scope, "q", engram.MemoryFilter{Kinds: []engram.Kind{"nope"}}, 5)
			return err
		}},
		{"Tenants within", engram.EINVALID, "without its org", func() error { _, err := tx.Tenants(ctx, engram.Namespace{Project: "p"}, 1); return err }},
		{"ListEntities limit", engram.EINVALID, "outside 1..", func() error { _, _, err := tx.ListEntities(ctx, scope, engram.EntityFilter{Limit: -3}); return err }},
		{"EntitiesByToken limit", engram.EINVALID, "outside 1..", func() error { _, err := tx.EntitiesByToken(ctx, scope, []string{"a"}, 0); return err }},
		{"Relations entity id", engram.EINVALID, "entity id", func() error { _, err := tx.Relations(ctx, scope, []string{"no"}, engram.RelationFilter{}); return err }},
		{"GetResource id", engram.ENOTFOUND, "resource no not found", func() error { _, err := tx.GetResource(ctx, scope, "no"); return err }},
		{"GetIdentity id", engram.ENOTFOUND, "identity no not found", func() error { _, err := tx.GetIdentity(ctx, scope, "no"); return err }},
		{"ListJobs scope", engram.EINVALID, "", func() error { _, _, err := tx.ListJobs(ctx, bad, engram.JobFilter{}); return err }},
		{"Meta key", engram.EINVALID, "meta key", func() error { _, err := tx.Meta(ctx, ""); return err }},
		{"ScanVectors embedder", engram.EINVALID, "embedder name", func() error { return tx.ScanVectors(ctx, scope, "", nil) }},
		{"PurgeScope project", engram.EINVALID, "a whole project cannot be purged", func() error {
			_, err := tx.PurgeScope(ctx, engram.Scope{Org: "o", Project: "p"})
			return err
		}},
		{"Touch id", engram.EINVALID, "memory id", func() error { return tx.Touch(ctx, scope.Namespace(), []string{"no"}, time.Time{}) }},
		{"AddEvidence weight", engram.EINVALID, "evidence weight", func() error {
			return tx.AddEvidence(ctx, scope.Namespace(), engram.NewID(), engram.Evidence{MemoryID: engram.NewID(), Weight: 2})
		}},
		{"InsertObservation identity", engram.EINVALID, "", func() error { return tx.InsertObservation(ctx, &engram.Observation{}) }},
		{"EnqueueJob", engram.EINVALID, "job id", func() error { return tx.EnqueueJob(ctx, &engram.Job{}) }},
		{"DeleteVectorsExcept", engram.EINVALID, "embedder name", func() error { _, err := tx.DeleteVectorsExcept(ctx, ""); return err }},
		{"InsertMemory", engram.EINVALID, "", func() error { return tx.InsertMemory(ctx, &engram.Memory{}) }},
		{"ScanMemories limit", engram.EINVALID, "scan limit 0", func() error { _, err := tx.ScanMemories(ctx, engram.MemoryKey{}, 0); return err }},
		{"Lapsed limit", engram.EINVALID, "lapsed limit -1", func() error { _, err := tx.Lapsed(ctx, time.Time{}, -1); return err }},
		{"AbandonedUploads limit", engram.EINVALID, "limit 0 is below 1", func() error { _, err := tx.AbandonedUploads(ctx, time.Time{}, 0); return err }},
		{"InsertVaultKey bytes", engram.EINVALID, "wrapped bytes", func() error { return tx.InsertVaultKey(ctx, &engram.VaultKey{Org: "o", Project: "p"}) }},
		{"ReplaceVaultKey tenant", engram.EINVALID, "", func() error { return tx.ReplaceVaultKey(ctx, &engram.VaultKey{Wrapped: []byte{1}}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if got := engram.ErrorCode(err); got != c.code {
				t.Fatalf("code = %q (%v), want %q", got, err, c.code)
			}
			if !strings.Contains(engram.ErrorMessage(err), c.msg) {
				t.Errorf("message %q does not say %q", engram.ErrorMessage(err), c.msg)
			}
		})
	}
}

// TestPassesOnWhatItChecked shows valid calls reaching the backend, with
// a limit made what it stands for and a batch's ids cleaned.
func TestPassesOnWhatItChecked(t *testing.T) {
	ctx := context.Background()
	b := &backend{}
	tx := storecheck.NewTx(b, storecheck.Options{})
	id := engram.NewID()
	if m, err := tx.GetMemory(ctx, scope, id); err != nil || m.ID != id {
		t.Fatalf("GetMemory = %v, %v", m, err)
	}
	if _, err := tx.SearchText(ctx, scope, "q", engram.MemoryFilter{}, 0); err != nil || b.limit != engram.DefaultLimit {
		t.Errorf("SearchText limit 0 reached the backend as %d (%v), want %d", b.limit, err, engram.DefaultLimit)
	}
	if _, _, err := tx.ListEntities(ctx, scope, engram.EntityFilter{}); err != nil || b.limit != engram.DefaultEntityLimit {
		t.Errorf("ListEntities limit 0 reached the backend as %d (%v), want %d", b.limit, err, engram.DefaultEntityLimit)
	}
	if _, err := tx.ListObservations(ctx, scope, engram.ObservationFilter{Limit: -1}); err != nil || b.limit != engram.MaxIdentityMembers {
		t.Errorf("ListObservations limit -1 reached the backend as %d (%v), want %d", b.limit, err, engram.MaxIdentityMembers)
	}
	if _, err := tx.Tenants(ctx, engram.Namespace{}, 7); err != nil || b.limit != 7 {
		t.Errorf("Tenants limit 7 reached the backend as %d (%v)", b.limit, err)
	}
	if _, err := tx.GetMemories(ctx, scope, []string{id, "bad", id}); err != nil || len(b.ids) != 1 || b.ids[0] != id {
		t.Errorf("GetMemories gave the backend %q (%v), want [%s]", b.ids, err, id)
	}
	if _, err := tx.MemoryMentions(ctx, scope, []string{id}); err != nil || fmt.Sprint(b.ids) != "[memory_id "+id+"]" || b.limit != 0 {
		t.Errorf("MemoryMentions reached the backend as %v, limit %d (%v)", b.ids, b.limit, err)
	}
	r := storecheck.NewReader(b, storecheck.Options{})
	if _, ok := r.(engram.Tx); ok {
		t.Error("a checked reader can be type-asserted into writing")
	}
	if storecheck.Inner(r) != storecheck.Reader(b) || storecheck.Inner(tx) != storecheck.Reader(b) {
		t.Error("Inner does not return the backend's transaction")
	}
}

// TestBackendRefusals shows a backend's own refusals (Options) run after
// the contract's.
func TestBackendRefusals(t *testing.T) {
	ctx := context.Background()
	noNUL := func(s string) error {
		if strings.ContainsRune(s, 0) {
			return engram.Errorf(engram.EINVALID, "NUL in %q", s)
		}
		return nil
	}
	tx := storecheck.NewTx(&backend{}, storecheck.Options{MetaKey: noNUL, Embedder: noNUL})
	if _, err := tx.Meta(ctx, "a\x00b"); !strings.Contains(engram.ErrorMessage(err), "NUL") {
		t.Errorf("Meta with a NUL key: %v, want the backend's refusal", err)
	}
	if err := tx.PutVectors(ctx, scope.Namespace(), engram.NewID(), "e\x00", nil); !strings.Contains(engram.ErrorMessage(err), "NUL") {
		t.Errorf("PutVectors with a NUL embedder: %v, want the backend's refusal", err)
	}
}

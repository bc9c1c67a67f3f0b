package enginetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/vault"
)

// testVaultLifecycle: a vault memory cannot be changed in place (update,
// supersede, rollback) nor made by a patch; deletes and restores need
// vault access and keep it sealed; its history reads decrypted with
// access only; a formation never sees it; a search without vault never
// finds it, one with vault does.
func testVaultLifecycle(t *testing.T, open Open) {
	v, err := vault.New([]byte(strings.Repeat("k", vault.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, open, engine.Options{Vault: v})
	vctx := engram.WithVault(ctx, "test")
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{
		{Kind: engram.KindVault, Value: "PIN der Bankkarte 4711", Cues: []string{"Bank"}},
		{Value: "Alice banks with the Sparkasse"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, plainID := ms[0].ID, ms[1].ID
	value := "neu"
	vaultKind := engram.KindVault
	for what, err := range map[string]error{
		"update": func() error { _, err := e.UpdateMemory(vctx, scA, id, engram.MemoryPatch{Value: &value}); return err }(),
		"supersede": func() error {
			_, err := e.SupersedeMemory(vctx, scA, id, engram.SupersedeRequest{New: engram.Memory{Value: "x"}})
			return err
		}(),
		"rollback": func() error { _, err := e.Rollback(vctx, scA, id, 1, ""); return err }(),
		"patch to vault": func() error {
			_, err := e.UpdateMemory(vctx, scA, plainID, engram.MemoryPatch{Kind: &vaultKind})
			return err
		}(),
		"supersede into vault": func() error {
			_, err := e.SupersedeMemory(vctx, scA, plainID, engram.SupersedeRequest{New: engram.Memory{Kind: engram.KindVault, Value: "x"}})
			return err
		}(),
	} {
		if code(err) != engram.EINVALID {
			t.Errorf("%s of a vault memory: %v, want EINVALID", what, err)
		}
	}
	if err := e.DeleteMemory(ctx, scA, id, engram.DeleteOptions{}); code(err) != engram.ENOTFOUND {
		t.Errorf("delete without vault access: %v, want ENOTFOUND", err)
	}
	if _, err := e.History(ctx, scA, id); code(err) != engram.ENOTFOUND {
		t.Errorf("history without vault access: %v, want ENOTFOUND", err)
	}
	if err := e.DeleteMemory(vctx, scA, id, engram.DeleteOptions{}); err != nil {
		t.Fatalf("soft delete with vault access: %v", err)
	}
	m, err := e.RestoreMemory(vctx, scA, id, "")
	if err != nil || m.Value != "PIN der Bankkarte 4711" || m.Status != engram.StatusActive {
		t.Fatalf("restore = %+v, %v", m, err)
	}
	vs, err := e.History(vctx, scA, id)
	if err != nil || len(vs) != 3 {
		t.Fatalf("history = %d versions, %v", len(vs), err)
	}
	for _, ver := range vs {
		if ver.New.Value != "PIN der Bankkarte 4711" || ver.New.Cues[0] != "Bank" {
			t.Errorf("version %d reads %+v", ver.Version, ver.New)
		}
	}
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "Bankkarte PIN"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Memory.ID == id {
			t.Errorf("a search without vault found the vault memory")
		}
	}
	if _, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "PIN", Vault: true}); code(err) != engram.EFORBIDDEN {
		t.Errorf("vault search without access: %v, want EFORBIDDEN", err)
	}
	res, err = e.Search(vctx, engram.SearchRequest{Scope: scA, Query: "bankkarte", Vault: true})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Memory.ID != id {
		t.Errorf("vault search = %+v, %v", res, err)
	}
	if _, err := e.Search(vctx, engram.SearchRequest{Scope: scA, Query: "PIN", Vault: true, Budget: 100}); code(err) != engram.EINVALID {
		t.Errorf("vault search with a budget: %v, want EINVALID", err)
	}
	if err := e.DeleteMemory(vctx, scA, id, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatalf("hard delete with vault access: %v", err)
	}
	if _, err := e.GetMemory(vctx, scA, id); code(err) != engram.ENOTFOUND {
		t.Errorf("after the hard delete: %v", err)
	}
}

// testVaultFirstWrites: engines with their own vaults (servers sharing one
// store) writing a tenant's first vault memories at once agree on one data
// key, so every acknowledged write reads back, from a third engine too.
func testVaultFirstWrites(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	master := []byte(strings.Repeat("m", vault.KeySize))
	engines := make([]*engine.Engine, 3)
	for i := range engines {
		v, err := vault.New(master)
		if err != nil {
			t.Fatal(err)
		}
		if engines[i], err = engine.New(context.Background(), st, engine.Options{Vault: v}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engines[i].Close() })
	}
	const writers = 8
	ids := make([]string, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms, err := engines[w%2].AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{
				{Kind: engram.KindVault, Value: fmt.Sprintf("Geheimnis %d", w)},
			}})
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
				return
			}
			ids[w] = ms[0].ID
		}()
	}
	wg.Wait()
	vctx := engram.WithVault(ctx, "test")
	for w, id := range ids {
		if id == "" {
			continue
		}
		m, err := engines[2].GetMemory(vctx, scA, id)
		if err != nil || m.Value != fmt.Sprintf("Geheimnis %d", w) {
			t.Errorf("writer %d's memory reads %v, %v", w, m, err)
		}
	}
}

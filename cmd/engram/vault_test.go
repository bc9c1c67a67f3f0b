package main_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/vault"
)

// vaultEngine opens an engine over dir with the master key master.
func vaultEngine(t *testing.T, dir string, master []byte) (*engine.Engine, error) {
	t.Helper()
	v, err := vault.New(master)
	if err != nil {
		t.Fatal(err)
	}
	return storeopen.Engine(context.Background(), dir, engine.Options{Vault: v})
}

// writeKey writes a new random master key to a file, base64, and returns
// both.
func writeKey(t *testing.T, name string) ([]byte, string) {
	t.Helper()
	k := []byte(strings.Repeat(name[:1], vault.KeySize))
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return k, p
}

func readVault(t *testing.T, dir string, master []byte, id string) string {
	t.Helper()
	e, err := vaultEngine(t, dir, master)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer e.Close()
	m, err := e.GetMemory(engram.WithVault(context.Background(), "test"), engram.Scope{Org: "acme", Project: "app"}, id)
	if err != nil {
		t.Fatalf("read vault memory: %v", err)
	}
	return m.Value
}

// TestVaultRotateAndCopy: engram vault rotate rewraps the data keys, after
// which only the new master key opens the vault, and migrate-store carries
// the wrapped keys along, so the copy's vault reads with the same key.
func TestVaultRotateAndCopy(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "src")
	oldKey, oldFile := writeKey(t, "old")
	newKey, newFile := writeKey(t, "new")
	_, otherFile := writeKey(t, "x")

	e, err := vaultEngine(t, dir, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := e.AddMemories(context.Background(), engram.AddMemoriesRequest{
		Namespace: engram.Namespace{Org: "acme", Project: "app"},
		Memories:  []engram.Memory{{Kind: engram.KindVault, Value: "Kontonummer 1234"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	id := ms[0].ID

	c := &cli{t: t, env: baseEnv(t)}
	if stderr := c.fail(1, "vault", "rotate", "--data", dir, "--old-key-file", otherFile, "--new-key-file", newFile); !strings.Contains(stderr, "old master key does not open") {
		t.Errorf("rotate with a wrong old key: %q", stderr)
	}
	if got := readVault(t, dir, oldKey, id); got != "Kontonummer 1234" {
		t.Errorf("after a refused rotation the old key reads %q", got)
	}
	if out := c.ok("vault", "rotate", "--data", dir, "--old-key-file", oldFile, "--new-key-file", newFile); !strings.Contains(out, "rewrapped 1 data keys") {
		t.Errorf("rotate printed %q", out)
	}
	if _, err := vaultEngine(t, dir, oldKey); err == nil || !strings.Contains(err.Error(), "master key") {
		t.Errorf("the old key after rotation: %v", err)
	}
	if got := readVault(t, dir, newKey, id); got != "Kontonummer 1234" {
		t.Errorf("the new key reads %q", got)
	}

	dst := filepath.Join(tmp, "dst")
	if out := c.ok("migrate-store", "--from", dir, "--to", dst); !strings.Contains(out, "copied 1 wrapped vault data keys") {
		t.Errorf("migrate-store printed %q", out)
	}
	if got := readVault(t, dst, newKey, id); got != "Kontonummer 1234" {
		t.Errorf("the copy reads %q", got)
	}
}

// TestServeVaultKey: serve refuses a malformed master key (a usage error)
// and one that is not the vault's (it does not start).
func TestServeVaultKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, _ := writeKey(t, "good")
	e, err := vaultEngine(t, dir, good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddMemories(context.Background(), engram.AddMemoriesRequest{
		Namespace: engram.Namespace{Org: "acme", Project: "app"},
		Memories:  []engram.Memory{{Kind: engram.KindVault, Value: "secret"}},
	}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	bad := &cli{t: t, env: append(baseEnv(t), "ENGRAM_VAULT_KEY=tooshort", "ENGRAM_EMBEDDER=none")}
	if stderr := bad.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--no-auth"); !strings.Contains(stderr, "master key must be 32 bytes") || strings.Contains(stderr, "tooshort") {
		t.Errorf("serve with a malformed key: %q", stderr)
	}
	wrong := &cli{t: t, env: append(baseEnv(t), "ENGRAM_VAULT_KEY="+base64.StdEncoding.EncodeToString([]byte(strings.Repeat("w", 32))), "ENGRAM_EMBEDDER=none")}
	if stderr := wrong.fail(1, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--no-auth"); !strings.Contains(stderr, "master key does not open") {
		t.Errorf("serve with another key: %q", stderr)
	}
}

// TestVaultCommands: in local mode with ENGRAM_VAULT_KEY, add --kind vault
// seals the memory; get, list and search show it only with --vault; and
// without the key, adding one fails and stores nothing.
func TestVaultCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("v", 32)))
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_VAULT_KEY="+key), extra: []string{"--data", dir}}
	var added struct{ Memories []engram.Memory }
	c.json(&added, "add", "--memory", "--kind", "vault", "Bankkarte PIN 4711")
	if len(added.Memories) != 1 {
		t.Fatalf("add printed %+v", added)
	}
	id := added.Memories[0].ID
	if stderr := c.fail(1, "get", id); !strings.Contains(stderr, "not found") {
		t.Errorf("get without --vault: %q", stderr)
	}
	if out := c.ok("get", "--vault", id); !strings.Contains(out, "PIN 4711") {
		t.Errorf("get --vault printed %q", out)
	}
	if out := c.ok("list"); strings.Contains(out, id) {
		t.Errorf("list without --vault shows the vault memory: %q", out)
	}
	if out := c.ok("list", "--vault"); !strings.Contains(out, "PIN 4711") {
		t.Errorf("list --vault printed %q", out)
	}
	if out := c.ok("search", "Bankkarte"); strings.Contains(out, "4711") {
		t.Errorf("search without --vault printed %q", out)
	}
	if out := c.ok("search", "--vault", "bankkarte"); !strings.Contains(out, "PIN 4711") {
		t.Errorf("search --vault printed %q", out)
	}
	nokey := &cli{t: t, env: baseEnv(t), extra: []string{"--data", dir}}
	if stderr := nokey.fail(1, "add", "--memory", "--kind", "vault", "another secret"); !strings.Contains(stderr, "ENGRAM_VAULT_KEY") {
		t.Errorf("add of a vault memory without a key: %q", stderr)
	}
	if out := c.ok("list", "--vault"); strings.Contains(out, "another secret") {
		t.Errorf("the refused add stored something: %q", out)
	}
}

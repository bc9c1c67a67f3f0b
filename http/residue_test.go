package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// newCachedAuthEnv is newAuthEnv with an embedder behind the disk-backed
// embedding cache, shared by the engine and POST /v1/embeddings as serve
// wires it; f counts what reaches the model.
func newCachedAuthEnv(t *testing.T, f *fakeEmbedder) *authEnv {
	t.Helper()
	dir := t.TempDir()
	cache, err := embedcache.New(f, embedcache.Options{Path: filepath.Join(dir, "embeddings-cache.db"), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cache.Close() })
	eng, err := storeopen.Engine(context.Background(), dir, engine.Options{Logger: discardLogger(), AccessFlush: time.Hour, Embedder: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Ready: eng.Ready, Keys: keys, Embedder: cache}))
	t.Cleanup(srv.Close)
	return &authEnv{srv: srv, keys: keys}
}

// embedCalls asks POST /v1/embeddings with key for text and returns how
// many texts the model was asked to embed meanwhile.
func embedCalls(t *testing.T, e *authEnv, f *fakeEmbedder, key, text string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"input": text})
	before := f.embedded()
	r := e.call(t, key, "POST", "/v1/embeddings", string(body))
	if r.Status != http.StatusOK {
		t.Fatalf("embeddings: %d %s", r.Status, r.Body)
	}
	return f.embedded() - before
}

// TestEmbeddingCache_PerTenantAndForgotten: the embedding cache answers a
// text from the cache only for the tenant and user that stored it, and
// forgets it when the memory is hard-deleted or the user's scope purged,
// so response times reveal nothing about other tenants' or deleted texts.
func TestEmbeddingCache_PerTenantAndForgotten(t *testing.T) {
	f := &fakeEmbedder{dim: 8}
	e := newCachedAuthEnv(t, f)
	alice := e.key(t, "acme", "app", "alice", engram.RoleAdmin)
	bob := e.key(t, "globex", "app", "bob", engram.RoleWrite)
	const text = "Meine Schwester Grete zieht im Mai nach Lissabon"

	id := addMemory(t, e, alice, "acme", "alice", text)
	if n := embedCalls(t, e, f, alice, text); n != 0 {
		t.Fatalf("alice's own text was embedded again (%d): the cache lost its benefit within a tenant", n)
	}
	if n := embedCalls(t, e, f, bob, text); n != 1 {
		t.Fatalf("another tenant's request for alice's text embedded %d texts, want 1: the cache is shared across tenants", n)
	}

	// The memory's earlier value was embedded too: it must go with it.
	const revised = "Meine Schwester Grete zieht im Juni nach Porto"
	if r := e.call(t, alice, "PATCH", "/v1/memories/"+id+"?org=acme&project=app&user=alice", `{"value":"`+revised+`"}`); r.Status != http.StatusOK {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if r := e.call(t, alice, "DELETE", "/v1/memories/"+id+"?org=acme&project=app&user=alice&hard=true", ""); r.Status != http.StatusNoContent {
		t.Fatalf("hard delete: %d %s", r.Status, r.Body)
	}
	for _, txt := range []string{text, revised} {
		if n := embedCalls(t, e, f, alice, txt); n != 1 {
			t.Fatalf("after a hard delete alice's text %q embedded %d texts, want 1: the cache kept the deleted text", txt, n)
		}
	}

	const other = "我的妹妹在里斯本开了一家面包店"
	addMemory(t, e, alice, "acme", "alice", other)
	if n := embedCalls(t, e, f, alice, other); n != 0 {
		t.Fatalf("alice's second text was embedded again (%d)", n)
	}
	if r := e.call(t, alice, "DELETE", "/v1/scope?org=acme&project=app&user=alice", ""); r.Status != http.StatusOK {
		t.Fatalf("purge: %d %s", r.Status, r.Body)
	}
	if n := embedCalls(t, e, f, alice, other); n != 1 {
		t.Fatalf("after a purge alice's text embedded %d texts, want 1: the cache kept the purged text", n)
	}
}

package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/vault"
)

// BenchmarkVaultSearch measures a vault search over the limit of vault
// memories one scope may have searched (engine.VaultSearchLimit), each
// decrypted and matched, against a plain search of as many memories.
//
//	go test -run '^$' -bench VaultSearch -benchtime 20x ./engine/
func BenchmarkVaultSearch(b *testing.B) {
	for _, kind := range []engram.Kind{engram.KindVault, engram.KindSemantic} {
		b.Run(string(kind), func(b *testing.B) {
			ctx := engram.WithVault(context.Background(), "bench")
			e := vaultEngine(b)
			ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
			for batch := 0; batch < engine.VaultSearchLimit/100; batch++ {
				ms := make([]engram.Memory, 100)
				for i := range ms {
					ms[i] = engram.Memory{Kind: kind, Value: fmt.Sprintf("account %d of bank %d, PIN %04d", batch*100+i, i%7, i)}
				}
				if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms}); err != nil {
					b.Fatal(err)
				}
			}
			req := engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "account 512", Vault: kind == engram.KindVault}
			b.ResetTimer()
			for b.Loop() {
				res, err := e.Search(ctx, req)
				if err != nil || len(res.Hits) == 0 {
					b.Fatalf("search: %v, %d hits", err, len(res.Hits))
				}
			}
		})
	}
}

// BenchmarkVaultAdd measures adding one vault memory (sealed) against one
// plain memory, without an embedder.
//
//	go test -run '^$' -bench VaultAdd -benchtime 200x ./engine/
func BenchmarkVaultAdd(b *testing.B) {
	for _, kind := range []engram.Kind{engram.KindVault, engram.KindSemantic} {
		b.Run(string(kind), func(b *testing.B) {
			ctx := context.Background()
			e := vaultEngine(b)
			req := engram.AddMemoriesRequest{Namespace: engram.Namespace{Org: "acme", Project: "app"},
				Memories: []engram.Memory{{Kind: kind, Value: "IBAN DE89 3704 0044 0532 0130 00"}}}
			for b.Loop() {
				if _, err := e.AddMemories(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// vaultEngine is an engine with a vault over a fresh SQLite store, both
// closed when b ends.
func vaultEngine(b *testing.B) *engine.Engine {
	b.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "engram.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	v, err := vault.New([]byte(strings.Repeat("k", vault.KeySize)))
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.New(ctx, db, engine.Options{Vault: v})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

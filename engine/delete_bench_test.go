package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storeopen"
)

// BenchmarkHardDelete measures one hard delete of a memory in a store of
// 10,000 memories of one user, with whatever the engine does after it
// (scrubbing the store's files). PostgreSQL runs when
// ENGRAM_TEST_POSTGRES_URL is set (scripts/pg.sh). Run with a fixed count:
//
//	go test -run '^$' -bench HardDelete -benchtime 200x ./engine/
func BenchmarkHardDelete(b *testing.B) {
	locs := map[string]func(b *testing.B) string{"sqlite": func(b *testing.B) string { return b.TempDir() }}
	if u := os.Getenv("ENGRAM_TEST_POSTGRES_URL"); u != "" {
		locs["postgres"] = func(b *testing.B) string { return u }
	}
	for name, loc := range locs {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			e, err := storeopen.Engine(ctx, loc(b), engine.Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			// A tenant of its own per run, so a shared PostgreSQL database
			// starts each run with the same 10,000 memories in it.
			ns := engram.Namespace{Org: "bench" + engram.NewID()[20:], Project: "p", User: "u"}
			const n, batch = 10_000, 100
			ids := make([]string, 0, n)
			for i := 0; i < n; i += batch {
				ms := make([]engram.Memory, batch)
				for j := range ms {
					ms[j] = engram.Memory{Kind: engram.KindSemantic, Value: fmt.Sprintf("memory %d: the user's sister moved to Lisbon in spring %d and opened a bakery", i+j, 1990+j)}
				}
				out, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms})
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range out {
					ids = append(ids, m.ID)
				}
			}
			if b.N > n {
				b.Fatalf("at most %d deletes; run with -benchtime 200x", n)
			}
			sc := engram.Scope{Org: ns.Org, Project: ns.Project, User: ns.User}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := e.DeleteMemory(ctx, sc, ids[i], engram.DeleteOptions{Hard: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

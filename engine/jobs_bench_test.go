package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
)

// BenchmarkAddEpisodes compares, over the embedded store with the default
// former, a synchronous add (formation in the request), an asynchronous
// one (episodes and a job only) and the background run of one such job.
//
//	go test -run '^$' -bench BenchmarkAddEpisodes -benchtime 200x ./engine/
func BenchmarkAddEpisodes(b *testing.B) {
	for _, mode := range []string{"sync", "async", "job"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "engram.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			e, err := engine.New(ctx, db, engine.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
			add := func(i int, async bool) {
				_, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Async: &async,
					Episodes: []engram.EpisodeInput{{Role: "user", Content: fmt.Sprintf("I moved to city number %d last spring.", i)}}})
				if err != nil {
					b.Fatal(err)
				}
			}
			if mode == "job" {
				for i := range b.N {
					add(i, true)
				}
			}
			b.ResetTimer()
			switch mode {
			case "job":
				if n, err := e.RunJobs(ctx); err != nil || n != b.N {
					b.Fatalf("ran %d jobs of %d: %v", n, b.N, err)
				}
			default:
				for i := range b.N {
					add(i, mode == "async")
				}
			}
		})
	}
}

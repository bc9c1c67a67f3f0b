package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedbatch"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/uselite"
)

// BenchmarkReadAfterAdd measures the one-turn add and the search that
// follows it, as engram serve runs them (USE-lite int8 behind the
// embedding batcher and cache, one worker running embed jobs, SQLite on
// disk), in a namespace holding the first 120 turns of the first LoCoMo
// conversation. Each iteration adds the next turn and searches: "now"
// searches the moment the add answered (its embed job still pending),
// "settled" once the turn's embed job is done. It reports the medians
// (add-ms, search-ms). It skips without the model or the data set.
//
//	go test -run '^$' -bench BenchmarkReadAfterAdd -benchtime 60x ./engine/
func BenchmarkReadAfterAdd(b *testing.B) {
	sessions := locomoSessions(b)
	m, err := uselite.LoadPrecision(uselite.DefaultDir(), uselite.Int8)
	if err != nil {
		b.Skipf("USE-lite model not installed: %v", err)
	}
	var turns []engram.EpisodeInput
	for _, s := range sessions {
		turns = append(turns, s...)
	}
	half := min(len(turns)/2, 120)
	questions := []string{"What does she do to relax?", "Where did they go on holiday?", "How is her family?", "What is he painting these days?", "Which books were mentioned?"}
	for _, mode := range []string{"now", "settled"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "engram.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			cache, err := embedcache.New(embedbatch.New(m), embedcache.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer cache.Close()
			e, err := engine.New(ctx, db, engine.Options{Embedder: cache, Workers: 1, JobPoll: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ns := engram.Namespace{Org: "o", Project: "p", User: "u", Session: "s"}
			for _, t := range turns[:half] {
				res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{t}})
				if err != nil {
					b.Fatal(err)
				}
				waitDone(b, e, res.EmbedJob)
			}
			var adds, searches []time.Duration
			b.ResetTimer()
			for i := range b.N {
				t := turns[half+i%(len(turns)-half)]
				t0 := time.Now()
				res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{t}})
				if err != nil {
					b.Fatal(err)
				}
				adds = append(adds, time.Since(t0))
				if mode == "settled" {
					waitDone(b, e, res.EmbedJob)
				}
				t0 = time.Now()
				if _, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: questions[i%len(questions)]}); err != nil {
					b.Fatal(err)
				}
				searches = append(searches, time.Since(t0))
				waitDone(b, e, res.EmbedJob)
			}
			b.StopTimer()
			b.ReportMetric(median(adds), "add-ms")
			b.ReportMetric(median(searches), "search-ms")
		})
	}
}

// waitDone waits until the embed job j, if any, is done.
func waitDone(b *testing.B, e *engine.Engine, j *engram.Job) {
	if j == nil {
		return
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		got, err := e.GetJob(context.Background(), engram.ScopeOf(j.Namespace), j.ID)
		if err != nil {
			b.Fatal(err)
		}
		if got.State == engram.JobDone {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal(fmt.Sprintf("embed job %s still %s after a minute", j.ID, got.State))
		}
	}
}

// median returns the median of ds in milliseconds.
func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

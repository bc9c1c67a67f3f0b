package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
)

// BenchmarkAddEpisodesGraph measures what keeping the entity graph costs a
// synchronous add over the embedded store with the default former, on
// turns that name people and places (a speaker, two names, a place; names
// recur across turns as in a conversation): "graph" keeps it, "nograph"
// is the same engine told to keep no graph (engine.KeepNoGraph). It
// reports CPU time per add beside wall time.
//
//	go test -run '^$' -bench BenchmarkAddEpisodesGraph -benchtime 300x ./engine/
func BenchmarkAddEpisodesGraph(b *testing.B) {
	people := []string{"Melanie", "Caroline", "Jürgen", "Lucía", "Oscar", "Priya", "Tomás", "Grete"}
	places := []string{"Yosemite", "Lisbon", "München", "Sevilla", "Boston", "Kyoto"}
	for _, mode := range []string{"nograph", "graph"} {
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
			if mode == "nograph" {
				engine.KeepNoGraph(e)
			}
			defer e.Close()
			ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
			sync := false
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := range b.N {
				content := fmt.Sprintf("Last week I went hiking in %s with %s and %s, it was day %d.",
					places[i%len(places)], people[i%len(people)], people[(i*3+1)%len(people)], i)
				_, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Async: &sync,
					Episodes: []engram.EpisodeInput{{Role: "user", Speaker: people[(i+2)%len(people)], Content: content}}})
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - cpu0
			checkGraphKept(b, e, ns, mode == "graph")
			// CPU time is far steadier than wall time on a shared machine,
			// where the fsync of every commit dominates the latter.
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the user and system CPU time the process has used, in
// nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// checkGraphKept fails b unless e kept an entity graph for ns exactly
// when it should, so a "nograph" run cannot measure a graph after all,
// nor a "graph" run measure none.
func checkGraphKept(b *testing.B, e *engine.Engine, ns engram.Namespace, want bool) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	page, err := e.ListEntities(context.Background(), engram.ScopeOf(ns), engram.EntityFilter{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	if got := len(page.Entities) > 0; got != want {
		b.Fatalf("entities kept: %v, want %v", got, want)
	}
}

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

// graphless hides the store's graph capability from the engine: its
// transactions offer only engram.Tx, so the engine keeps no graph.
type graphless struct{ engram.Store }

func (s graphless) Update(ctx context.Context, fn func(tx engram.Tx) error) error {
	return s.Store.Update(ctx, func(tx engram.Tx) error { return fn(struct{ engram.Tx }{tx}) })
}

// BenchmarkAddEpisodesGraph measures what keeping the entity graph costs a
// synchronous add over the embedded store with the default former, on
// turns that name people and places (a speaker, two names, a place; names
// recur across turns as in a conversation): "graph" keeps it, "nograph"
// is the same engine over a store whose transactions hide the graph. It
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
			var st engram.Store = db
			if mode == "nograph" {
				st = graphless{db}
			}
			e, err := engine.New(ctx, st, engine.Options{})
			if err != nil {
				b.Fatal(err)
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
			// CPU time is far steadier than wall time on a shared machine,
			// where the fsync of every commit dominates the latter.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
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

package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/metrics"

	engramhttp "github.com/engramhq/engram/http"
)

// BenchmarkTransport_GetMemory measures one call through client, HTTP and
// server with a service that does no work: the cost the transport adds.
//
// With ENGRAM_BENCH_OBSERVE=1 the server logs each request as JSON (to
// nowhere) and counts it in the metrics engram serve keeps, to measure
// what they cost.
func BenchmarkTransport_GetMemory(b *testing.B) {
	var opts engramhttp.ServerOptions
	if os.Getenv("ENGRAM_BENCH_OBSERVE") == "1" {
		opts.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
		opts.Observer = metrics.New(opts.Logger)
	}
	_, c := newFakeServer(b, &fakeService{}, opts)
	ctx := context.Background()
	sc := engram.Scope{Org: "o", Project: "p", User: "u"}
	id := engram.NewID()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetMemory(ctx, sc, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetMemory compares a read of the real engine in-process and
// through the HTTP server.
func BenchmarkGetMemory(b *testing.B) {
	env := newEngineEnv(b, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	mems, err := env.eng.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "Ann drinks green tea every morning."}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		svc  engram.Service
	}{{"inprocess", env.eng}, {"http", env.c}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.svc.GetMemory(ctx, engram.ScopeOf(ns), mems[0].ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAddEpisodes stores batches of 10 episodes through the HTTP
// server into the real engine.
func BenchmarkAddEpisodes(b *testing.B) {
	env := newEngineEnv(b, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	eps := make([]engram.EpisodeInput, 10)
	for i := range eps {
		eps[i] = engram.EpisodeInput{Role: "user", Content: fmt.Sprintf("message %d about tea and Lisbon", i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: eps}); err != nil {
			b.Fatal(err)
		}
	}
}

package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/metrics"
)

// BenchmarkObserveSearch is what one search tells the metrics: its five
// stages, four channels and the embedding of its query.
func BenchmarkObserveSearch(b *testing.B) {
	m := metrics.New(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	stages := []string{engine.StageAnalyze, engine.StageGather, engine.StageFuse, engine.StageRerank, engine.StageAssemble}
	channels := []string{"bm25", "dense", "temporal", "identity"}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range stages {
			m.SearchStage(s, time.Millisecond)
		}
		for _, c := range channels {
			m.SearchChannel(c, time.Millisecond)
		}
		m.Embed(3, time.Millisecond, nil)
	}
}

// BenchmarkObserveRequest is what one request tells the metrics; its log
// line is BenchmarkTransport_GetMemory's (package http).
func BenchmarkObserveRequest(b *testing.B) {
	m := metrics.New(nil)
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest("/v1/search", "POST", 200, time.Millisecond)
	}
}

// BenchmarkObserveOperation is one memory operation counted and logged
// as JSON.
func BenchmarkObserveOperation(b *testing.B) {
	m := metrics.New(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx := engram.WithRequestID(context.Background(), "0123456789abcdef01234567")
	ops := []engine.OpRecord{{Namespace: engram.Namespace{Org: "acme", Project: "demo", User: "ann"}, MemoryID: engram.NewID(),
		Op: engram.OpAdd, Trigger: engine.TriggerFormer, Former: "rules"}}
	b.ReportAllocs()
	for b.Loop() {
		m.MemoryOps(ctx, ops, nil)
	}
}

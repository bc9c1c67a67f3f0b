package enginetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// flakyEmbedder fails once it has embedded more than Budget texts.
type flakyEmbedder struct {
	BagEmbedder
	Budget int64
	used   atomic.Int64
}

func (f *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.used.Add(int64(len(texts))) > f.Budget {
		return nil, errors.New("embedding service went away")
	}
	return f.BagEmbedder.Embed(ctx, texts)
}

func testReembed(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	old := &BagEmbedder{ID: "old", D: 32}
	e, err := engine.New(ctx, st, engine.Options{Embedder: old})
	if err != nil {
		t.Fatal(err)
	}
	const n = 600 // more than two batches
	ms := make([]engram.Memory, n)
	for i := range ms {
		ms[i] = engram.Memory{Value: fmt.Sprintf("memory number %d about topic%d", i, i%17)}
	}
	for i := 0; i < n; i += engram.MaxBatch {
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: ms[i:min(i+engram.MaxBatch, n)]}); err != nil {
			t.Fatal(err)
		}
	}
	gone := mustAddMemory(t, e, nsB, "deleted before the move")
	if err := e.DeleteMemory(ctx, engram.ScopeOf(nsB), gone.ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	// The first run dies part-way; its committed batches are kept.
	flaky := &flakyEmbedder{BagEmbedder: BagEmbedder{ID: "new", D: 48}, Budget: 300}
	if _, err := engine.Reembed(ctx, st, flaky, nil); err == nil {
		t.Fatal("reembed with a failing embedder succeeded")
	}
	if _, err := engine.New(ctx, st, engine.Options{Embedder: &BagEmbedder{ID: "new", D: 48}}); code(err) != engram.EMISMATCH {
		t.Errorf("an interrupted reembed switched the store: %v", err)
	}
	// The second run resumes: it embeds only what the first did not commit.
	fresh := &BagEmbedder{ID: "new", D: 48}
	var calls int
	stats, err := engine.Reembed(ctx, st, fresh, func(int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if !stats.Resumed || stats.From == nil || stats.From.Name != "old" || stats.Removed == 0 {
		t.Errorf("stats = %+v", stats)
	}
	if got := stats.Memories; got <= 0 || got >= n {
		t.Errorf("resumed run embedded %d memories, want fewer than all %d", got, n)
	}
	if calls == 0 {
		t.Errorf("progress never called")
	}
	// The store now belongs to the new embedder; the old one is refused.
	if _, err := engine.New(ctx, st, engine.Options{Embedder: old}); code(err) != engram.EMISMATCH {
		t.Errorf("old embedder after reembed: %v", err)
	}
	e2, err := engine.New(ctx, st, engine.Options{Embedder: &BagEmbedder{ID: "new", D: 48}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if ids := denseIDs(t, e2, scA, "memory number 599 about topic4"); len(ids) == 0 {
		t.Errorf("dense search finds nothing after reembed")
	}
	// Running again is a no-op resume-free pass that still succeeds.
	if _, err := engine.Reembed(ctx, st, &BagEmbedder{ID: "new", D: 48}, nil); err != nil {
		t.Errorf("second reembed: %v", err)
	}
}

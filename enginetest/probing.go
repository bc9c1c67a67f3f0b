package enginetest

import (
	"context"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// writer is what the probing tests write and read through: the engine
// itself, or the HTTP client of a server over it.
type writer interface {
	AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error)
	AddMemories(ctx context.Context, req engram.AddMemoriesRequest) ([]engram.Memory, error)
	UpdateMemory(ctx context.Context, s engram.Scope, id string, u engram.MemoryPatch) (*engram.Memory, error)
	ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error)
	ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) (*engram.EpisodePage, error)
}

// nested returns metadata whose objects nest levels deep (the map itself
// is level 1), alternating objects and arrays below the first level.
func nested(levels int) map[string]any {
	var v any = "leaf"
	for i := levels - 1; i > 0; i-- {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"k": v}
		}
	}
	return map[string]any{"deep": v, "tag": "x"}
}

// testMetadataDepth: metadata nested deeper than engram.MaxMetadataDepth
// is refused with EINVALID naming metadata on every write (episodes,
// memories, an update), through the library and over HTTP, and nothing is
// stored; metadata at the limit is stored, and filtered listings of the
// scope still answer. (Nested about 1,000 deep, a memory failed with 500 on
// SQLite and was stored on PostgreSQL, and an episode was stored and then
// broke every filtered listing of its scope.)
func testMetadataDepth(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	client, _ := overHTTP(t, e)
	for _, via := range []struct {
		name string
		w    writer
		ns   engram.Namespace
	}{{"library", e, nsA}, {"http", client, nsB}} {
		t.Run(via.name, func(t *testing.T) {
			checkDepthRefused(t, via.w, via.ns)
			checkDepthAccepted(t, via.w, via.ns)
		})
	}
}

func checkDepthRefused(t *testing.T, w writer, ns engram.Namespace) {
	t.Helper()
	for _, levels := range []int{engram.MaxMetadataDepth + 1, 1000} {
		deep := nested(levels)
		_, err := w.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Content: "Ich wohne in Köln.", Metadata: deep}}})
		wantMetadataRefused(t, "add episode", levels, err)
		_, err = w.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "vive en Sevilla", Metadata: deep}}})
		wantMetadataRefused(t, "add memory", levels, err)
	}
	sc := engram.ScopeOf(ns)
	if n := countIn(t, w, sc); n != [2]int{0, 0} {
		t.Fatalf("refused writes stored %d episodes and %d memories", n[0], n[1])
	}
}

func checkDepthAccepted(t *testing.T, w writer, ns engram.Namespace) {
	t.Helper()
	limit := nested(engram.MaxMetadataDepth)
	if _, err := w.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Content: "我住在上海。", Metadata: limit}}}); err != nil {
		t.Fatalf("add episode with metadata at the limit: %v", err)
	}
	ms, err := w.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "habite à Lyon", Metadata: limit}}})
	if err != nil {
		t.Fatalf("add memory with metadata at the limit: %v", err)
	}
	_, err = w.UpdateMemory(ctx, engram.ScopeOf(ns), ms[0].ID, engram.MemoryPatch{Metadata: nested(engram.MaxMetadataDepth + 1)})
	wantMetadataRefused(t, "update memory", engram.MaxMetadataDepth+1, err)
	sc := engram.ScopeOf(ns)
	if _, err := w.ListEpisodes(ctx, sc, engram.EpisodeFilter{Metadata: map[string]any{"tag": "x"}}); err != nil {
		t.Fatalf("filtered episode listing after a deep write: %v", err)
	}
	page, err := w.ListMemories(ctx, sc, engram.MemoryFilter{Metadata: map[string]any{"tag": "x"}})
	if err != nil {
		t.Fatalf("filtered memory listing after a deep write: %v", err)
	}
	if len(page.Memories) != 1 || page.Memories[0].Version != 1 {
		t.Fatalf("filtered listing: %+v, want the memory at version 1 (the deep update refused)", page.Memories)
	}
}

func wantMetadataRefused(t *testing.T, what string, levels int, err error) {
	t.Helper()
	if code(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "metadata") {
		t.Fatalf("%s with metadata %d deep: %v, want EINVALID naming metadata", what, levels, err)
	}
}

// countIn returns how many episodes and memories the scope holds.
func countIn(t *testing.T, w writer, s engram.Scope) [2]int {
	t.Helper()
	eps, err := w.ListEpisodes(ctx, s, engram.EpisodeFilter{Limit: engram.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := w.ListMemories(ctx, s, engram.MemoryFilter{Limit: engram.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return [2]int{len(eps.Episodes), len(ms.Memories)}
}

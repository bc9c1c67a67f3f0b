package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
)

// Formation for turns said without an agent reads the user's other
// sessions without an agent and nothing of the user's agents; the store
// filters so, so a listing with a limit is filled from what formation may
// read even when the user's agents hold more memories around them.
func TestFormViewWithoutAgentFillsLimit(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(ctx, db, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	add := func(ns engram.Namespace, n int) {
		for i := range n {
			ms := []engram.Memory{{Value: "Alice mentioned tea " + ns.Agent + ns.Session + string(rune('a'+i))}}
			if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms}); err != nil {
				t.Fatal(err)
			}
		}
	}
	user := engram.Namespace{Org: "o", Project: "p", User: "alice"}
	agent, earlier, now := user, user, user
	agent.Agent, agent.Session = "bot", "b1"
	earlier.Session, now.Session = "s1", "s2"
	// The agent's memories come before and after the ones formation may
	// read, whichever order the store lists in.
	add(agent, 3)
	add(earlier, 2)
	add(agent, 3)
	v := e.ingest.formView(now)
	ms, _, err := v.ListMemories(ctx, engram.MemoryFilter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("listed %d memories with limit 2, want 2 (the user's own without an agent)", len(ms))
	}
	for _, m := range ms {
		if m.Namespace.Agent != "" {
			t.Errorf("formation without an agent read the agent's memory %q", m.Value)
		}
	}
	hs, err := v.SearchText(ctx, "Alice tea", engram.MemoryFilter{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 {
		t.Errorf("full-text search found %d memories with limit 2, want 2", len(hs))
	}
}

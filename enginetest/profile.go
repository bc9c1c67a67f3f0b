package enginetest

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// testProfilePerUser checks that the LLM former keeps one profile per
// user: turns in two sessions (and agents) of one user create and then
// rewrite the same profile memory, stored at the user level; a
// session-scoped read sees it, another user's scope never does, and a
// profile memory added in a session rewrites the user's one.
func testProfilePerUser(t *testing.T, open Open) {
	fake := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	chat, err := openai.NewChat(openai.Config{BaseURL: fake.URL(), Model: "m1", RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, open, engine.Options{Former: f})
	alice := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	s1, s2 := alice, alice
	s1.Session, s2.Session, s2.Agent = "s1", "s2", "helper"
	t1 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	add := func(ns engram.Namespace, at time.Time, text string) {
		t.Helper()
		if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: text, OccurredAt: &at}}}); err != nil {
			t.Fatal(err)
		}
	}

	fake.QueueChat(llmFact("core", "Alice wohnt in Berlin", "trait"), `{"traits": ["Wohnt in Berlin"], "states": []}`)
	add(s1, t1, "Ich wohne in Berlin")
	fake.QueueChat(llmFact("core", "Alice vive en Múnich", "trait"), `{"traits": ["Vive en Múnich"], "states": ["Se está mudando"]}`)
	add(s2, t1.AddDate(0, 0, 1), "Me mudé a Múnich")
	reqs := fake.Requests()
	if p := reqs[len(reqs)-1].Chat.Messages[1].Content; !strings.Contains(p, "Wohnt in Berlin") {
		t.Errorf("profile prompt of the second session %q lacks the profile written in the first", p)
	}

	profs := profileMemories(t, e, engram.ScopeOf(alice))
	if len(profs) != 1 || profs[0].Namespace != alice || profs[0].Version != 2 {
		t.Fatalf("alice's profile memories %+v, want one at the user level, rewritten once", profs)
	}
	for _, s := range []engram.Scope{engram.ScopeOf(alice), engram.ScopeOf(s1), engram.ScopeOf(s2), {Org: "acme", Project: "app", User: "alice", Session: "new"}} {
		p, err := e.Profile(ctx, s)
		if err != nil || strings.Join(p.Traits, "|") != "Vive en Múnich" || strings.Join(p.States, "|") != "Se está mudando" || p.Memories[0].ID != profs[0].ID {
			t.Errorf("profile of %+v: %+v, %v; want alice's one profile", s, p, err)
		}
	}
	res, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(s1), Query: "¿Dónde vive Alice?", Budget: 500})
	if err != nil || !strings.HasPrefix(res.Context, "Vive en Múnich") {
		t.Errorf("session context %q (%v) does not start with the user's profile", res.Context, err)
	}

	for _, s := range []engram.Scope{{Org: "acme", Project: "app", User: "bob"}, {Org: "acme", Project: "app", User: "bob", Session: "s1"}, {Org: "acme", Project: "app"}, {Org: "other", Project: "app", User: "alice", Session: "s1"}} {
		p, err := e.Profile(ctx, s)
		if err != nil || len(p.Traits)+len(p.States)+len(p.Memories) != 0 {
			t.Errorf("profile of %+v: %+v, %v; want none", s, p, err)
		}
	}

	bobS1 := engram.Namespace{Org: "acme", Project: "app", User: "bob", Session: "s1"}
	for _, ns := range []engram.Namespace{bobS1, {Org: "acme", Project: "app", User: "alice", Session: "s3"}} {
		pm := engram.ProfileMemory(ns, []string{ns.User + " 喜欢茶"}, nil)
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{pm}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := profileMemories(t, e, engram.ScopeOf(alice)); len(got) != 1 || got[0].ID != profs[0].ID || got[0].Value != "alice 喜欢茶" {
		t.Errorf("alice's profiles after an added one %+v, want her one profile rewritten", got)
	}
	bob := engram.Namespace{Org: "acme", Project: "app", User: "bob"}
	if got := profileMemories(t, e, engram.ScopeOf(bob)); len(got) != 1 || got[0].Namespace != bob || got[0].Value != "bob 喜欢茶" {
		t.Errorf("bob's profiles %+v, want his own at the user level", got)
	}
}

// profileMemories lists the active profile memories in s.
func profileMemories(t *testing.T, e *engine.Engine, s engram.Scope) []engram.Memory {
	t.Helper()
	p, err := e.ListMemories(ctx, s, engram.MemoryFilter{Metadata: map[string]any{engram.MetaProfile: true}, Limit: engram.MaxLimit})
	if err != nil {
		t.Fatalf("list profile memories: %v", err)
	}
	return p.Memories
}

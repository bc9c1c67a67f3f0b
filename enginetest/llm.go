package enginetest

import (
	"context"
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

// llmFact is an extraction reply with one semantic candidate from turn 1.
func llmFact(kind, value, profile string) string {
	return `{"episodes": [], "memories": [{"kind": "` + kind + `", "abstraction": "home", "cues": ["home"], "value": "` + value + `",
		"language": "", "about": "user", "valid_from": "", "valid_to": "", "foresight": false, "confidence": 0.9, "importance": 0.7,
		"profile": "` + profile + `", "sources": [1]}]}`
}

// testLLMFormer runs the LLM former against the store: an ADD, a
// SUPERSEDE of it decided against the stored memory, the profile added
// and then rewritten, a DELETE on request, and a malformed reply that
// stores nothing.
func testLLMFormer(t *testing.T, open Open) {
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
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	s := engram.ScopeOf(ns)
	t1 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	add := func(at time.Time, text string) (*engram.AddEpisodesResult, error) {
		return e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: text, OccurredAt: &at}}})
	}

	fake.QueueChat(llmFact("core", "Alice lives in Berlin", "trait"), `{"traits": ["Lives in Berlin"], "states": []}`)
	r1, err := add(t1, "I live in Berlin")
	if err != nil {
		t.Fatal(err)
	}
	berlin := r1.Memories[0]
	if len(r1.Memories) != 2 || berlin.Value != "Alice lives in Berlin" {
		t.Fatalf("first turn formed %+v", r1.Memories)
	}

	t2 := t1.AddDate(0, 0, 2)
	fake.QueueChat(llmFact("core", "Alice lives in Munich", "trait"),
		`{"decision": "SUPERSEDE", "target": 1, "reason": "she moved", "abstraction": "", "value": "", "cues": []}`,
		`{"traits": ["Lives in Munich"], "states": []}`)
	if _, err := add(t2, "I moved to Munich"); err != nil {
		t.Fatal(err)
	}
	old, err := e.GetMemory(ctx, s, berlin.ID)
	if err != nil || old.Status != engram.StatusSuperseded || old.SupersededBy == "" {
		t.Fatalf("Berlin after the move: %+v, %v", old, err)
	}
	hist, err := e.History(ctx, s, berlin.ID)
	if err != nil || hist[len(hist)-1].Actor != "former:llm:m1" || hist[len(hist)-1].Reason != "she moved" {
		t.Errorf("history %+v, %v; want the former's actor and reason", hist, err)
	}
	reqs := fake.Requests()
	if p := reqs[len(reqs)-2].Chat.Messages[1].Content; strings.Contains(p, berlin.ID) || !strings.Contains(p, "[1]") {
		t.Errorf("decision prompt %q shows a raw id or no numbered memory", p)
	}
	if p := reqs[len(reqs)-3].Chat.Messages[1].Content; !strings.Contains(p, "EARLIER turns") || !strings.Contains(p, "I live in Berlin") {
		t.Errorf("extraction prompt %q lacks the turn before", p)
	}
	prof, err := e.Profile(ctx, s)
	if err != nil || strings.Join(prof.Traits, "|") != "Lives in Munich" {
		t.Fatalf("profile %+v, %v", prof, err)
	}
	if n := countMemories(t, e, s, engram.StatusActive); n != 2 {
		t.Errorf("%d active memories, want Munich and the one profile", n)
	}

	fake.QueueChat(`{"episodes": [], "memories": [{"kind": "semantic", "abstraction": "forget request", "cues": [], "value": "forget where Alice lives",
		"language": "en", "about": "user", "valid_from": "", "valid_to": "", "foresight": false, "confidence": 1, "importance": 0.5, "profile": "", "sources": [1]}]}`,
		`{"decision": "DELETE", "target": 1, "reason": "the user asked to forget it", "abstraction": "", "value": "", "cues": []}`)
	if _, err := add(t2.Add(time.Hour), "Please forget where I live."); err != nil {
		t.Fatal(err)
	}
	if n := countMemories(t, e, s, engram.StatusDeleted); n != 1 {
		t.Errorf("%d deleted memories after the request to forget, want 1", n)
	}

	fake.QueueChat("```json\n{\"episodes\": [], \"memories\": [{\"kind\": \"feelings\"}]}\n```")
	before := countEpisodes(t, e, s)
	if _, err := add(t2.Add(2*time.Hour), "I feel great"); engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(err.Error(), "feelings") {
		t.Errorf("malformed reply: err = %v, want EUNAVAILABLE naming the bad kind", err)
	}
	if n := countEpisodes(t, e, s); n != before {
		t.Errorf("%d episodes after a failed formation, want %d: nothing is stored half-way", n, before)
	}
}

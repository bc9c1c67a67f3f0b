package http_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestSearchAgenticHTTP: POST /v1/search with mode agentic answers with
// the trace; a bad mode or budget is a 400 naming the field.
func TestSearchAgenticHTTP(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "app", User: "ann"}
	if _, err := env.c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{
		{Role: "user", Speaker: "Ann", Content: "I moved to Lisbon for a job at the aquarium."},
		{Role: "user", Speaker: "Ann", Content: "My sister Clara plays the cello in Porto."},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := env.c.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Where did Ann move?", Mode: engram.ModeAgentic, Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trace) < 2 || res.Trace[0].Action != engram.ActionSearch || len(res.Hits) == 0 {
		t.Fatalf("agentic search = %s, want hits and a trace", mustJSON(t, res))
	}
	for body, field := range map[string]string{
		`{"scope":{"org":"acme","project":"app","user":"ann"},"query":"x","mode":"deep"}`:              "mode",
		`{"scope":{"org":"acme","project":"app","user":"ann"},"query":"x","mode":"agentic","steps":9}`: "steps",
		`{"scope":{"org":"acme","project":"app","user":"ann"},"query":"x","llm_tokens":10}`:            "llm_tokens",
	} {
		r := do(t, "POST", env.srv.URL+"/v1/search", body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &e)
		if r.Status != 400 || !strings.Contains(e.Error.Message, field) {
			t.Errorf("%s = %d %s, want 400 naming %s", body, r.Status, r.Body, field)
		}
	}
}

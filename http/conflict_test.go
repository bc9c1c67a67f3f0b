package http_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestConflictsOverHTTP: a conflict the rules former finds is listed at
// GET /v1/conflicts in its scope only and resolved at POST
// /v1/conflicts/{id}/resolve; bad input answers 4xx naming the field, and
// the forgetting, merging and superseding decisions are reported in the
// add's result.
func TestConflictsOverHTTP(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	sc := engram.ScopeOf(ns)
	add := func(at time.Time, text string) *engram.AddEpisodesResult {
		t.Helper()
		res, err := env.c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
			Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: text, OccurredAt: &at}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	add(t0.Add(60*24*time.Hour), "Ich wohne jetzt in Hamburg.")
	if res := add(t0, "Ich wohne in Köln."); res.Decisions[engram.OpConflict] != 1 {
		t.Fatalf("decisions = %v, want a CONFLICT", res.Decisions)
	}
	cs, err := env.c.ListConflicts(ctx, sc)
	if err != nil || len(cs) != 1 || len(cs[0].Memories) != 2 {
		t.Fatalf("conflicts = %+v, %v", cs, err)
	}
	other, err := env.c.ListConflicts(ctx, engram.Scope{Org: "acme", Project: "p", User: "bob"})
	if err != nil || len(other) != 0 {
		t.Errorf("bob sees conflicts %+v, %v", other, err)
	}
	var hamburg string
	for _, m := range cs[0].Memories {
		if strings.Contains(m.Value, "Hamburg") {
			hamburg = m.ID
		}
	}
	base := env.srv.URL + "/v1/conflicts/" + cs[0].ID + "/resolve?org=acme&project=p&user=alice"
	for _, bad := range []struct{ body, field string }{
		{`{}`, "keep"},
		{`{"keep":"` + hamburg + `","action":"merge"}`, "action"},
		{`{"keep":"` + hamburg + `","colour":"red"}`, "colour"},
	} {
		r := do(t, "POST", base, bad.body)
		if e := errorOf(t, r); r.Status != http.StatusBadRequest || !strings.Contains(e.Error.Message, bad.field) {
			t.Errorf("resolve %s = %d %q, want 400 naming %s", bad.body, r.Status, e.Error.Message, bad.field)
		}
	}
	if r := do(t, "POST", strings.Replace(base, "user=alice", "user=bob", 1), `{"keep":"`+hamburg+`"}`); r.Status != http.StatusNotFound {
		t.Errorf("bob resolving alice's conflict = %d, want 404", r.Status)
	}
	res, err := env.c.ResolveConflict(ctx, sc, cs[0].ID, engram.ResolveConflictRequest{Keep: hamburg, Action: engram.ResolveDelete, Reason: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept.ID != hamburg || res.Other.Status != engram.StatusDeleted {
		t.Errorf("resolution kept %s, other %s", res.Kept.ID, res.Other.Status)
	}
	if cs, _ := env.c.ListConflicts(ctx, sc); len(cs) != 0 {
		t.Errorf("conflicts after resolving: %+v", cs)
	}
	if res := add(t0.Add(61*24*time.Hour), "Vergiss bitte, dass ich in Hamburg wohne."); res.Decisions[engram.OpDelete] == 0 {
		t.Errorf("forget request decided %v over HTTP, want deletes", res.Decisions)
	}
}

package http_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
)

// TestLifecycle_TTLOverHTTP: a memory whose expires_at has passed leaves
// search and the default list at once, shows as expired on get and in a
// list asking for expired ones, and after a sweep its history holds the
// sweeper's version; all through the real server.
func TestLifecycle_TTLOverHTTP(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	env := newEngineEnvWith(t, engine.Options{Now: clock}, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "bot", User: "ann"}
	sc := engram.ScopeOf(ns)
	soon := now.Add(time.Hour)
	ms, err := env.c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{
		{Value: "The guest wifi password is tulip42 until tonight.", ExpiresAt: &soon},
		{Value: "The office wifi password is oak17."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	temp, kept := ms[0].ID, ms[1].ID
	hits := func(f engram.MemoryFilter) []string {
		t.Helper()
		res, err := env.c.Search(ctx, engram.SearchRequest{Scope: sc, Query: "wifi password", Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.Memory.ID+":"+string(h.Memory.Status))
		}
		return out
	}
	if got := hits(engram.MemoryFilter{}); len(got) != 2 {
		t.Fatalf("before the TTL search = %v, want both", got)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if got := hits(engram.MemoryFilter{}); len(got) != 1 || got[0] != kept+":active" {
		t.Errorf("after the TTL search = %v, want only %s", got, kept)
	}
	if got := hits(engram.MemoryFilter{Statuses: []engram.Status{engram.StatusExpired}}); len(got) != 1 || got[0] != temp+":expired" {
		t.Errorf("search of expired = %v, want %s as expired", got, temp)
	}
	page, err := env.c.ListMemories(ctx, sc, engram.MemoryFilter{})
	if err != nil || len(page.Memories) != 1 || page.Memories[0].ID != kept {
		t.Errorf("list after the TTL = %v, %v; want only %s", page, err, kept)
	}
	page, err = env.c.ListMemories(ctx, sc, engram.MemoryFilter{Statuses: []engram.Status{engram.StatusExpired}})
	if err != nil || len(page.Memories) != 1 || page.Memories[0].ID != temp || page.Memories[0].Status != engram.StatusExpired {
		t.Errorf("list of expired = %v, %v; want %s", page, err, temp)
	}
	m, err := env.c.GetMemory(ctx, sc, temp)
	if err != nil || m.Status != engram.StatusExpired || m.ExpiredAt == nil || !m.ExpiredAt.Equal(soon) {
		t.Errorf("get after the TTL = %+v, %v; want expired at %v", m, err, soon)
	}
	if n, err := env.eng.Sweep(ctx, 0); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	vs, err := env.c.History(ctx, sc, temp)
	if err != nil || len(vs) != 2 || vs[1].Actor != engine.ActorSweeper || vs[1].New.Status != engram.StatusExpired {
		t.Errorf("history after the sweep = %+v, %v", vs, err)
	}
}

// TestLifecycle_DecayOverHTTP: reads through the API make a memory
// outrank an equal one; "decay": false in the search body turns that off;
// a decay that is not a boolean is a 400 naming the field.
func TestLifecycle_DecayOverHTTP(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "bot", User: "ann"}
	sc := engram.ScopeOf(ns)
	text := "Die Ersatzbrille liegt in der obersten Schublade."
	ms, err := env.c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: text}, {Value: text}}})
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].Language != "de" {
		t.Errorf("language of a German memory = %q, want de", ms[0].Language)
	}
	first, second := ms[0].ID, ms[1].ID
	if first > second {
		first, second = second, first
	}
	for range 4 {
		if _, err := env.c.GetMemory(ctx, sc, second); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.eng.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	top := func(decay string) string {
		t.Helper()
		body := `{"scope":{"org":"acme","project":"bot","user":"ann"},"query":"Wo ist die Ersatzbrille?"` + decay + `}`
		r := do(t, "POST", env.srv.URL+"/v1/search", body)
		if r.Status != 200 {
			t.Fatalf("search: %d %s", r.Status, r.Body)
		}
		i := strings.Index(string(r.Body), `"id":"`)
		return string(r.Body[i+6 : i+6+len(first)])
	}
	if got := top(""); got != second {
		t.Errorf("top hit after four reads = %s, want the read one %s", got, second)
	}
	if got := top(`,"decay":false`); got != first {
		t.Errorf(`top hit with "decay": false = %s, want %s (by id)`, got, first)
	}
	r := do(t, "POST", env.srv.URL+"/v1/search", `{"scope":{"org":"acme","project":"bot","user":"ann"},"query":"x","decay":"no"}`)
	if r.Status != 400 || !strings.Contains(string(r.Body), "decay") {
		t.Errorf(`"decay":"no" = %d %s; want 400 naming decay`, r.Status, r.Body)
	}
}

package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/storeopen"
)

// TestProfile_LLMFormer adds a turn through the server with the LLM
// former behind it and reads the profile it wrote, the actor of its
// versions, and a context that starts with it.
func TestProfile_LLMFormer(t *testing.T) {
	fake, f := fakeFormer(t)
	env := newEngineEnvWith(t, engine.Options{Former: f}, engramhttp.ServerOptions{})
	fake.QueueChat(`{"episodes": [], "memories": [{"kind": "core", "abstraction": "Wohnort", "cues": ["München"], "value": "Alice wohnt in München.",
		"language": "de", "about": "user", "valid_from": "", "valid_to": "", "foresight": false, "confidence": 0.9, "importance": 0.8, "profile": "trait", "sources": [1]}]}`,
		`{"traits": ["Wohnt in München"], "states": ["Zieht gerade um"]}`)
	ns := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	base := env.srv.URL + "/v1/profile?org=acme&project=app&user=alice"

	empty := do(t, "GET", base, "")
	if empty.Status != http.StatusOK || !strings.Contains(string(empty.Body), `"traits":[]`) || !strings.Contains(string(empty.Body), `"memories":[]`) {
		t.Fatalf("profile before any turn: %d %s, want empty lists", empty.Status, empty.Body)
	}
	ctx := context.Background()
	if _, err := env.c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: "Ich wohne jetzt in München."}}}); err != nil {
		t.Fatal(err)
	}
	r := do(t, "GET", base, "")
	var p engram.Profile
	if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != http.StatusOK {
		t.Fatalf("profile: %d %s: %v", r.Status, r.Body, err)
	}
	if strings.Join(p.Traits, "|") != "Wohnt in München" || strings.Join(p.States, "|") != "Zieht gerade um" || len(p.Memories) != 2 || p.Memories[0].Metadata[engram.MetaProfile] != true {
		t.Fatalf("profile = %s", r.Body)
	}
	hist, err := env.c.History(ctx, engram.ScopeOf(ns), p.Memories[1].ID)
	if err != nil || hist[0].Actor != "former:llm:fake-model" {
		t.Errorf("history %+v, err %v; want actor former:llm:fake-model", hist, err)
	}
	viaClient, err := env.c.Profile(ctx, engram.ScopeOf(ns))
	if err != nil || mustJSON(t, viaClient) != mustJSON(t, p) {
		t.Errorf("client profile %+v, err %v", viaClient, err)
	}
	res, err := env.c.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Wo wohnt Alice?", Budget: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.SplitN(res.Context, "\n", 2)[0], "Wohnt in München") {
		t.Errorf("context %q does not start with the profile", res.Context)
	}
	// Another user of the same project sees nothing of Alice's profile.
	other := do(t, "GET", env.srv.URL+"/v1/profile?org=acme&project=app&user=bob", "")
	if other.Status != http.StatusOK || strings.Contains(string(other.Body), "München") || !strings.Contains(string(other.Body), `"memories":[]`) {
		t.Errorf("bob's profile: %d %s", other.Status, other.Body)
	}
	if bad := do(t, "GET", env.srv.URL+"/v1/profile?org=acme", ""); bad.Status != http.StatusBadRequest || !strings.Contains(string(bad.Body), "project") {
		t.Errorf("profile without project: %d %s, want 400 naming the project", bad.Status, bad.Body)
	}
}

// TestProfile_WithoutLLM reads a scope's core memories as its profile and
// refuses another tenant's key.
func TestProfile_WithoutLLM(t *testing.T) {
	e := newAuthEnv(t)
	acme := e.key(t, "acme", "app", "", engram.RoleAdmin)
	globex := e.key(t, "globex", "app", "", engram.RoleRead)
	bob := e.key(t, "acme", "app", "bob", engram.RoleRead)
	body := `{"namespace":{"org":"acme","project":"app","user":"u1"},"memories":[{"kind":"core","value":"u1 is a zebracorn keeper","importance":0.9},{"value":"not core"}]}`
	if r := e.call(t, acme, "POST", "/v1/memories", body); r.Status != http.StatusCreated {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	r := e.call(t, acme, "GET", "/v1/profile?org=acme&project=app&user=u1", "")
	var p engram.Profile
	if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != 200 || len(p.Memories) != 1 || p.Memories[0].Value != "u1 is a zebracorn keeper" {
		t.Fatalf("profile: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ name, key, path, field string }{
		{"other tenant", globex, "/v1/profile?org=acme&project=app&user=u1", "org"},
		{"other user's key", bob, "/v1/profile?org=acme&project=app&user=u1", "user"},
	} {
		r := e.call(t, c.key, "GET", c.path, "")
		wantError(t, c.name, r, 403, engram.EFORBIDDEN, "namespace."+c.field)
		if strings.Contains(string(r.Body), "zebracorn") {
			t.Errorf("%s: %s leaks the profile", c.name, r.Body)
		}
	}
	wantError(t, "no key", e.call(t, "", "GET", "/v1/profile?org=acme&project=app&user=u1", ""), 401, engram.EUNAUTHORIZED, "")
}

// TestProfile_PerUserWithKeys adds turns of one user in two sessions
// through the server with her key and the LLM former behind it: one
// profile, created then rewritten, which her session-scoped request reads
// and which another user's or tenant's key can neither read nor reach by
// id.
func TestProfile_PerUserWithKeys(t *testing.T) {
	fake, f := fakeFormer(t)
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Former: f, Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Ready: eng.Ready, Keys: keys}))
	t.Cleanup(srv.Close)
	e := &authEnv{srv: srv, keys: keys}
	alice, bob := e.key(t, "acme", "app", "alice", engram.RoleWrite), e.key(t, "acme", "app", "bob", engram.RoleWrite)
	globex := e.key(t, "globex", "app", "", engram.RoleAdmin)

	turn := func(session, text string) {
		t.Helper()
		body := `{"async": false, "namespace": {"org": "acme", "project": "app", "user": "alice", "session": "` + session + `"},
			"episodes": [{"role": "user", "speaker": "Alice", "content": "` + text + `"}]}`
		if r := e.call(t, alice, "POST", "/v1/episodes", body); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("add a turn in %s: %d %s", session, r.Status, r.Body)
		}
	}
	fact := func(value string) string {
		return `{"episodes": [], "memories": [{"kind": "core", "abstraction": "home", "cues": [], "value": "` + value + `",
			"language": "", "about": "user", "valid_from": "", "valid_to": "", "foresight": false, "confidence": 0.9, "importance": 0.8, "profile": "trait", "sources": [1]}]}`
	}
	fake.QueueChat(fact("Alice wohnt in Berlin."), `{"traits": ["Wohnt in Berlin"], "states": []}`)
	turn("s1", "Ich wohne in Berlin.")
	// The second session's former sees the first's fact (formation reaches
	// across a user's sessions) and asks the model what the new one does
	// to it.
	fake.QueueChat(fact("Alice wohnt jetzt in München."),
		`{"decision": "SUPERSEDE", "target": 1, "reason": "moved", "abstraction": "", "value": "", "cues": []}`,
		`{"traits": ["Wohnt in München"], "states": []}`)
	turn("s2", "Ich bin nach München gezogen.")

	var p engram.Profile
	r := e.call(t, alice, "GET", "/v1/profile?org=acme&project=app&user=alice&session=s1", "")
	if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != http.StatusOK {
		t.Fatalf("alice's session profile: %d %s: %v", r.Status, r.Body, err)
	}
	if strings.Join(p.Traits, "|") != "Wohnt in München" || len(p.Memories) == 0 || p.Memories[0].Version != 2 || p.Memories[0].Namespace.Session != "" {
		t.Fatalf("alice's session profile = %s, want her one profile, rewritten", r.Body)
	}
	id := p.Memories[0].ID
	if r := e.call(t, bob, "GET", "/v1/profile?org=acme&project=app&user=bob&session=s1", ""); r.Status != http.StatusOK || strings.Contains(string(r.Body), "München") || !strings.Contains(string(r.Body), `"memories":[]`) {
		t.Errorf("bob's own session profile: %d %s, want none", r.Status, r.Body)
	}
	for _, c := range []struct{ name, key, path string }{
		{"bob reads alice's profile", bob, "/v1/profile?org=acme&project=app&user=alice&session=s1"},
		{"another tenant reads alice's profile", globex, "/v1/profile?org=acme&project=app&user=alice"},
	} {
		if r := e.call(t, c.key, "GET", c.path, ""); r.Status != http.StatusForbidden || strings.Contains(string(r.Body), "München") {
			t.Errorf("%s: %d %s, want 403", c.name, r.Status, r.Body)
		}
	}
	if r := e.call(t, bob, "GET", "/v1/memories/"+id+"?org=acme&project=app&user=bob", ""); r.Status != http.StatusNotFound {
		t.Errorf("bob gets alice's profile by id: %d %s, want 404", r.Status, r.Body)
	}
}

// fakeFormer is an LLM former over a scripted fake model, and the model.
func fakeFormer(t *testing.T) (*openaitest.Server, *llmformer.Former) {
	t.Helper()
	fake := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	chat, err := openai.NewChat(openai.Config{BaseURL: fake.URL(), Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return fake, f
}

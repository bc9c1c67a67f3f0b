package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/mcp"
	"github.com/engramhq/engram/storeopen"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the store logs its migrations
	os.Exit(m.Run())
}

var defaultScope = engram.Namespace{Org: "acme", Project: "app", User: "ann"}

// mustEngine opens a real engine in a temp dir.
func mustEngine(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{
		Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	return eng
}

// connect connects a client to srv over an in-memory transport.
func connect(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// newLocal is an engine with a stdio-style server (no key) over it.
func newLocal(t *testing.T) (*engine.Engine, *sdk.ClientSession) {
	eng := mustEngine(t)
	return eng, connect(t, mcp.NewServer(eng, mcp.Options{Scope: defaultScope, Actor: "tester"}))
}

// call calls a tool; a protocol error fails the test, a tool error does not.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok calls a tool that must succeed and decodes its structured output.
func ok[T any](t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %q", name, args, text(res))
	}
	var out T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	return out
}

// toolError calls a tool that must fail with a tool error containing want.
func toolError(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, want string) {
	t.Helper()
	res := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s %v: succeeded with %q, want a tool error with %q", name, args, text(res), want)
	}
	t.Logf("%s: %s", name, text(res))
	if !strings.Contains(text(res), want) {
		t.Fatalf("%s %v: error %q does not say %q", name, args, text(res), want)
	}
}

func TestTools_ListedWithSchemas(t *testing.T) {
	_, cs := newLocal(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ // tool -> properties its schema must have
		"remember": {"turns", "fact", "user"},
		"recall":   {"query", "k", "budget", "now", "user"},
		"get":      {"id"},
		"list":     {"kinds", "statuses", "contains", "limit", "cursor"},
		"update":   {"id", "value"},
		"forget":   {"id", "hard", "reason"},
		"history":  {"id"},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		props, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range props {
			if schema.Properties[p].Description == "" {
				t.Errorf("%s: property %s missing or undescribed in %s", tool.Name, p, b)
			}
		}
		if tool.Name == "recall" && strings.Join(schema.Required, ",") != "query" {
			t.Errorf("recall requires %v, want [query]", schema.Required)
		}
	}
}

type rememberOut struct {
	Episodes []string `json:"episodes"`
	Memories []struct {
		ID, Kind, Value string
	} `json:"memories"`
}

type recallOut struct {
	EmptyScope bool   `json:"empty_scope"`
	Context    string `json:"context"`
	Tokens     int    `json:"tokens"`
	Trace      []struct {
		Action string `json:"action"`
	} `json:"trace"`
	Hits []struct {
		ID    string  `json:"id"`
		Value string  `json:"value"`
		Score float64 `json:"score"`
	} `json:"hits"`
}

func TestRememberRecall(t *testing.T) {
	_, cs := newLocal(t)
	rem := ok[rememberOut](t, cs, "remember", map[string]any{"turns": []map[string]any{
		{"role": "user", "speaker": "Ann", "content": "I adopted a greyhound called Biscuit last spring.", "occurred_at": "2025-05-02T10:00:00Z"},
		{"role": "assistant", "content": "Congratulations on Biscuit!"},
	}})
	if len(rem.Episodes) != 2 || len(rem.Memories) == 0 {
		t.Fatalf("remember stored %d episodes and %d memories, want 2 and some", len(rem.Episodes), len(rem.Memories))
	}
	rec := ok[recallOut](t, cs, "recall", map[string]any{"query": "what is the name of Ann's dog, the greyhound?"})
	if !strings.Contains(rec.Context, "Biscuit") || len(rec.Hits) == 0 || rec.Tokens == 0 {
		t.Fatalf("recall = %+v, want a context with Biscuit", rec)
	}
	formed := map[string]bool{}
	for _, m := range rem.Memories {
		formed[m.ID] = true
	}
	if !formed[rec.Hits[0].ID] {
		t.Errorf("best hit %s is not a memory remember formed (%v)", rec.Hits[0].ID, formed)
	}

	// A fact, in other languages, is found by a question in its language.
	for _, c := range []struct{ fact, query, want string }{
		{"Ann trinkt ihren Kaffee immer ohne Zucker.", "Wie trinkt Ann ihren Kaffee?", "Zucker"},
		{"La hermana de Ann vive en Valencia.", "¿Dónde vive la hermana de Ann?", "Valencia"},
		{"安的生日是十月三日。", "安的生日是哪天？", "十月三日"},
	} {
		f := ok[rememberOut](t, cs, "remember", map[string]any{"fact": c.fact})
		if len(f.Memories) != 1 || f.Memories[0].Value != c.fact || f.Memories[0].Kind != "semantic" {
			t.Fatalf("remember fact %q = %+v", c.fact, f)
		}
		rec := ok[recallOut](t, cs, "recall", map[string]any{"query": c.query, "k": 3})
		if len(rec.Hits) == 0 || rec.Hits[0].ID != f.Memories[0].ID || !strings.Contains(rec.Context, c.want) {
			t.Errorf("recall %q = %+v, want %s first", c.query, rec, f.Memories[0].ID)
		}
	}

	// An agentic recall finds the same answer and says how it searched.
	ag := ok[recallOut](t, cs, "recall", map[string]any{"query": "what is the name of Ann's dog, the greyhound?", "mode": "agentic", "steps": 2})
	if !strings.Contains(ag.Context, "Biscuit") || len(ag.Trace) < 2 || ag.Trace[0].Action != "search" || ag.Trace[len(ag.Trace)-1].Action != "stop" {
		t.Errorf("agentic recall = %+v, want Biscuit and a trace from search to stop", ag)
	}

	// The scope defaults to the server's; another user named in the
	// arguments sees none of Ann's memories.
	other := ok[recallOut](t, cs, "recall", map[string]any{"query": "greyhound Biscuit", "user": "bob"})
	if len(other.Hits) != 0 {
		t.Errorf("bob's recall found %d of Ann's memories", len(other.Hits))
	}
}

// Every bad call is a tool error naming what is wrong, and stores nothing.
func TestInvalidCalls(t *testing.T) {
	eng, cs := newLocal(t)
	turns := func(ts ...map[string]any) []map[string]any { return ts }
	good := map[string]any{"role": "user", "content": "hello"}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{}, "turns"},
		{"remember", map[string]any{"turns": turns(good, map[string]any{"role": "user", "content": ""})}, "turns[1].content"},
		{"remember", map[string]any{"turns": turns(good, map[string]any{"role": "robot", "content": "hi"})}, "turns[1].role"},
		{"remember", map[string]any{"turns": turns(good, map[string]any{"role": "user"})}, "content"},
		{"remember", map[string]any{"turns": turns(good), "fact": "x"}, "not both"},
		{"remember", map[string]any{"fact": "x", "kind": "dream"}, "kind"},
		{"remember", map[string]any{"fact": "x", "kind": "vault"}, "vault"},
		{"remember", map[string]any{"fact": "x", "user": "a/b"}, "namespace.user"},
		{"remember", map[string]any{"facts": "x"}, "facts"},
		{"remember", map[string]any{"turns": "hello"}, "turns"},
		{"recall", map[string]any{}, "query"},
		{"recall", map[string]any{"query": "  "}, "query"},
		{"recall", map[string]any{"query": "x", "k": 500}, "k"},
		{"recall", map[string]any{"query": "x", "budget": -1}, "budget"},
		{"recall", map[string]any{"query": "x", "mode": "deep"}, "mode"},
		{"recall", map[string]any{"query": "x", "mode": "agentic", "steps": 9}, "steps"},
		{"recall", map[string]any{"query": "x", "steps": 2}, "steps"},
		{"get", map[string]any{"id": ""}, "id"},
		{"get", map[string]any{"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "not found"},
		{"list", map[string]any{"kinds": []string{"dream"}}, "kinds[0]"},
		{"update", map[string]any{"id": "x"}, "at least one of"},
		{"forget", map[string]any{}, "id"},
	} {
		toolError(t, cs, c.tool, c.args, c.want)
	}
	ctx := context.Background()
	sc := engram.ScopeOf(defaultScope)
	eps, err := eng.ListEpisodes(ctx, sc, engram.EpisodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := eng.ListMemories(ctx, sc, engram.MemoryFilter{Statuses: []engram.Status{engram.StatusActive, engram.StatusDeleted}})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.Episodes) != 0 || len(ms.Memories) != 0 {
		t.Fatalf("bad calls stored %d episodes and %d memories", len(eps.Episodes), len(ms.Memories))
	}
}

type memoryOut struct {
	ID      string `json:"id"`
	Value   string `json:"value"`
	Status  string `json:"status"`
	Version int    `json:"version"`
}

func TestUpdateForgetHistory(t *testing.T) {
	_, cs := newLocal(t)
	soft := ok[rememberOut](t, cs, "remember", map[string]any{"fact": "Ann works at the Kestrel bakery."}).Memories[0].ID
	hard := ok[rememberOut](t, cs, "remember", map[string]any{"fact": "Ann's locker code is 4711 at the Kestrel gym."}).Memories[0].ID

	up := ok[memoryOut](t, cs, "update", map[string]any{"id": soft, "value": "Ann works at the Kestrel bakery as head baker.", "reason": "promoted"})
	if up.Version != 2 || !strings.Contains(up.Value, "head baker") {
		t.Fatalf("update = %+v", up)
	}
	ok[map[string]any](t, cs, "forget", map[string]any{"id": soft, "reason": "asked to"})
	got := ok[memoryOut](t, cs, "get", map[string]any{"id": soft})
	if got.Status != "deleted" {
		t.Fatalf("after a soft forget, status %q, want deleted", got.Status)
	}
	var hist struct {
		Versions []struct {
			Op     string `json:"op"`
			Reason string `json:"reason"`
		} `json:"versions"`
	}
	hist = ok[struct {
		Versions []struct {
			Op     string `json:"op"`
			Reason string `json:"reason"`
		} `json:"versions"`
	}](t, cs, "history", map[string]any{"id": soft})
	var ops []string
	for _, v := range hist.Versions {
		ops = append(ops, v.Op+":"+v.Reason)
	}
	if got, want := strings.Join(ops, " "), "ADD: UPDATE:promoted DELETE:asked to"; got != want {
		t.Errorf("history = %q, want %q", got, want)
	}

	ok[map[string]any](t, cs, "forget", map[string]any{"id": hard, "hard": true})
	toolError(t, cs, "get", map[string]any{"id": hard}, "not found")
	toolError(t, cs, "history", map[string]any{"id": hard}, "not found")
	rec := ok[recallOut](t, cs, "recall", map[string]any{"query": "Kestrel"})
	if len(rec.Hits) != 0 {
		t.Errorf("recall after forgetting both finds %+v", rec.Hits)
	}
	page := ok[struct {
		Memories []memoryOut `json:"memories"`
	}](t, cs, "list", map[string]any{"statuses": []string{"deleted"}})
	if len(page.Memories) != 1 || page.Memories[0].ID != soft {
		t.Errorf("deleted memories = %+v, want only %s", page.Memories, soft)
	}
}

func TestResources(t *testing.T) {
	_, cs := newLocal(t)
	ctx := context.Background()
	id := ok[rememberOut](t, cs, "remember", map[string]any{"fact": "Ann is vegetarian.", "kind": "core"}).Memories[0].ID

	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://memories/" + id})
	if err != nil {
		t.Fatal(err)
	}
	var m memoryOut
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil || m.ID != id || m.Value != "Ann is vegetarian." {
		t.Fatalf("memory resource = %s (%v)", res.Contents[0].Text, err)
	}
	for _, uri := range []string{"engram://profile", "engram://users/ann/profile"} {
		res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		var p engram.Profile
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Memories) != 1 || p.Memories[0].ID != id {
			t.Errorf("%s: profile memories %+v, want the core memory %s", uri, p.Memories, id)
		}
	}
	res, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://users/bob/profile"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Contents[0].Text, id) {
		t.Errorf("bob's profile shows Ann's memory: %s", res.Contents[0].Text)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://memories/01ARZ3NDEKTSV4RRFFQ69G5FAV"}); err == nil {
		t.Error("reading a missing memory succeeded")
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 2 {
		t.Fatalf("templates %+v, %v", tmpl, err)
	}
}

// httpEnv is engram serve's HTTP API with API keys and the MCP mount.
type httpEnv struct {
	srv  *httptest.Server
	keys engram.Keys
}

func newHTTP(t *testing.T) *httpEnv {
	eng := mustEngine(t)
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler), Keys: keys,
		Mounts: []engramhttp.Mount{{Pattern: "/mcp", Handler: mcp.Handler(eng, mcp.Options{}), Role: engram.RoleRead}},
	}))
	t.Cleanup(srv.Close)
	return &httpEnv{srv: srv, keys: keys}
}

func (e *httpEnv) key(t *testing.T, user, role string) string {
	t.Helper()
	_, secret, err := e.keys.CreateKey(context.Background(), engram.KeySpec{
		Namespace: engram.Namespace{Org: "acme", Project: "app", User: user}, Role: role,
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// client connects over streamable HTTP with key.
func (e *httpEnv) client(t *testing.T, key string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// Over HTTP a read key may read but not write, and every call stays in
// the key's binding: its user is the default, another user is refused.
func TestHTTP_KeysAndBinding(t *testing.T) {
	e := newHTTP(t)
	annWrite := e.client(t, e.key(t, "ann", engram.RoleWrite))
	annRead := e.client(t, e.key(t, "ann", engram.RoleRead))
	bobWrite := e.client(t, e.key(t, "bob", engram.RoleWrite))
	admin := e.client(t, e.key(t, "", engram.RoleAdmin))

	annID := ok[rememberOut](t, annWrite, "remember", map[string]any{"fact": "Ann's favourite tea is genmaicha."}).Memories[0].ID
	bobID := ok[rememberOut](t, bobWrite, "remember", map[string]any{"fact": "Bob's favourite tea is genmaicha too."}).Memories[0].ID

	toolError(t, annRead, "remember", map[string]any{"fact": "read keys cannot write"}, "role write")
	toolError(t, annRead, "forget", map[string]any{"id": annID}, "role write")
	toolError(t, annRead, "update", map[string]any{"id": annID, "value": "x"}, "role write")
	rec := ok[recallOut](t, annRead, "recall", map[string]any{"query": "favourite tea genmaicha"})
	if len(rec.Hits) != 1 || rec.Hits[0].ID != annID {
		t.Fatalf("ann's recall = %+v, want only %s", rec.Hits, annID)
	}
	if got := ok[memoryOut](t, annRead, "get", map[string]any{"id": annID}); got.ID != annID {
		t.Fatalf("ann's get = %+v", got)
	}

	// Ann's key cannot reach Bob's memories, by naming him or by id.
	for tool, args := range map[string]map[string]any{
		"recall": {"query": "tea"}, "list": {}, "get": {"id": bobID}, "history": {"id": bobID}, "forget": {"id": bobID},
		"update": {"id": bobID, "value": "x"}, "remember": {"fact": "x"},
	} {
		args["user"] = "bob"
		toolError(t, annWrite, tool, args, `namespace.user "bob" is outside`)
	}
	toolError(t, annWrite, "get", map[string]any{"id": bobID}, "not found")
	toolError(t, annWrite, "forget", map[string]any{"id": bobID, "hard": true}, "not found")
	toolError(t, annWrite, "remember", map[string]any{"fact": "x", "org": "globex"}, `namespace.org "globex" is outside`)
	page := ok[struct {
		Memories []memoryOut `json:"memories"`
	}](t, annRead, "list", map[string]any{})
	if len(page.Memories) != 1 || page.Memories[0].ID != annID {
		t.Fatalf("ann's list = %+v", page.Memories)
	}
	// Resources keep to the key's binding too.
	ctx := context.Background()
	if _, err := annRead.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://memories/" + bobID}); err == nil {
		t.Error("ann's key read bob's memory as a resource")
	}
	if _, err := annRead.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://users/bob/profile"}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("ann's key read bob's profile: %v", err)
	}
	if res, err := annRead.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://memories/" + annID}); err != nil || !strings.Contains(res.Contents[0].Text, "genmaicha") {
		t.Errorf("ann's memory as a resource: %v", err)
	}
	// Bob's memory is intact; an unbound key names the user it reads.
	if got := ok[memoryOut](t, admin, "get", map[string]any{"id": bobID, "user": "bob"}); got.Status != "active" {
		t.Fatalf("bob's memory after ann's attempts: %+v", got)
	}
	toolError(t, admin, "get", map[string]any{"id": bobID}, "not found")

	// Without a key the endpoint answers 401 before MCP runs.
	r, err := http.Post(e.srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: %d %s", r.StatusCode, b)
	}
}

// TestRecallAsOf: recall and list as of an event time see what was true
// then: the old city before the move, nothing said later; without
// valid_at, the new city too. A valid_at that is no time is a tool
// error naming it. In English, German and Spanish.
func TestRecallAsOf(t *testing.T) {
	for _, c := range []struct{ before, after, query, oldCity, newCity string }{
		{"I live in Berlin.", "I moved to Munich.", "Where does Ann live?", "Berlin", "Munich"},
		{"Ich wohne in Berlin.", "Ich bin nach München gezogen.", "Wo wohnt Ann?", "Berlin", "München"},
		{"Vivo en Berlín.", "Me mudé a Múnich.", "¿Dónde vive Ann?", "Berlín", "Múnich"},
	} {
		_, cs := newLocal(t)
		ok[rememberOut](t, cs, "remember", map[string]any{"turns": []map[string]any{
			{"role": "user", "speaker": "Ann", "content": c.before, "occurred_at": "2025-01-01T10:00:00Z"},
			{"role": "user", "speaker": "Ann", "content": c.after, "occurred_at": "2025-03-01T10:00:00Z"},
		}})
		now := ok[recallOut](t, cs, "recall", map[string]any{"query": c.query, "k": 3})
		if !strings.Contains(now.Context, c.newCity) {
			t.Errorf("recall %q = %+v, want %s in the context", c.query, now, c.newCity)
		}
		then := ok[recallOut](t, cs, "recall", map[string]any{"query": c.query, "k": 3, "valid_at": "2025-02-01T00:00:00Z"})
		if len(then.Hits) == 0 || !strings.Contains(then.Hits[0].Value, c.oldCity) || strings.Contains(then.Context, c.newCity) {
			t.Errorf("recall %q as of February = %+v, want %s first and no %s", c.query, then, c.oldCity, c.newCity)
		}
		page := ok[struct {
			Memories []memoryOut `json:"memories"`
		}](t, cs, "list", map[string]any{"valid_at": "2025-02-01T00:00:00Z"})
		if len(page.Memories) == 0 || slices.ContainsFunc(page.Memories, func(m memoryOut) bool { return strings.Contains(m.Value, c.newCity) }) {
			t.Errorf("list as of February = %+v, want the memories of before the move only", page.Memories)
		}
		toolError(t, cs, "recall", map[string]any{"query": c.query, "valid_at": "soon"}, "valid_at")
	}
}

// A request body that is not valid UTF-8 is refused as a JSON-RPC parse
// error naming the field, before the SDK would turn it into U+FFFD.
func TestHTTPInvalidUTF8(t *testing.T) {
	e := newHTTP(t)
	key := e.key(t, "ann", engram.RoleWrite)
	body := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"remember\",\"arguments\":{\"text\":\"caf\xe9\"}}}"
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "-32700") || !strings.Contains(string(b), "params.arguments.text is not valid UTF-8") {
		t.Fatalf("status %d: %s; want 400 with a parse error naming params.arguments.text", resp.StatusCode, b)
	}
}

// TestRecallEmptyScope: a recall in a scope that holds nothing says so; in
// one that holds memories none of which match, it does not.
func TestRecallEmptyScope(t *testing.T) {
	_, cs := newLocal(t)
	if got := ok[recallOut](t, cs, "recall", map[string]any{"query": "Where does Ann live?"}); !got.EmptyScope || len(got.Hits) != 0 {
		t.Errorf("recall in an empty scope = %+v, want empty_scope", got)
	}
	ok[rememberOut](t, cs, "remember", map[string]any{"turns": []map[string]any{{"role": "user", "speaker": "Ann", "content": "Ich wohne in Berlin."}}})
	if got := ok[recallOut](t, cs, "recall", map[string]any{"query": "Klavierunterricht"}); got.EmptyScope {
		t.Errorf("recall in a scope with memories = %+v, want no empty_scope", got)
	}
}

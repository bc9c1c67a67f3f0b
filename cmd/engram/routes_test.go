package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram/openai/openaitest"
)

// TestServeEveryRoute serves the binary on SQLite and on PostgreSQL
// (skipped without ENGRAM_TEST_POSTGRES_URL unless ENGRAM_REQUIRE_POSTGRES=1)
// with API keys on, and calls every route it serves with a valid request:
// every operation of its OpenAPI document, the MCP endpoint (initialize,
// tools/list, a tool and the profile resource), the Mem0-compatible API (an
// add and a search), the chat proxy (against a scripted upstream) and the
// dashboard. No answer may be 501 or 503 or say the server "keeps no"
// capability, and both backends must answer the same calls alike. The
// routes come from the server itself (its OpenAPI document and the
// patterns it logs at debug level), so a route added later without a call
// here fails the test.
func TestServeEveryRoute(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answers := map[string][]routeAnswer{}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			store := ""
			if backend == "postgres" {
				store = pgSchemaURL(t)
			}
			got := exerciseRoutes(t, store)
			if t.Failed() {
				return // the answers of a failed run are not worth comparing
			}
			mu.Lock()
			answers[backend] = got
			mu.Unlock()
		})
	}
	t.Cleanup(func() {
		lite, pg := answers["sqlite"], answers["postgres"]
		if lite == nil || pg == nil {
			return
		}
		for i := range max(len(lite), len(pg)) {
			var a, b routeAnswer
			if i < len(lite) {
				a = lite[i]
			}
			if i < len(pg) {
				b = pg[i]
			}
			if a != b {
				t.Errorf("answer %d differs:\n  sqlite:   %+v\n  postgres: %+v", i, a, b)
			}
		}
	})
}

// routeAnswer is what both backends must answer alike: the call, its
// status and the fields of its answer that do not depend on ids or times.
type routeAnswer struct {
	Call   string
	Status int
	Stable string
}

// routeClient calls a server with an API key, checks every answer and
// records which requests it made.
type routeClient struct {
	t       *testing.T
	base    string
	key     string
	mu      sync.Mutex
	made    []*http.Request // every request, for the coverage check
	answers []routeAnswer
}

// RoundTrip adds the key and records the request, so that the MCP
// client's requests count like the others.
func (c *routeClient) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.made = append(c.made, req)
	c.mu.Unlock()
	return resp, nil
}

// call sends one request and returns the body of its answer. Any status
// outside 2xx fails the test (a "keeps no ..." answer was a 400 or 503);
// stable, when set, picks the fields compared across backends.
func (c *routeClient) call(method, path, contentType string, body []byte, stable func([]byte) string) []byte {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.RoundTrip(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		c.t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	a := routeAnswer{Call: method + " " + routeTemplate(path), Status: resp.StatusCode}
	if stable != nil && resp.StatusCode/100 == 2 {
		a.Stable = stable(out)
	}
	c.answers = append(c.answers, a)
	return out
}

// json sends a JSON body (nil for none) and decodes the answer into v
// (nil to ignore it).
func (c *routeClient) json(method, path string, body any, v any, stable func([]byte) string) {
	c.t.Helper()
	var raw []byte
	ctype := ""
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			c.t.Fatal(err)
		}
		ctype = "application/json"
	}
	out := c.call(method, path, ctype, raw, stable)
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, out, err)
		}
	}
}

// idSegment is a path segment holding an id: a ULID or a key's id.
var idSegment = regexp.MustCompile(`/[0-9A-Za-z]{16,}(/|$)`)

// routeTemplate is path without its query and with ids replaced by {id}.
func routeTemplate(path string) string {
	path, _, _ = strings.Cut(path, "?")
	return idSegment.ReplaceAllString(path, "/{id}$1")
}

// count is a stable field picker: the number of items in each named array
// of a JSON object answer (or of the answer itself when it is an array).
func count(fields ...string) func([]byte) string {
	return func(b []byte) string {
		if len(fields) == 0 {
			var arr []json.RawMessage
			_ = json.Unmarshal(b, &arr)
			return fmt.Sprint(len(arr))
		}
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(b, &obj)
		var parts []string
		for _, f := range fields {
			var arr []json.RawMessage
			_ = json.Unmarshal(obj[f], &arr)
			parts = append(parts, fmt.Sprintf("%s=%d", f, len(arr)))
		}
		return strings.Join(parts, " ")
	}
}

// values is a stable field picker: the sorted values of one string field
// of the items of the named array.
func values(array, field string) func([]byte) string {
	return func(b []byte) string {
		var obj map[string][]map[string]any
		_ = json.Unmarshal(b, &obj)
		var vs []string
		for _, item := range obj[array] {
			vs = append(vs, fmt.Sprint(item[field]))
		}
		sort.Strings(vs)
		return strings.Join(vs, "|")
	}
}

// field is a stable field picker: one field of a JSON object answer.
func field(name string) func([]byte) string {
	return func(b []byte) string {
		var obj map[string]any
		_ = json.Unmarshal(b, &obj)
		return fmt.Sprint(obj[name])
	}
}

// exerciseRoutes serves the binary over store (the data directory's SQLite
// store when empty), calls every route and returns the answers to compare.
func exerciseRoutes(t *testing.T, store string) []routeAnswer {
	up := openaitest.NewServer(t, openaitest.Options{Chat: func(openaitest.ChatRequest) string { return "Noted." }})
	dir := t.TempDir()
	env := append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite")
	if store != "" {
		env = append(env, "ENGRAM_STORE="+store)
	}
	keyCLI := &cli{t: t, env: env, extra: []string{"--data", dir}}
	key := strings.TrimSpace(keyCLI.ok("keys", "create", "--org", "acme", "--project", "app", "--role", "admin"))
	s := startServer(t, dir, env, "--no-auth=false", "--log-level", "debug", "--proxy-url", up.URL(), "--community-refresh", "0")
	c := &routeClient{t: t, base: s.url, key: key}

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	c.call("GET", "/healthz", "", nil, nil)
	c.call("GET", "/readyz", "", nil, nil)
	if err := json.Unmarshal(c.call("GET", "/v1/openapi.json", "", nil, nil), &doc); err != nil {
		t.Fatal(err)
	}
	exerciseRecords(c)
	exerciseGraph(c)
	exerciseMedia(c)
	exerciseMounts(c)
	exerciseTeardown(c)

	checkCovered(t, c, doc.Paths, servedPatterns(t, s))
	return c.answers
}

const routeScope = "?org=acme&project=app&user=ann"

var routeNS = map[string]string{"org": "acme", "project": "app", "user": "ann"}

type idOnly struct {
	ID string `json:"id"`
}

// exerciseRecords calls the routes of episodes, memories, search, the
// scope, jobs, conflicts, keys and embeddings.
func exerciseRecords(c *routeClient) {
	var added struct {
		Episodes []idOnly `json:"episodes"`
		Job      *idOnly  `json:"job"`
	}
	episode := func(text, at string) map[string]any {
		return map[string]any{"role": "user", "speaker": "Ann", "content": text, "occurred_at": at}
	}
	c.json("POST", "/v1/episodes", map[string]any{"namespace": routeNS, "episodes": []any{
		episode("Ich wohne jetzt in Hamburg.", "2025-05-01T10:00:00Z")}}, &added, count("episodes"))
	c.json("POST", "/v1/episodes", map[string]any{"namespace": routeNS, "episodes": []any{
		episode("Ich wohne in Köln.", "2025-03-01T10:00:00Z")}}, &added, count("episodes"))
	c.json("POST", "/v1/episodes", map[string]any{"namespace": routeNS, "async": true, "episodes": []any{
		episode("Je joue du violoncelle le dimanche.", "2025-05-02T10:00:00Z")}}, &added, count("episodes"))
	if added.Job == nil {
		c.t.Fatal("an asynchronous add returned no job")
	}
	c.call("GET", "/v1/jobs"+routeScope, "", nil, nil)
	c.call("GET", "/v1/jobs/"+added.Job.ID+routeScope, "", nil, nil)
	c.call("GET", "/v1/episodes"+routeScope, "", nil, nil)
	c.call("GET", "/v1/episodes/"+added.Episodes[0].ID+routeScope, "", nil, nil)

	var mems struct {
		Memories []idOnly `json:"memories"`
	}
	c.json("POST", "/v1/memories", map[string]any{"namespace": routeNS, "memories": []any{
		map[string]any{"value": "Last summer I hiked in Yosemite with Melanie and Jürgen."},
		map[string]any{"value": "Melanie und Jürgen kochten zusammen."},
		map[string]any{"value": "Ann drinks green tea every morning."}}}, &mems, count("memories"))
	tea := mems.Memories[2].ID
	c.call("GET", "/v1/memories"+routeScope+"&kind=semantic", "", nil, nil)
	c.json("POST", "/v1/memories/list", map[string]any{"scope": routeNS}, nil, nil)
	c.call("GET", "/v1/memories/"+tea+routeScope, "", nil, field("value"))
	c.json("PATCH", "/v1/memories/"+tea+routeScope, map[string]any{"value": "Ann drinks black tea every morning.", "reason": "changed"}, nil, nil)
	c.call("GET", "/v1/memories/"+tea+"/history"+routeScope, "", nil, count())
	c.json("POST", "/v1/memories/"+tea+"/rollback"+routeScope, map[string]any{"version": 1, "reason": "back"}, nil, nil)
	c.call("DELETE", "/v1/memories/"+tea+routeScope+"&reason=test", "", nil, nil)
	c.json("POST", "/v1/memories/"+tea+"/restore"+routeScope, map[string]any{"reason": "restored"}, nil, nil)
	c.json("POST", "/v1/memories/"+tea+"/supersede"+routeScope, map[string]any{"new": map[string]any{"value": "Ann drinks coffee every morning."}}, nil, nil)
	c.json("POST", "/v1/search", map[string]any{"scope": routeNS, "query": "Where does Ann live?"}, nil, nil)
	c.call("GET", "/v1/profile"+routeScope, "", nil, nil)
	c.call("GET", "/v1/audit"+routeScope, "", nil, nil)
	exported := c.call("GET", "/v1/export"+routeScope, "", nil, nil)
	c.call("POST", "/v1/import"+routeScope, "application/x-ndjson", exported, nil)
	c.json("POST", "/v1/embeddings", map[string]any{"input": []string{"Hallo Welt", "你好"}}, nil, count("data"))

	var conflicts struct {
		Conflicts []struct {
			ID       string   `json:"id"`
			Memories []idOnly `json:"memories"`
		} `json:"conflicts"`
	}
	c.json("GET", "/v1/conflicts"+routeScope, nil, &conflicts, count("conflicts"))
	if len(conflicts.Conflicts) == 0 {
		c.t.Fatal("no conflict to resolve")
	}
	first := conflicts.Conflicts[0]
	c.json("POST", "/v1/conflicts/"+first.ID+"/resolve"+routeScope, map[string]any{"keep": first.Memories[0].ID}, nil, nil)

	var created struct {
		Key idOnly `json:"key"`
	}
	c.json("POST", "/v1/keys", map[string]any{"namespace": map[string]string{"org": "acme", "project": "app", "user": "bob"}, "role": "read"}, &created, nil)
	c.call("GET", "/v1/keys?org=acme&project=app", "", nil, count("keys"))
	c.call("DELETE", "/v1/keys/"+created.Key.ID+"?org=acme&project=app", "", nil, nil)
}

// exerciseGraph calls the routes of entities, the graph and communities.
func exerciseGraph(c *routeClient) {
	c.json("POST", "/v1/communities/refresh"+routeScope, map[string]any{"full": true}, nil, nil)
	var list struct {
		Communities []idOnly `json:"communities"`
	}
	c.json("GET", "/v1/communities"+routeScope, nil, &list, count("communities"))
	if len(list.Communities) == 0 {
		c.t.Error("the refresh made no community")
	} else {
		c.call("GET", "/v1/communities/"+list.Communities[0].ID+routeScope, "", nil, nil)
	}

	var page struct {
		Entities []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"entities"`
	}
	c.json("GET", "/v1/entities"+routeScope, nil, &page, values("entities", "name"))
	ids := map[string]string{}
	for _, e := range page.Entities {
		ids[e.Name] = e.ID
	}
	mel, jur, yos := ids["Melanie"], ids["Jürgen"], ids["Yosemite"]
	if mel == "" || jur == "" || yos == "" {
		c.t.Errorf("entities %+v lack Melanie, Jürgen or Yosemite", page.Entities)
		return
	}
	var detail struct {
		Memories []idOnly `json:"memories"`
	}
	c.json("GET", "/v1/entities/"+mel+routeScope, nil, &detail, count("memories", "relations"))
	c.call("GET", "/v1/graph"+routeScope+"&entity="+mel+"&hops=2", "", nil, count("nodes", "edges"))
	c.json("POST", "/v1/entities/"+jur+"/merge"+routeScope, map[string]any{"from": []string{yos}}, nil, nil)
	c.json("POST", "/v1/entities/"+mel+"/split"+routeScope, map[string]any{"name": "Mel", "memories": []string{detail.Memories[0].ID}}, nil, nil)
	c.call("GET", "/v1/entities/"+mel+"/history"+routeScope, "", nil, count())
	c.call("DELETE", "/v1/entities/"+jur+routeScope, "", nil, nil)
}

// exerciseMedia calls the routes of resources and identities.
func exerciseMedia(c *routeClient) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "notiz.txt")
	if err != nil {
		c.t.Fatal(err)
	}
	part.Write([]byte("Einkaufsliste: Brot, Käse, Äpfel.\n"))
	mw.Close()
	var res idOnly
	if err := json.Unmarshal(c.call("POST", "/v1/resources"+routeScope+"&name=notiz.txt", mw.FormDataContentType(), body.Bytes(), nil), &res); err != nil {
		c.t.Fatal(err)
	}
	c.call("GET", "/v1/resources"+routeScope, "", nil, count("resources"))
	if res.ID != "" {
		c.call("GET", "/v1/resources/"+res.ID+routeScope, "", nil, nil)
		if got := c.call("GET", "/v1/resources/"+res.ID+"/content"+routeScope, "", nil, nil); !bytes.Contains(got, []byte("Käse")) {
			c.t.Errorf("the resource's content = %q", got)
		}
		c.call("DELETE", "/v1/resources/"+res.ID+routeScope, "", nil, nil)
	}

	var obs []map[string]any
	for i := range 5 {
		v := make([]float32, 8)
		v[min(i/3, 1)*4] = 1
		v[(i%3)+1] = 0.1
		obs = append(obs, map[string]any{"modality": "face", "embedding": v})
	}
	var added struct {
		Observations []struct {
			ID         string `json:"id"`
			IdentityID string `json:"identity_id"`
		} `json:"observations"`
	}
	c.json("POST", "/v1/observations", map[string]any{"namespace": routeNS, "observations": obs}, &added, count("observations"))
	if len(added.Observations) != len(obs) {
		c.t.Errorf("observations stored: %+v", added.Observations)
		return
	}
	a, b := added.Observations[0].IdentityID, added.Observations[3].IdentityID
	if a == b {
		c.t.Errorf("observations went to one identity: %+v", added.Observations)
		return
	}
	c.call("GET", "/v1/identities"+routeScope, "", nil, count())
	c.json("POST", "/v1/identities/link"+routeScope, map[string]any{"identities": []string{a}, "name": "Jürgen"}, nil, nil)
	c.call("GET", "/v1/persons"+routeScope, "", nil, count())
	c.call("GET", "/v1/identities/"+a+routeScope, "", nil, count("observations"))
	c.json("POST", "/v1/identities/merge"+routeScope, map[string]any{"into": a, "from": []string{b}}, nil, nil)
	var split idOnly
	c.json("POST", "/v1/identities/"+a+"/split"+routeScope, map[string]any{"observations": []string{added.Observations[3].ID, added.Observations[4].ID}}, &split, nil)
	c.json("POST", "/v1/identities/"+a+"/unlink"+routeScope, map[string]any{}, nil, nil)
	c.call("GET", "/v1/identities/"+a+"/history"+routeScope, "", nil, count())
	c.call("DELETE", "/v1/identities/"+split.ID+routeScope, "", nil, nil)
}

// exerciseMounts calls the handlers served beside the REST API: MCP, the
// Mem0-compatible API, the chat proxy and the dashboard.
func exerciseMounts(c *routeClient) {
	ctx := context.Background()
	transport := &sdk.StreamableClientTransport{Endpoint: c.base + "/mcp", DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: c}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "route-test", Version: "v0"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		c.t.Fatalf("MCP initialize: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		c.t.Fatalf("MCP tools/list = %v, %v", tools, err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	c.answers = append(c.answers, routeAnswer{Call: "MCP tools/list", Stable: strings.Join(names, " ")})
	recall, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "tea", "user": "ann"}})
	if err != nil || recall.IsError {
		c.t.Errorf("MCP recall = %+v, %v", recall, err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engram://profile"}); err != nil {
		c.t.Errorf("MCP profile resource: %v", err)
	}

	c.json("POST", "/mem0/v1/memories/", map[string]any{"user_id": "ann", "messages": []any{map[string]string{"role": "user", "content": "I collect vinyl records."}}}, nil, nil)
	c.json("POST", "/mem0/v1/memories/search/", map[string]any{"user_id": "ann", "query": "vinyl"}, nil, nil)
	if got := c.call("POST", "/v1/chat/completions", "application/json",
		[]byte(`{"model":"m","user":"ann","messages":[{"role":"user","content":"Ich lebe in Porto."}]}`), nil); !bytes.Contains(got, []byte("Noted.")) {
		c.t.Errorf("chat completion = %s", got)
	}
	c.call("GET", "/ui/", "", nil, nil)
	c.call("GET", "/v1/tenants", "", nil, count("tenants"))
	c.json("PUT", "/v1/tenants/acme/app/sensitive", map[string]string{"contact": "redact"}, nil, nil)
	if got := c.call("GET", "/v1/tenants/acme/app/sensitive", "", nil, nil); !bytes.Contains(got, []byte(`"contact":"redact"`)) {
		c.t.Errorf("GET the sensitive policy after setting contact=redact = %s", got)
	}
	if got := c.call("POST", "/v1/tenants/acme/app/sensitive/scan?user=ann", "", nil, nil); !bytes.Contains(got, []byte(`"found":`)) {
		c.t.Errorf("POST the sensitive scan = %s", got)
	}
	if got := c.call("GET", "/metrics", "", nil, nil); !bytes.Contains(got, []byte("engram_http_requests_total")) {
		c.t.Errorf("GET /metrics holds no request counter:\n%.500s", got)
	}
	c.redirect("/", "/ui/")
}

// redirect checks that GET path answers a redirect to location.
func (c *routeClient) redirect(path, location string) {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.RoundTrip(req)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != location {
		c.t.Errorf("GET %s: %d to %q, want a redirect to %q", path, resp.StatusCode, resp.Header.Get("Location"), location)
	}
	c.answers = append(c.answers, routeAnswer{Call: "GET " + path, Status: resp.StatusCode})
}

// exerciseTeardown calls the routes that delete what is left.
func exerciseTeardown(c *routeClient) {
	var page struct {
		Episodes []idOnly `json:"episodes"`
	}
	c.json("GET", "/v1/episodes"+routeScope, nil, &page, count("episodes"))
	c.call("GET", "/v1/scopes?org=acme&project=app", "", nil, count("scopes"))
	c.call("DELETE", "/v1/episodes/"+page.Episodes[0].ID+routeScope, "", nil, nil)
	c.call("DELETE", "/v1/scope"+routeScope, "", nil, nil)
}

// servingRE matches the debug line naming one pattern served; slog quotes
// a value with a space only.
var servingRE = regexp.MustCompile(`msg=serving pattern=(?:"([^"]+)"|(\S+))`)

// servedPatterns returns the ServeMux patterns the server logged at start.
func servedPatterns(t *testing.T, s *server) []string {
	var ps []string
	for _, m := range servingRE.FindAllStringSubmatch(s.logs.String(), -1) {
		ps = append(ps, m[1]+m[2])
	}
	if len(ps) == 0 {
		t.Fatalf("the server logged no pattern it serves:\n%s", s.logs.String())
	}
	return ps
}

// checkCovered fails the test for every operation of the OpenAPI document
// and every pattern the server serves that no request of c reached.
func checkCovered(t *testing.T, c *routeClient, paths map[string]map[string]json.RawMessage, patterns []string) {
	mux := http.NewServeMux()
	for _, p := range patterns {
		mux.Handle(p, http.NotFoundHandler())
	}
	reached := map[string]bool{}
	for _, req := range c.made {
		_, p := mux.Handler(req)
		reached[p] = true
	}
	for _, p := range patterns {
		if !reached[p] {
			t.Errorf("the server serves %q, which no call of this test reaches; add one", p)
		}
	}
	for path, ops := range paths {
		for method := range ops {
			if !openAPIMethods[method] {
				continue // summary, description, parameters, x-engram-mount, ...
			}
			op := strings.ToUpper(method) + " " + path
			req := httptest.NewRequest(strings.ToUpper(method), placeholderRE.ReplaceAllString(path, "x"), nil)
			if _, p := mux.Handler(req); p == "" || !reached[p] {
				t.Errorf("the OpenAPI document lists %s, which no call of this test reaches (or the server does not serve it); add one", op)
			}
		}
	}
}

// openAPIMethods are the keys of an OpenAPI path item that are operations.
var openAPIMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true, "trace": true}

// placeholderRE matches a path template's {name} segments.
var placeholderRE = regexp.MustCompile(`\{[^}]+\}`)

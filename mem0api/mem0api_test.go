package mem0api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/mem0api"
	"github.com/engramhq/engram/storeopen"
)

// env is an engram server with API keys and the Mem0-compatible API
// mounted under /mem0, as engram serve mounts it.
type env struct {
	t    *testing.T
	eng  *engine.Engine
	srv  *httptest.Server
	keys engram.Keys
}

func newEnv(t *testing.T, auth bool) *env {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: logger, AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	h := mem0api.New(eng, mem0api.Options{Org: "local", Project: "dev"})
	opts := engramhttp.ServerOptions{Logger: logger, Ready: eng.Ready, RateLimit: 0,
		Mounts: []engramhttp.Mount{{Pattern: "/mem0/", Handler: http.StripPrefix("/mem0", h), Role: engram.RoleRead}}}
	e := &env{t: t, eng: eng, keys: engram.Keys{Store: eng.Store()}}
	if auth {
		opts.Keys = e.keys
	}
	e.srv = httptest.NewServer(engramhttp.NewServer(eng, opts))
	t.Cleanup(e.srv.Close)
	return e
}

// key makes a key of role bound to acme/app and user ("" for none).
func (e *env) key(project, user, role string) string {
	e.t.Helper()
	_, secret, err := e.keys.CreateKey(context.Background(), engram.KeySpec{
		Namespace: engram.Namespace{Org: "acme", Project: project, User: user}, Role: role,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

type response struct {
	status int
	body   []byte
}

// call sends a request as Mem0's client does (Authorization: Token KEY)
// and returns the status and body.
func (e *env) call(key, method, path, body string) response {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+"/mem0"+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Token "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{resp.StatusCode, b}
}

// ok calls and decodes a 200 answer into a generic value.
func (e *env) ok(key, method, path, body string) any {
	e.t.Helper()
	r := e.call(key, method, path, body)
	if r.status != http.StatusOK {
		e.t.Fatalf("%s %s: status %d, want 200; body %s", method, path, r.status, r.body)
	}
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		e.t.Fatalf("%s %s: %v in %s", method, path, err, r.body)
	}
	return v
}

// fails checks that a call answers status with an error body whose
// message contains msg.
func (e *env) fails(key, method, path, body string, status int, msg string) {
	e.t.Helper()
	r := e.call(key, method, path, body)
	if r.status != status {
		e.t.Fatalf("%s %s %s: status %d, want %d; body %s", method, path, body, r.status, status, r.body)
	}
	var er struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(r.body, &er); err != nil || !strings.Contains(er.Error.Message, msg) {
		e.t.Fatalf("%s %s %s: body %s, want an error naming %q", method, path, body, r.body, msg)
	}
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }
func results(v any) []any      { return list(obj(v)["results"]) }

// A scripted session through every endpoint, checking each answer's shape.
func TestSession(t *testing.T) {
	e := newEnv(t, true)
	admin := e.key("app", "", engram.RoleAdmin)

	ping := obj(e.ok(admin, "GET", "/v1/ping/", ""))
	if ping["status"] != "ok" || ping["org_id"] != "acme" || ping["project_id"] != "app" {
		t.Fatalf("ping = %v, want status ok, org_id acme, project_id app", ping)
	}

	added := results(e.ok(admin, "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"I keep bees in my garden"},{"role":"assistant","content":"Noted."}],
		"user_id":"ann","agent_id":"helper","metadata":{"source":"chat"},"infer":false}`))
	if len(added) != 2 {
		t.Fatalf("infer false added %d memories, want one per message (2): %v", len(added), added)
	}
	bees := obj(added[0])
	if bees["event"] != "ADD" || bees["memory"] != "I keep bees in my garden" || bees["user_id"] != "ann" || bees["agent_id"] != "helper" ||
		obj(bees["metadata"])["source"] != "chat" || bees["id"] == "" {
		t.Fatalf("added = %v, want ADD of the message verbatim with user, agent and metadata", bees)
	}
	id := bees["id"].(string)
	if _, err := time.Parse(time.RFC3339Nano, bees["created_at"].(string)); err != nil {
		t.Errorf("created_at %v is not ISO: %v", bees["created_at"], err)
	}

	formed := obj(e.ok(admin, "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"My sister Lena moved to Lisbon last year"}],"user_id":"ann"}`))
	fr := results(formed)
	if len(fr) == 0 || obj(fr[0])["event"] != "ADD" || !strings.Contains(obj(fr[0])["memory"].(string), "Lisbon") {
		t.Fatalf("infer true = %v, want an ADD of a memory formed from the message", formed)
	}
	if obj(formed["decisions"])["ADD"] == nil {
		t.Errorf("decisions = %v, want engram's formation decisions with ADD", formed["decisions"])
	}

	found := results(e.ok(admin, "POST", "/v3/memories/search/", `{"query":"where does Lena live","filters":{"AND":[{"user_id":"ann"}]},"top_k":5}`))
	if len(found) == 0 || !strings.Contains(obj(found[0])["memory"].(string), "Lisbon") || obj(found[0])["score"] == nil {
		t.Fatalf("search = %v, want the Lisbon memory first, with a score", found)
	}

	all := obj(e.ok(admin, "POST", "/v3/memories/?page=1&page_size=2", `{"filters":{"user_id":"ann"}}`))
	if all["count"] != 3.0 || len(results(all)) != 2 || all["next"] == nil || all["previous"] != nil {
		t.Fatalf("get all = %v, want count 3, 2 results, a next page and no previous", all)
	}
	page2 := obj(e.ok(admin, "POST", "/v3/memories/?page=2&page_size=2", `{"filters":{"user_id":"ann"}}`))
	if len(results(page2)) != 1 || page2["next"] != nil || page2["previous"] == nil {
		t.Fatalf("page 2 = %v, want the last memory and a previous page", page2)
	}
	helper := obj(e.ok(admin, "POST", "/v3/memories/", `{"filters":{"AND":[{"user_id":"ann"},{"agent_id":"helper"}]}}`))
	if helper["count"] != 2.0 {
		t.Fatalf("get all of ann's helper agent = %v, want its 2 memories", helper)
	}

	for _, c := range []struct {
		filters string
		want    float64
	}{
		{`{"user_id":"ann","metadata":{"source":"chat"}}`, 2},
		{`{"user_id":"ann","metadata":{"source":"other"}}`, 0},
		{`{"AND":[{"user_id":"ann"},{"created_at":{"gte":"2000-01-01"}}]}`, 3},
		{`{"user_id":"ann","created_at":{"gt":"2999-01-01T00:00:00Z"}}`, 0},
		{`{"OR":[{"user_id":"ann","agent_id":"helper"},{"user_id":"nobody"}]}`, 2},
	} {
		if n := obj(e.ok(admin, "POST", "/v3/memories/", `{"filters":`+c.filters+`}`))["count"]; n != c.want {
			t.Errorf("get all with filters %s: count %v, want %v", c.filters, n, c.want)
		}
	}
	chat := results(e.ok(admin, "POST", "/v3/memories/search/", `{"query":"bees garden","filters":{"user_id":"ann","metadata":{"source":"chat"}}}`))
	if len(chat) == 0 || obj(chat[0])["id"] != id {
		t.Fatalf("search with a metadata filter = %v, want memory %s", chat, id)
	}
	if none := results(e.ok(admin, "POST", "/v3/memories/search/", `{"query":"bees garden","filters":{"user_id":"ann"},"metadata":{"source":"other"}}`)); len(none) != 0 {
		t.Fatalf("search with metadata that matches nothing = %v", none)
	}

	got := obj(e.ok(admin, "GET", "/v1/memories/"+id+"/", ""))
	if got["id"] != id || got["memory"] != "I keep bees in my garden" {
		t.Fatalf("get = %v", got)
	}
	upd := obj(e.ok(admin, "PUT", "/v1/memories/"+id+"/", `{"text":"I keep bees and hens in my garden","metadata":{"source":"edit"}}`))
	if upd["memory"] != "I keep bees and hens in my garden" || obj(upd["metadata"])["source"] != "edit" {
		t.Fatalf("update = %v, want the new text and metadata", upd)
	}
	if hens := results(e.ok(admin, "POST", "/v3/memories/search/", `{"query":"hens","filters":{"user_id":"ann"}}`)); len(hens) == 0 || obj(hens[0])["id"] != id {
		t.Fatalf("search for the updated text = %v, want memory %s", hens, id)
	}

	e.ok(admin, "DELETE", "/v1/memories/"+id+"/", "")
	e.fails(admin, "GET", "/v1/memories/"+id+"/", "", http.StatusNotFound, id)
	hist := list(e.ok(admin, "GET", "/v1/memories/"+id+"/history/", ""))
	if len(hist) != 3 {
		t.Fatalf("history = %v, want ADD, UPDATE, DELETE", hist)
	}
	for i, want := range []struct{ event, old, new any }{
		{"ADD", nil, "I keep bees in my garden"},
		{"UPDATE", "I keep bees in my garden", "I keep bees and hens in my garden"},
		{"DELETE", "I keep bees and hens in my garden", nil},
	} {
		h := obj(hist[i])
		if h["event"] != want.event || h["old_memory"] != want.old || h["new_memory"] != want.new || h["memory_id"] != id || h["user_id"] != "ann" {
			t.Errorf("history[%d] = %v, want %v", i, h, want)
		}
	}

	e.ok(admin, "POST", "/v3/memories/add/", `{"messages":"Bob likes chess","user_id":"bob","infer":false}`)
	ents := results(e.ok(admin, "GET", "/v1/entities/", ""))
	names := []string{}
	for _, x := range ents {
		names = append(names, obj(x)["type"].(string)+":"+obj(x)["name"].(string))
	}
	if strings.Join(names, " ") != "agent:helper user:ann user:bob" {
		t.Fatalf("entities = %v, want agent:helper user:ann user:bob", names)
	}

	del := obj(e.ok(admin, "DELETE", "/v1/memories/?user_id=ann", ""))
	if obj(del["purged"])["memories"] == 0.0 {
		t.Fatalf("delete all = %v, want memories purged", del)
	}
	if left := obj(e.ok(admin, "POST", "/v3/memories/", `{"filters":{"user_id":"ann"}}`)); left["count"] != 0.0 {
		t.Fatalf("after delete all, ann has %v", left)
	}
	e.ok(admin, "DELETE", "/v2/entities/user/bob/", "")
	if left := results(e.ok(admin, "GET", "/v1/entities/", "")); len(left) != 0 {
		t.Fatalf("after deleting ann's memories and bob, entities = %v", left)
	}
}

// Formation's decisions on memories already held become Mem0's events:
// a newer fact supersedes the older one (DELETE of the old, ADD of the
// new).
func TestAddEvents(t *testing.T) {
	e := newEnv(t, false)
	e.ok("", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"I live in Berlin."}],"user_id":"ann"}`)
	second := results(e.ok("", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"I live in Madrid now."}],"user_id":"ann"}`))
	byText := map[string]string{}
	var berlin string
	for _, r := range second {
		byText[obj(r)["memory"].(string)] = obj(r)["event"].(string) + " " + obj(r)["status"].(string)
		if obj(r)["memory"] == "user lives in Berlin" {
			berlin = obj(r)["id"].(string)
		}
	}
	hist := list(e.ok("", "GET", "/v1/memories/"+berlin+"/history/", ""))
	if len(hist) != 2 || obj(hist[1])["event"] != "UPDATE" || obj(hist[1])["engram_op"] != "SUPERSEDE" {
		t.Errorf("history of the superseded fact = %v, want ADD then UPDATE (engram_op SUPERSEDE)", hist)
	}
	for text, want := range map[string]string{
		"user lives in Berlin":  "DELETE superseded",
		"user lives in Madrid":  "ADD active",
		"I live in Madrid now.": "ADD active",
		"I live in Berlin.":     "UPDATE active", // linked to the next turn
	} {
		if byText[text] != want {
			t.Errorf("%q: %q, want %q; results %v", text, byText[text], want, second)
		}
	}
}

// Without API keys the tenant is the handler's options.
func TestNoAuthTenant(t *testing.T) {
	e := newEnv(t, false)
	ping := obj(e.ok("", "GET", "/v1/ping", ""))
	if ping["org_id"] != "local" || ping["project_id"] != "dev" {
		t.Fatalf("ping = %v, want the options' org and project", ping)
	}
	id := obj(results(e.ok("", "POST", "/v1/memories/", `{"messages":[{"role":"user","content":"tea at five"}],"user_id":"ann","run_id":"s1","infer":false}`))[0])["id"].(string)
	m, err := e.eng.GetMemory(context.Background(), engram.Scope{Org: "local", Project: "dev", User: "ann", Session: "s1"}, id)
	if err != nil || m.Value != "tea at five" {
		t.Fatalf("engine read of %s in local/dev/ann/s1: %v %v", id, m, err)
	}
}

// Bad input answers 400 naming the field, and stores nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, false)
	for _, c := range []struct {
		name, method, path, body, msg string
	}{
		{"no entity", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"hi"}]}`, "user_id"},
		{"no messages", "POST", "/v3/memories/add/", `{"user_id":"ann"}`, "messages"},
		{"empty messages", "POST", "/v3/memories/add/", `{"messages":[],"user_id":"ann"}`, "messages is empty"},
		{"empty content", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"ok"},{"role":"user","content":""}],"user_id":"ann"}`, "messages[1].content"},
		{"role boss", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"ok"},{"role":"boss","content":"Ship it"}],"user_id":"ann"}`, `messages[1].role "boss" is not one of`},
		{"role typo verbatim", "POST", "/v3/memories/add/", `{"messages":[{"role":"asistant","content":"Noted"}],"user_id":"ann","infer":false}`, `messages[0].role "asistant"`},
		{"image", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":{"type":"image_url","image_url":{"url":"x"}}}],"user_id":"ann"}`, "messages[0].content"},
		{"app", "POST", "/v3/memories/add/", `{"messages":"hi","user_id":"ann","app_id":"a"}`, "app_id"},
		{"bad user", "POST", "/v3/memories/add/", `{"messages":"hi","user_id":"a/b"}`, "user_id"},
		{"bad metadata", "POST", "/v3/memories/add/", `{"messages":"hi","user_id":"ann","metadata":"x"}`, "metadata"},
		{"bad infer", "POST", "/v3/memories/add/", `{"messages":"hi","user_id":"ann","infer":"no"}`, "infer"},
		{"not json", "POST", "/v3/memories/add/", `{"messages":`, "JSON"},
		{"invalid utf-8", "POST", "/v3/memories/add/", "{\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}],\"user_id\":\"ann\"}", "messages[0].content is not valid UTF-8"},
		{"lone surrogate", "POST", "/v3/memories/add/", `{"messages":"hi","user_id":"a\ud800nn"}`, "user_id holds a"},
		{"no query", "POST", "/v3/memories/search/", `{"filters":{"user_id":"ann"}}`, "query"},
		{"top_k", "POST", "/v3/memories/search/", `{"query":"x","filters":{"user_id":"ann"},"top_k":0}`, "top_k"},
		{"search no entity", "POST", "/v3/memories/search/", `{"query":"x"}`, "user_id"},
		{"unknown filter", "POST", "/v3/memories/search/", `{"query":"x","filters":{"user_id":"ann","categories":{"in":["a"]}}}`, "filters.categories"},
		{"wildcard", "POST", "/v3/memories/", `{"filters":{"user_id":"*"}}`, "filters.user_id"},
		{"contradiction", "POST", "/v3/memories/", `{"filters":{"AND":[{"user_id":"ann"},{"user_id":"bob"}]}}`, "contradicts"},
		{"metadata in OR", "POST", "/v3/memories/", `{"filters":{"OR":[{"metadata":{"a":1}}]}}`, "filters.OR[0].metadata"},
		{"created_at", "POST", "/v3/memories/", `{"filters":{"user_id":"ann","created_at":{"gte":"yesterday"}}}`, "filters.created_at.gte"},
		{"v1 get all without entity", "GET", "/v1/memories/", ``, "the query must name user_id"},
		{"page_size", "POST", "/v3/memories/?page_size=0", `{"filters":{"user_id":"ann"}}`, "page_size"},
		{"update nothing", "PUT", "/v1/memories/01J0000000000000000000000A/", `{}`, "text, metadata or expiration_date"},
		{"update empty text", "PUT", "/v1/memories/01J0000000000000000000000A/", `{"text":""}`, "text is empty"},
		{"bad id", "GET", "/v1/memories/nope/", ``, "nope"},
		{"delete all nothing", "DELETE", "/v1/memories/", ``, "user_id"},
		{"entity type", "DELETE", "/v2/entities/team/x/", ``, "team"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			e.fails("", c.method, c.path, c.body, http.StatusBadRequest, c.msg)
		})
	}
	e.t = t
	e.fails("", "GET", "/v1/webhooks/projects/p/", "", http.StatusNotFound, "does not serve")
	if n := obj(e.ok("", "POST", "/v3/memories/", `{"filters":{"user_id":"ann"}}`))["count"]; n != 0.0 {
		t.Fatalf("bad adds stored %v memories, want none", n)
	}
}

// A key bound to ann cannot read, change, delete or list bob's memories,
// nor can a key of another project; neither learns whether they exist.
func TestIsolation(t *testing.T) {
	e := newEnv(t, true)
	admin := e.key("app", "", engram.RoleAdmin)
	ann := e.key("app", "ann", engram.RoleAdmin)
	other := e.key("other", "", engram.RoleAdmin)
	bobID := obj(results(e.ok(admin, "POST", "/v3/memories/add/", `{"messages":"Bob's PIN is 4321","user_id":"bob","infer":false}`))[0])["id"].(string)
	annID := obj(results(e.ok(ann, "POST", "/v3/memories/add/", `{"messages":"Ann's PIN is 1234","user_id":"ann","infer":false}`))[0])["id"].(string)
	missing := engram.NewID()

	for _, key := range []string{ann, other} {
		for _, id := range []string{bobID, missing} {
			e.fails(key, "GET", "/v1/memories/"+id+"/", "", http.StatusNotFound, "memory "+id+" not found")
			e.fails(key, "PUT", "/v1/memories/"+id+"/", `{"text":"mine now"}`, http.StatusNotFound, "not found")
			e.fails(key, "DELETE", "/v1/memories/"+id+"/", "", http.StatusNotFound, "not found")
			e.fails(key, "GET", "/v1/memories/"+id+"/history/", "", http.StatusNotFound, "not found")
		}
	}
	e.fails(ann, "POST", "/v3/memories/search/", `{"query":"PIN","filters":{"user_id":"bob"}}`, http.StatusForbidden, "user_id")
	e.fails(ann, "POST", "/v3/memories/", `{"filters":{"OR":[{"user_id":"ann"},{"user_id":"bob"}]}}`, http.StatusForbidden, "user_id")
	e.fails(ann, "POST", "/v3/memories/add/", `{"messages":"x","user_id":"bob"}`, http.StatusForbidden, "user_id")
	e.fails(ann, "DELETE", "/v1/memories/?user_id=bob", "", http.StatusForbidden, "user_id")
	e.fails(ann, "DELETE", "/v2/entities/user/bob/", "", http.StatusNotFound, "bob")
	if hits := results(e.ok(other, "POST", "/v3/memories/search/", `{"query":"PIN","filters":{"user_id":"bob"}}`)); len(hits) != 0 {
		t.Fatalf("another project's key found %v", hits)
	}

	// ann's key defaults to ann: a search without user_id sees only hers.
	hits := results(e.ok(ann, "POST", "/v3/memories/search/", `{"query":"PIN"}`))
	if len(hits) != 1 || obj(hits[0])["id"] != annID {
		t.Fatalf("ann's search = %v, want only her memory", hits)
	}
	ents := results(e.ok(ann, "GET", "/v1/entities/", ""))
	if len(ents) != 1 || obj(ents[0])["name"] != "ann" {
		t.Fatalf("ann's entities = %v, want only ann", ents)
	}
	if got := obj(e.ok(admin, "GET", "/v1/memories/"+bobID+"/", "")); got["memory"] != "Bob's PIN is 4321" {
		t.Fatalf("bob's memory after ann's attempts = %v", got)
	}
	admins := results(e.ok(admin, "POST", "/v3/memories/search/", `{"query":"PIN","filters":{"OR":[{"user_id":"ann"},{"user_id":"bob"}]}}`))
	if len(admins) != 2 {
		t.Fatalf("project key's OR search = %v, want ann's and bob's", admins)
	}
}

// Roles: a read key searches but cannot write; a write key cannot purge.
func TestRoles(t *testing.T) {
	e := newEnv(t, true)
	admin := e.key("app", "", engram.RoleAdmin)
	read := e.key("app", "", engram.RoleRead)
	write := e.key("app", "", engram.RoleWrite)
	id := obj(results(e.ok(admin, "POST", "/v3/memories/add/", `{"messages":"kiwis are ripe","user_id":"ann","infer":false}`))[0])["id"].(string)

	e.fails(read, "POST", "/v3/memories/add/", `{"messages":"x","user_id":"ann"}`, http.StatusForbidden, "role write")
	e.fails(read, "PUT", "/v1/memories/"+id+"/", `{"text":"x"}`, http.StatusForbidden, "role write")
	e.fails(read, "DELETE", "/v1/memories/"+id+"/", "", http.StatusForbidden, "role write")
	e.fails(write, "DELETE", "/v1/memories/?user_id=ann", "", http.StatusForbidden, "role admin")
	e.fails(write, "DELETE", "/v2/entities/user/ann/", "", http.StatusForbidden, "role admin")
	e.fails("", "GET", "/v1/ping/", "", http.StatusUnauthorized, "API key")
	if hits := results(e.ok(read, "POST", "/v3/memories/search/", `{"query":"kiwis","filters":{"user_id":"ann"}}`)); len(hits) != 1 {
		t.Fatalf("read key's search = %v", hits)
	}
	e.ok(write, "PUT", "/v1/memories/"+id+"/", `{"text":"kiwis are ripe now"}`)
	if m := obj(e.ok(read, "GET", "/v1/memories/"+id+"/", "")); m["memory"] != "kiwis are ripe now" {
		t.Fatalf("after the write key's update: %v", m)
	}
}

// German, Spanish and Chinese messages are stored, formed and found.
func TestLanguages(t *testing.T) {
	e := newEnv(t, false)
	for _, c := range []struct{ user, text, query string }{
		{"de", "Ich trinke jeden Morgen Kaffee in Köln.", "Kaffee Köln"},
		{"es", "Mi hermana vive en Sevilla desde marzo.", "hermana Sevilla"},
		{"zh", "我每天早上在上海喝咖啡。", "上海 咖啡"},
	} {
		added := results(e.ok("", "POST", "/v3/memories/add/", `{"messages":[{"role":"user","content":"`+c.text+`"}],"user_id":"`+c.user+`"}`))
		if len(added) == 0 || obj(added[0])["memory"] != c.text {
			t.Fatalf("%s: add = %v", c.user, added)
		}
		hits := results(e.ok("", "POST", "/v3/memories/search/", `{"query":"`+c.query+`","filters":{"user_id":"`+c.user+`"}}`))
		if len(hits) == 0 || obj(hits[0])["memory"] != c.text {
			t.Fatalf("%s: search %q = %v, want %q", c.user, c.query, hits, c.text)
		}
	}
}

// TestSearchValidAt: a search and a get all with filters.valid_at read as
// of that event time: the old city before the move, nothing said later.
// In English, German and Spanish.
func TestSearchValidAt(t *testing.T) {
	e := newEnv(t, false)
	jan, mar := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct{ user, before, after, query, oldCity, newCity string }{
		{"en", "I live in Berlin.", "I moved to Munich.", "Where do I live?", "Berlin", "Munich"},
		{"de", "Ich wohne in Berlin.", "Ich bin nach München gezogen.", "Wo wohne ich?", "Berlin", "München"},
		{"es", "Vivo en Berlín.", "Me mudé a Múnich.", "¿Dónde vivo?", "Berlín", "Múnich"},
	} {
		ns := engram.Namespace{Org: "local", Project: "dev", User: c.user}
		if _, err := e.eng.AddEpisodes(engram.WithActor(context.Background(), "test"), engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{
			{Role: "user", Content: c.before, OccurredAt: &jan}, {Role: "user", Content: c.after, OccurredAt: &mar}}}); err != nil {
			t.Fatal(err)
		}
		filters := `"filters":{"user_id":"` + c.user + `","valid_at":"2025-02-01"}`
		hits := results(e.ok("", "POST", "/v3/memories/search/", `{"query":"`+c.query+`",`+filters+`}`))
		if len(hits) == 0 || !strings.Contains(obj(hits[0])["memory"].(string), c.oldCity) {
			t.Errorf("%s: search as of February = %v, want %s first", c.user, hits, c.oldCity)
		}
		all := results(e.ok("", "POST", "/v3/memories/", `{`+filters+`}`))
		for _, h := range append(hits, all...) {
			if strings.Contains(obj(h)["memory"].(string), c.newCity) {
				t.Errorf("%s: as of February found %v, said in March", c.user, h)
			}
		}
		if len(all) == 0 {
			t.Errorf("%s: get all as of February is empty", c.user)
		}
	}
	e.fails("", "POST", "/v3/memories/search/", `{"query":"x","filters":{"user_id":"en","valid_at":"soon"}}`, http.StatusBadRequest, "filters.valid_at")
}

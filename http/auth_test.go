package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// authEnv is a real engine behind a real HTTP server that requires keys.
type authEnv struct {
	srv  *httptest.Server
	keys engram.Keys
}

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Ready: eng.Ready, Keys: keys}))
	t.Cleanup(srv.Close)
	return &authEnv{srv: srv, keys: keys}
}

// key makes a key of role bound to org/project/user and returns its secret.
func (e *authEnv) key(t *testing.T, org, project, user, role string) string {
	t.Helper()
	_, secret, err := e.keys.CreateKey(context.Background(), engram.KeySpec{
		Namespace: engram.Namespace{Org: org, Project: project, User: user}, Role: role,
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// call sends a request with the key as a Bearer token ("" sends none).
func (e *authEnv) call(t *testing.T, key, method, path, body string) rawResponse {
	t.Helper()
	h := []string{}
	if key != "" {
		h = append(h, "Authorization", "Bearer "+key)
	}
	return do(t, method, e.srv.URL+path, body, h...)
}

func wantError(t *testing.T, what string, r rawResponse, status int, code, msg string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.Status, status, r.Body)
	}
	e := errorOf(t, r)
	if e.Error.Code != code || !strings.Contains(e.Error.Message, msg) {
		t.Errorf("%s: error %s %q, want %s containing %q", what, e.Error.Code, e.Error.Message, code, msg)
	}
	if status == http.StatusUnauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("%s: WWW-Authenticate = %q, want Bearer", what, r.Header.Get("WWW-Authenticate"))
	}
}

func addMemory(t *testing.T, e *authEnv, key, org, user, value string) string {
	t.Helper()
	body := `{"namespace":{"org":"` + org + `","project":"app","user":"` + user + `"},"memories":[{"value":"` + value + `"}]}`
	r := e.call(t, key, "POST", "/v1/memories", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("add memory: %d %s", r.Status, r.Body)
	}
	var res struct{ Memories []engram.Memory }
	if err := json.Unmarshal(r.Body, &res); err != nil || len(res.Memories) != 1 {
		t.Fatalf("add memory: %s: %v", r.Body, err)
	}
	return res.Memories[0].ID
}

func TestAuth_MissingAndBadKeys(t *testing.T) {
	e := newAuthEnv(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := e.call(t, "", "GET", path, ""); r.Status != http.StatusOK {
			t.Errorf("GET %s without a key: %d, want 200", path, r.Status)
		}
	}
	const list = "/v1/memories?org=acme&project=app"
	wantError(t, "no key", e.call(t, "", "GET", list, ""), 401, engram.EUNAUTHORIZED, "Authorization: Bearer KEY")
	wantError(t, "unknown route without a key", e.call(t, "", "GET", "/v1/nothing", ""), 401, engram.EUNAUTHORIZED, "API key")
	good := e.key(t, "acme", "app", "", engram.RoleRead)
	id, _ := engram.KeyID(good)
	for name, bad := range map[string]string{
		"garbage":      "nonsense",
		"wrong secret": "ek_" + id + "_" + strings.Repeat("0", 64),
		"unknown id":   "ek_0000000000000000_" + strings.Repeat("0", 64),
		"truncated":    good[:len(good)-1],
	} {
		wantError(t, name, e.call(t, bad, "GET", list, ""), 401, engram.EUNAUTHORIZED, "not valid")
	}
	r := do(t, "GET", e.srv.URL+list, "", "Authorization", "Basic dXNlcjpwYXNz")
	wantError(t, "basic scheme", r, 401, engram.EUNAUTHORIZED, `"Bearer KEY" or "Token KEY"`)

	if r := e.call(t, good, "GET", list, ""); r.Status != http.StatusOK {
		t.Errorf("Bearer key: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", e.srv.URL+list, "", "Authorization", "Token "+good); r.Status != http.StatusOK {
		t.Errorf("Token key (Mem0's scheme): %d %s", r.Status, r.Body)
	}
}

func TestAuth_Roles(t *testing.T) {
	e := newAuthEnv(t)
	read := e.key(t, "acme", "app", "", engram.RoleRead)
	write := e.key(t, "acme", "app", "", engram.RoleWrite)
	id := addMemory(t, e, write, "acme", "u1", "likes tea")

	wantError(t, "read key adds", e.call(t, read, "POST", "/v1/memories",
		`{"namespace":{"org":"acme","project":"app"},"memories":[{"value":"v"}]}`), 403, engram.EFORBIDDEN, "role read")
	wantError(t, "read key deletes", e.call(t, read, "DELETE", "/v1/memories/"+id+"?org=acme&project=app&user=u1", ""), 403, engram.EFORBIDDEN, "role write")
	if r := e.call(t, read, "POST", "/v1/search", `{"scope":{"org":"acme","project":"app","user":"u1"},"query":"tea"}`); r.Status != http.StatusOK || !strings.Contains(string(r.Body), id) {
		t.Errorf("read key searches: %d %s", r.Status, r.Body)
	}
	if r := e.call(t, read, "GET", "/v1/memories/"+id+"?org=acme&project=app&user=u1", ""); r.Status != http.StatusOK {
		t.Errorf("read key gets: %d %s", r.Status, r.Body)
	}
	wantError(t, "write key purges a scope", e.call(t, write, "DELETE", "/v1/scope?org=acme&project=app&user=u1", ""), 403, engram.EFORBIDDEN, "role admin")
	wantError(t, "write key makes a key", e.call(t, write, "POST", "/v1/keys",
		`{"namespace":{"org":"acme","project":"app"},"role":"admin"}`), 403, engram.EFORBIDDEN, "role admin")
	admin := e.key(t, "acme", "app", "", engram.RoleAdmin)
	if r := e.call(t, admin, "DELETE", "/v1/scope?org=acme&project=app&user=u1", ""); r.Status != http.StatusOK {
		t.Errorf("admin key purges a scope: %d %s", r.Status, r.Body)
	}
}

func TestAuth_OtherTenant(t *testing.T) {
	e := newAuthEnv(t)
	a := e.key(t, "acme", "app", "", engram.RoleAdmin)
	b := e.key(t, "globex", "app", "", engram.RoleAdmin)
	secretID := addMemory(t, e, b, "globex", "u1", "globex launch codes")

	for _, c := range []struct{ name, method, path, body, field string }{
		{"list", "GET", "/v1/memories?org=globex&project=app&user=u1", "", "org"},
		{"get", "GET", "/v1/memories/" + secretID + "?org=globex&project=app&user=u1", "", "org"},
		{"search", "POST", "/v1/search", `{"scope":{"org":"globex","project":"app","user":"u1"},"query":"launch codes"}`, "org"},
		{"list by body", "POST", "/v1/memories/list", `{"scope":{"org":"globex","project":"app","user":"u1"}}`, "org"},
		{"other project", "GET", "/v1/memories?org=acme&project=other", "", "project"},
		{"export", "GET", "/v1/export?org=globex&project=app&user=u1", "", "org"},
		{"add", "POST", "/v1/memories", `{"namespace":{"org":"globex","project":"app"},"memories":[{"value":"v"}]}`, "org"},
		{"import", "POST", "/v1/import?org=acme&project=app", `{"type":"memory","memory":{"id":"01JAAAAAAAAAAAAAAAAAAAAAAA","namespace":{"org":"globex","project":"app"},"value":"v"}}`, "org"},
		{"keys", "GET", "/v1/keys?org=globex&project=app", "", "org"},
		{"make a key", "POST", "/v1/keys", `{"namespace":{"org":"globex","project":"app"},"role":"read"}`, "org"},
	} {
		r := e.call(t, a, c.method, c.path, c.body)
		wantError(t, c.name, r, 403, engram.EFORBIDDEN, "namespace."+c.field)
		if s := string(r.Body); strings.Contains(s, "launch") || strings.Contains(s, secretID) {
			t.Errorf("%s: the answer %s reveals globex's data", c.name, s)
		}
	}
	// An id of the other tenant read in one's own scope is unknown.
	wantError(t, "id of another tenant", e.call(t, a, "GET", "/v1/memories/"+secretID+"?org=acme&project=app&user=u1", ""), 404, engram.ENOTFOUND, "")
}

func TestAuth_UserBinding(t *testing.T) {
	e := newAuthEnv(t)
	admin := e.key(t, "acme", "app", "", engram.RoleAdmin)
	bobs := addMemory(t, e, admin, "acme", "bob", "bob's diary")
	shared := addMemory(t, e, admin, "acme", "", "office wifi password")
	alice := e.key(t, "acme", "app", "alice", engram.RoleWrite)
	mine := addMemory(t, e, alice, "acme", "alice", "alice likes jazz")

	wantError(t, "names bob", e.call(t, alice, "GET", "/v1/memories?org=acme&project=app&user=bob", ""),
		403, engram.EFORBIDDEN, `namespace.user "bob" is outside this key's binding`)
	wantError(t, "writes as bob", e.call(t, alice, "POST", "/v1/memories",
		`{"namespace":{"org":"acme","project":"app","user":"bob"},"memories":[{"value":"v"}]}`), 403, engram.EFORBIDDEN, `namespace.user "bob"`)
	wantError(t, "project level with include_shared", e.call(t, alice, "GET", "/v1/memories?org=acme&project=app&include_shared=true", ""),
		403, engram.EFORBIDDEN, `namespace.user ""`)
	wantError(t, "search as bob", e.call(t, alice, "POST", "/v1/search", `{"scope":{"org":"acme","project":"app","user":"bob","include_shared":true},"query":"diary"}`),
		403, engram.EFORBIDDEN, `namespace.user "bob"`)
	wantError(t, "gets bob's by id", e.call(t, alice, "GET", "/v1/memories/"+bobs+"?org=acme&project=app&user=alice&include_shared=true", ""),
		404, engram.ENOTFOUND, "")

	r := e.call(t, alice, "GET", "/v1/memories?org=acme&project=app&user=alice&include_shared=true", "")
	if r.Status != http.StatusOK {
		t.Fatalf("own scope with shared: %d %s", r.Status, r.Body)
	}
	if s := string(r.Body); !strings.Contains(s, mine) || !strings.Contains(s, shared) || strings.Contains(s, bobs) {
		t.Errorf("own scope with shared memories: %s; want alice's and the shared one, not bob's", s)
	}
}

func TestAuth_ManageKeys(t *testing.T) {
	e := newAuthEnv(t)
	admin := e.key(t, "acme", "app", "", engram.RoleAdmin)

	r := e.call(t, admin, "POST", "/v1/keys", `{"namespace":{"org":"acme","project":"app","user":"carol"},"role":"read","name":"carol's phone"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created struct {
		Key    engram.APIKey
		Secret string
	}
	if err := json.Unmarshal(r.Body, &created); err != nil {
		t.Fatal(err)
	}
	if created.Key.User != "carol" || created.Key.Role != engram.RoleRead || created.Secret == "" {
		t.Fatalf("created %s", r.Body)
	}
	if r := e.call(t, created.Secret, "GET", "/v1/memories?org=acme&project=app&user=carol", ""); r.Status != http.StatusOK {
		t.Fatalf("the new key: %d %s", r.Status, r.Body)
	}

	r = e.call(t, admin, "GET", "/v1/keys?org=acme&project=app", "")
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if s := string(r.Body); !strings.Contains(s, created.Key.ID) || strings.Contains(s, created.Secret) || strings.Contains(s, "hash") {
		t.Errorf("list %s: want the new key's id and no secret or hash", s)
	}

	// An admin bound to a user manages only that user's keys.
	carolAdmin := e.key(t, "acme", "app", "carol", engram.RoleAdmin)
	wantError(t, "user admin makes a project key", e.call(t, carolAdmin, "POST", "/v1/keys", `{"namespace":{"org":"acme","project":"app"},"role":"admin"}`),
		403, engram.EFORBIDDEN, `namespace.user ""`)

	if r := e.call(t, admin, "DELETE", "/v1/keys/"+created.Key.ID+"?org=acme&project=app", ""); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	wantError(t, "revoked key", e.call(t, created.Secret, "GET", "/v1/memories?org=acme&project=app&user=carol", ""), 401, engram.EUNAUTHORIZED, "revoked")
	wantError(t, "revoke unknown", e.call(t, admin, "DELETE", "/v1/keys/0000000000000000?org=acme&project=app", ""), 404, engram.ENOTFOUND, "")

	// The Go client sends its key.
	c := engramhttp.NewClient(e.srv.URL, engramhttp.ClientOptions{Key: admin})
	if _, err := c.ListMemories(context.Background(), engram.Scope{Org: "acme", Project: "app"}, engram.MemoryFilter{}); err != nil {
		t.Errorf("client with a key: %v", err)
	}
	c = engramhttp.NewClient(e.srv.URL, engramhttp.ClientOptions{})
	if _, err := c.ListMemories(context.Background(), engram.Scope{Org: "acme", Project: "app"}, engram.MemoryFilter{}); engram.ErrorCode(err) != engram.EUNAUTHORIZED {
		t.Errorf("client without a key: %v, want EUNAUTHORIZED", err)
	}
}

// TestAuth_HandlersDecodeWithBinding guards the one place the binding is
// checked: a handler that decoded its body with decodeJSON would skip it.
func TestAuth_HandlersDecodeWithBinding(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "decodeJSON(r.Body") {
			t.Errorf("%s decodes a request body with decodeJSON; use decodeBody, which checks the key's binding", f)
		}
	}
}

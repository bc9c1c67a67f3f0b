package http_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestCommunities: the community endpoints over a real engine: a refresh
// (write) makes them, the list and the detail show them to their user
// only, graph nodes carry their community, and bad input is 400 naming
// the field.
func TestCommunities(t *testing.T) {
	e := newAuthEnv(t)
	alice := e.key(t, "acme", "app", "alice", engram.RoleWrite)
	reader := e.key(t, "acme", "app", "alice", engram.RoleRead)
	bob := e.key(t, "globex", "app", "bob", engram.RoleWrite)
	addMemory(t, e, alice, "acme", "alice", "Last summer I hiked in Yosemite with Melanie and Jürgen.")
	addMemory(t, e, alice, "acme", "alice", "Melanie und Jürgen kochten zusammen.")

	const scope = "?org=acme&project=app&user=alice"
	if r := e.call(t, reader, "POST", "/v1/communities/refresh"+scope, ""); r.Status != http.StatusForbidden {
		t.Errorf("refresh with a read key: %d %s, want 403", r.Status, r.Body)
	}
	r := e.call(t, alice, "POST", "/v1/communities/refresh"+scope, `{"full": true}`)
	var res engram.RefreshResult
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil || !res.Full || res.Written == 0 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	r = e.call(t, reader, "GET", "/v1/communities"+scope, "")
	var l engram.CommunityList
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &l) != nil || len(l.Communities) != 1 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	c := l.Communities[0]
	if !strings.Contains(c.Summary, "Melanie") {
		t.Errorf("summary %q does not name Melanie", c.Summary)
	}
	r = e.call(t, reader, "GET", "/v1/communities/"+c.ID+scope, "")
	var d engram.CommunityDetail
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &d) != nil || len(d.Entities) != len(c.Members) {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	r = e.call(t, reader, "GET", "/v1/graph"+scope, "")
	var g engram.Graph
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &g) != nil || len(g.Nodes) == 0 {
		t.Fatalf("graph: %d %s", r.Status, r.Body)
	}
	for _, n := range g.Nodes {
		if n.Community != c.ID {
			t.Errorf("graph node %s has community %q, want %s", n.Name, n.Community, c.ID)
		}
	}

	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/communities/" + c.ID + "?org=globex&project=app&user=bob", http.StatusNotFound},
		{"GET", "/v1/communities" + scope, http.StatusForbidden},
		{"POST", "/v1/communities/refresh" + scope, http.StatusForbidden},
	} {
		if r := e.call(t, bob, tc.method, tc.path, ""); r.Status != tc.want {
			t.Errorf("bob %s %s = %d %s, want %d", tc.method, tc.path, r.Status, r.Body, tc.want)
		}
	}
	r = e.call(t, bob, "GET", "/v1/communities?org=globex&project=app&user=bob", "")
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &l) != nil || len(l.Communities) != 0 {
		t.Errorf("bob's communities: %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct{ method, path, body, field string }{
		{"GET", "/v1/communities/not!an!id" + scope, "", "community"},
		{"POST", "/v1/communities/refresh" + scope, `{"full": "maybe"}`, "full"},
		{"POST", "/v1/communities/refresh" + scope, `{"fast": true}`, "fast"},
	} {
		if r := e.call(t, alice, tc.method, tc.path, tc.body); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tc.field) {
			t.Errorf("%s %s %s = %d %s, want 400 naming %s", tc.method, tc.path, tc.body, r.Status, r.Body, tc.field)
		}
	}
	if r := e.call(t, alice, "POST", "/v1/communities/refresh?org=acme&project=app&user=alice&session=s1", ""); r.Status != http.StatusBadRequest {
		t.Errorf("refresh narrowed to a session: %d %s, want 400", r.Status, r.Body)
	}
}

// TestCommunities_NarrowedShape: a scope narrowed to an agent gets its
// communities without names, summary or sources, but in the documented
// shape: names and sources are arrays (empty), never null.
func TestCommunities_NarrowedShape(t *testing.T) {
	e := newAuthEnv(t)
	alice := e.key(t, "acme", "app", "alice", engram.RoleWrite)
	body := `{"namespace":{"org":"acme","project":"app","user":"alice","agent":"a"},"memories":[{"value":"Last summer I hiked in Yosemite with Melanie and Jürgen."}]}`
	if r := e.call(t, alice, "POST", "/v1/memories", body); r.Status != http.StatusCreated {
		t.Fatalf("add memory: %d %s", r.Status, r.Body)
	}
	const scope = "?org=acme&project=app&user=alice"
	if r := e.call(t, alice, "POST", "/v1/communities/refresh"+scope, ""); r.Status != http.StatusOK {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	wantArrays := func(what string, c map[string]any) {
		t.Helper()
		for _, field := range []string{"members", "names", "sources"} {
			if _, ok := c[field].([]any); !ok {
				t.Errorf("%s: %s is %v, want an array", what, field, c[field])
			}
		}
	}
	r := e.call(t, alice, "GET", "/v1/communities"+scope+"&agent=a", "")
	var l struct{ Communities []map[string]any }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &l) != nil || len(l.Communities) != 1 {
		t.Fatalf("list for agent a: %d %s", r.Status, r.Body)
	}
	wantArrays("list for agent a", l.Communities[0])
	id, _ := l.Communities[0]["id"].(string)
	r = e.call(t, alice, "GET", "/v1/communities/"+id+scope+"&agent=a", "")
	var d struct{ Community map[string]any }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &d) != nil {
		t.Fatalf("get for agent a: %d %s", r.Status, r.Body)
	}
	wantArrays("get for agent a", d.Community)
}

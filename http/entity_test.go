package http_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestEntities: the entity endpoints over a real engine, scoped by the
// caller's key: alice's entities, their detail and graph; another tenant's
// key sees none of them (404, or 403 outside its binding); bad parameters
// are 400 naming the field; a delete is 204 and cascades.
func TestEntities(t *testing.T) {
	e := newAuthEnv(t)
	alice := e.key(t, "acme", "app", "alice", engram.RoleWrite)
	bob := e.key(t, "globex", "app", "bob", engram.RoleWrite)
	addMemory(t, e, alice, "acme", "alice", "Last summer I hiked in Yosemite with Melanie.")
	addMemory(t, e, alice, "acme", "alice", "Am Samstag fahre ich mit Jürgen nach Lissabon.")
	addMemory(t, e, bob, "globex", "bob", "Bob met Melanie in Boston.")

	const scope = "?org=acme&project=app&user=alice"
	r := e.call(t, alice, "GET", "/v1/entities"+scope+"&prefix=mel", "")
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var page engram.EntityPage
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Entities) != 1 || page.Entities[0].Name != "Melanie" || page.Entities[0].Namespace.User != "alice" {
		t.Fatalf("alice's entities with prefix mel = %+v", page.Entities)
	}
	mel := page.Entities[0].ID

	r = e.call(t, alice, "GET", "/v1/entities/"+mel+scope, "")
	var d engram.EntityDetail
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &d) != nil {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	if len(d.Memories) != 1 || len(d.Relations) != 1 || len(d.Timeline) != 1 {
		t.Errorf("Melanie's detail: %d memories, %d relations, %d timeline entries; want 1 each", len(d.Memories), len(d.Relations), len(d.Timeline))
	}
	r = e.call(t, alice, "GET", "/v1/graph"+scope+"&entity="+mel+"&hops=2", "")
	var g engram.Graph
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &g) != nil || len(g.Nodes) != 2 || len(g.Edges) != 1 {
		t.Errorf("graph around Melanie: %d %s", r.Status, r.Body)
	}
	r = e.call(t, alice, "GET", "/v1/entities"+scope+"&type=place", "")
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil || len(page.Entities) != 2 {
		t.Errorf("alice's places: %d %s", r.Status, r.Body)
	}

	// Bob: his own Melanie only; alice's id is unknown to him; alice's
	// scope is outside his key.
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/entities/" + mel + "?org=globex&project=app&user=bob", http.StatusNotFound},
		{"GET", "/v1/graph?org=globex&project=app&user=bob&entity=" + mel, http.StatusNotFound},
		{"DELETE", "/v1/entities/" + mel + "?org=globex&project=app&user=bob", http.StatusNotFound},
		{"GET", "/v1/entities" + scope, http.StatusForbidden},
		{"GET", "/v1/entities/" + mel + scope, http.StatusForbidden},
	} {
		if r := e.call(t, bob, c.method, c.path, ""); r.Status != c.want {
			t.Errorf("bob %s %s = %d %s, want %d", c.method, c.path, r.Status, r.Body, c.want)
		}
	}
	r = e.call(t, bob, "GET", "/v1/entities?org=globex&project=app&user=bob&prefix=mel", "")
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil || len(page.Entities) != 1 || page.Entities[0].ID == mel {
		t.Errorf("bob's Melanie: %d %s", r.Status, r.Body)
	}

	// Bad input names the field.
	for path, field := range map[string]string{
		"/v1/graph" + scope + "&hops=3":          "hops",
		"/v1/graph" + scope + "&hops=x":          "hops",
		"/v1/entities" + scope + "&limit=5000":   "limit",
		"/v1/entities" + scope + "&cursor=zz":    "cursor",
		"/v1/entities/not!an!id" + scope:         "entity",
		"/v1/graph" + scope + "&entity=not!anid": "entity",
	} {
		r := e.call(t, alice, "GET", path, "")
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), field) {
			t.Errorf("GET %s = %d %s, want 400 naming %s", path, r.Status, r.Body, field)
		}
	}

	if r := e.call(t, alice, "DELETE", "/v1/entities/"+mel+scope, ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.call(t, alice, "GET", "/v1/entities/"+mel+scope, ""); r.Status != http.StatusNotFound {
		t.Errorf("get after delete: %d", r.Status)
	}
	r = e.call(t, alice, "GET", "/v1/graph"+scope, "")
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &g) != nil || len(g.Edges) != 1 {
		t.Fatalf("graph after the delete: %d %s", r.Status, r.Body)
	}
	for _, ed := range g.Edges {
		if ed.Source == mel || ed.Target == mel {
			t.Errorf("graph after the delete still has Melanie's relation: %s", r.Body)
		}
	}
}

// TestGraph_NarrowedScopeUnseenEntity: a scope narrowed to an agent does
// not see an entity only another agent's memories name, so the graph
// around it is 404 as the entity itself is, not an empty graph that
// tells the entity exists.
func TestGraph_NarrowedScopeUnseenEntity(t *testing.T) {
	e := newAuthEnv(t)
	alice := e.key(t, "acme", "app", "alice", engram.RoleWrite)
	for agent, value := range map[string]string{"a": "Last summer I hiked in Yosemite with Melanie.", "b": "Yesterday I met Caroline in Berlin."} {
		body := `{"namespace":{"org":"acme","project":"app","user":"alice","agent":"` + agent + `"},"memories":[{"value":"` + value + `"}]}`
		if r := e.call(t, alice, "POST", "/v1/memories", body); r.Status != http.StatusCreated {
			t.Fatalf("add memory: %d %s", r.Status, r.Body)
		}
	}
	const scope = "?org=acme&project=app&user=alice"
	var page engram.EntityPage
	r := e.call(t, alice, "GET", "/v1/entities"+scope+"&prefix=berlin", "")
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil || len(page.Entities) != 1 {
		t.Fatalf("Berlin: %d %s", r.Status, r.Body)
	}
	berlin := page.Entities[0].ID
	wantError(t, "entity seen by agent a", e.call(t, alice, "GET", "/v1/entities/"+berlin+scope+"&agent=a", ""), http.StatusNotFound, engram.ENOTFOUND, berlin)
	wantError(t, "graph around it for agent a", e.call(t, alice, "GET", "/v1/graph"+scope+"&agent=a&entity="+berlin, ""), http.StatusNotFound, engram.ENOTFOUND, berlin)
	var g engram.Graph
	r = e.call(t, alice, "GET", "/v1/graph"+scope+"&agent=b&entity="+berlin, "")
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &g) != nil || len(g.Nodes) != 2 || len(g.Edges) != 1 {
		t.Errorf("graph around Berlin for agent b: %d %s", r.Status, r.Body)
	}
}

// TestEntities_BadFilterText: a type or prefix that is not text an entity
// can have (a NUL character, bytes that are not UTF-8, longer than the
// limit) is 400 naming the parameter, on every store alike, not an empty
// page.
func TestEntities_BadFilterText(t *testing.T) {
	e := newAuthEnv(t)
	alice := e.key(t, "acme", "app", "alice", engram.RoleRead)
	const list = "/v1/entities?org=acme&project=app&user=alice"
	for _, c := range []struct{ query, field, msg string }{
		{"&type=person%00", "type", "NUL"},
		{"&type=caf%E9", "type", "UTF-8"},
		{"&type=" + strings.Repeat("x", 65), "type", "longer than the limit"},
		{"&prefix=mel%00", "prefix", "NUL"},
		{"&prefix=caf%E9", "prefix", "UTF-8"},
	} {
		r := e.call(t, alice, "GET", list+c.query, "")
		wantError(t, "GET "+c.query, r, http.StatusBadRequest, engram.EINVALID, c.msg)
		if msg := errorOf(t, r).Error.Message; !strings.Contains(msg, c.field) {
			t.Errorf("GET %s: %q does not name %s", c.query, msg, c.field)
		}
	}
}

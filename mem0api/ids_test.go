package mem0api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/engramhq/engram"
)

// TestMemoryIDsOfOthers: Mem0's routes name a memory by id alone, and
// memory ids are unique per user, so two users may hold one id. A key
// bound to a user reads, updates, lists the history of and deletes its
// own memory under the id, never the other's; a key bound to no user
// finding the id under several users is told to name one (409), and
// names it with user_id. (Before, the id led to
// whichever user held it, and a second user could not hold it at all.)
func TestMemoryIDsOfOthers(t *testing.T) {
	e := newEnv(t, true)
	admin := e.key("app", "", engram.RoleAdmin)
	ann := e.key("app", "ann", engram.RoleAdmin)
	bob := e.key("app", "bob", engram.RoleRead)
	id := engram.NewID()
	for user, value := range map[string]string{"bob": "Bob's PIN is 4321", "ann": "Anns PIN ist 1234"} {
		_, err := e.eng.AddMemories(context.Background(), engram.AddMemoriesRequest{
			Namespace: engram.Namespace{Org: "acme", Project: "app", User: user}, Memories: []engram.Memory{{ID: id, Value: value}}})
		if err != nil {
			t.Fatalf("%s's memory %s: %v", user, id, err)
		}
	}
	path := "/v1/memories/" + id + "/"
	if got := obj(e.ok(ann, "GET", path, "")); got["memory"] != "Anns PIN ist 1234" {
		t.Fatalf("ann's GET = %v, want her memory", got)
	}
	e.ok(ann, "PUT", path, `{"text":"Anns PIN ist 5678"}`)
	if h := list(e.ok(ann, "GET", path+"history/", "")); len(h) != 2 {
		t.Fatalf("ann's history = %v, want her add and update", h)
	}
	e.fails(admin, "GET", path, "", http.StatusConflict, "name the user")
	if got := obj(e.ok(admin, "GET", path+"?user_id=bob", "")); got["memory"] != "Bob's PIN is 4321" {
		t.Fatalf("the project key's GET naming bob = %v, want his memory", got)
	}
	e.fails(ann, "GET", path+"?user_id=bob", "", http.StatusNotFound, "not found")
	e.ok(ann, "DELETE", path, "")
	e.fails(ann, "GET", path, "", http.StatusNotFound, "deleted")
	if got := obj(e.ok(bob, "GET", path, "")); got["memory"] != "Bob's PIN is 4321" || got["user_id"] != "bob" {
		t.Fatalf("bob's memory after ann's update and delete = %v", got)
	}
	if h := list(e.ok(bob, "GET", path+"history/", "")); len(h) != 1 {
		t.Fatalf("bob's history = %v, want his add only", h)
	}
}

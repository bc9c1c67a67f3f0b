package http_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// GET /v1/scopes lists a tenant's scopes with counts and last activity:
// the key's tenant by default, only its user's scopes for a bound key,
// never another tenant's.
func TestScopes(t *testing.T) {
	e := newAuthEnv(t)
	admin := e.key(t, "acme", "app", "", engram.RoleAdmin)
	alice := e.key(t, "acme", "app", "alice", engram.RoleRead)
	addMemory(t, e, admin, "acme", "alice", "Alice mag Kaffee")
	addMemory(t, e, admin, "acme", "alice", "Alice 喜欢茶")
	addMemory(t, e, admin, "acme", "bob", "Bob prefiere té")
	other := e.key(t, "globex", "app", "", engram.RoleAdmin)
	addMemory(t, e, other, "globex", "carol", "Carol's secret")

	list := func(key, path string) (engram.Namespace, []engram.NamespaceCount) {
		t.Helper()
		r := e.call(t, key, "GET", path, "")
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		var res struct {
			Tenant engram.Namespace
			Scopes []engram.NamespaceCount
		}
		if err := json.Unmarshal(r.Body, &res); err != nil {
			t.Fatal(err)
		}
		return res.Tenant, res.Scopes
	}
	tenant, all := list(admin, "/v1/scopes")
	if tenant != (engram.Namespace{Org: "acme", Project: "app"}) {
		t.Errorf("tenant = %+v, want the key's acme/app", tenant)
	}
	if len(all) != 2 || all[0].Namespace.User != "alice" || all[0].Memories != 2 || all[1].Namespace.User != "bob" || all[1].Memories != 1 {
		t.Fatalf("admin's scopes = %+v, want alice (2) and bob (1) only", all)
	}
	if all[0].LastActivity.IsZero() {
		t.Errorf("alice's last activity is zero")
	}
	if _, mine := list(alice, "/v1/scopes?org=acme&project=app"); len(mine) != 1 || mine[0].Namespace.User != "alice" {
		t.Fatalf("alice's key sees %+v, want her scope only", mine)
	}
	wantError(t, "another org", e.call(t, admin, "GET", "/v1/scopes?org=globex", ""), http.StatusForbidden, engram.EFORBIDDEN, "org")
	wantError(t, "bad limit", e.call(t, admin, "GET", "/v1/scopes?limit=x", ""), http.StatusBadRequest, engram.EINVALID, "limit")
}

// Without API keys the tenant must be named.
func TestScopes_NoAuthNeedsTenant(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{Logger: discardLogger()})
	wantError(t, "no project", do(t, "GET", env.srv.URL+"/v1/scopes?org=acme", ""), http.StatusBadRequest, engram.EINVALID, "project")
}

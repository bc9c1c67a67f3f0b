package http_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// tenantsEnv is a real engine with memories in two tenants, served with
// the tenants mount, with API keys or without (keys nil).
func tenantsEnv(t *testing.T, withKeys bool) (*httptest.Server, *engram.Keys) {
	t.Helper()
	ctx := context.Background()
	eng, err := storeopen.Engine(ctx, t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	for _, ns := range []engram.Namespace{{Org: "acme", Project: "app", User: "ann"}, {Org: "acme", Project: "app", User: "bob"}, {Org: "globex", Project: "web", User: "cy"}} {
		if _, err := eng.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Kind: engram.KindSemantic, Value: "Le chat de " + ns.User + " dort."}}}); err != nil {
			t.Fatal(err)
		}
	}
	opts := engramhttp.ServerOptions{Logger: discardLogger(), Mounts: []engramhttp.Mount{
		{Pattern: engramhttp.TenantsPattern, Handler: engramhttp.TenantsHandler(eng), Role: engram.RoleAdmin},
	}}
	var keys *engram.Keys
	if withKeys {
		keys = &engram.Keys{Store: eng.Store()}
		opts.Keys = *keys
	}
	srv := httptest.NewServer(engramhttp.NewServer(eng, opts))
	t.Cleanup(srv.Close)
	return srv, keys
}

func tenantsOf(t *testing.T, r rawResponse) []engram.NamespaceCount {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var got struct {
		Tenants []engram.NamespaceCount `json:"tenants"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	return got.Tenants
}

// TestTenants_NoAuth: without keys the listing names every tenant with
// its count, and /healthz says no key is needed.
func TestTenants_NoAuth(t *testing.T) {
	srv, _ := tenantsEnv(t, false)
	got := tenantsOf(t, do(t, "GET", srv.URL+"/v1/tenants", ""))
	if len(got) != 2 || got[0].Namespace != (engram.Namespace{Org: "acme", Project: "app"}) || got[0].Memories != 2 ||
		got[1].Namespace != (engram.Namespace{Org: "globex", Project: "web"}) || got[1].Memories != 1 {
		t.Errorf("tenants = %+v", got)
	}
	if r := do(t, "GET", srv.URL+"/v1/tenants?org=acme", ""); r.Status != 400 {
		t.Errorf("an unknown parameter: status %d", r.Status)
	}
	var h struct {
		KeysRequired *bool `json:"keys_required"`
	}
	if err := json.Unmarshal(do(t, "GET", srv.URL+"/healthz", "").Body, &h); err != nil || h.KeysRequired == nil || *h.KeysRequired {
		t.Errorf("healthz keys_required = %v, %v; want false", h.KeysRequired, err)
	}
}

// TestTenants_Keys: with keys, the listing needs an admin key of a whole
// tenant and shows that tenant only; /healthz, asked without a key, says
// one is needed.
func TestTenants_Keys(t *testing.T) {
	srv, keys := tenantsEnv(t, true)
	key := func(n engram.Namespace, role string) string {
		_, secret, err := keys.CreateKey(context.Background(), engram.KeySpec{Namespace: n, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + secret
	}
	acme := engram.Namespace{Org: "acme", Project: "app"}
	if r := do(t, "GET", srv.URL+"/v1/tenants", ""); r.Status != 401 {
		t.Errorf("no key: status %d", r.Status)
	}
	for _, k := range []string{key(acme, engram.RoleWrite), key(engram.Namespace{Org: "acme", Project: "app", User: "ann"}, engram.RoleAdmin)} {
		if r := do(t, "GET", srv.URL+"/v1/tenants", "", "Authorization", k); r.Status != 403 {
			t.Errorf("a write key or an admin key bound to a user: status %d: %s", r.Status, r.Body)
		}
	}
	got := tenantsOf(t, do(t, "GET", srv.URL+"/v1/tenants", "", "Authorization", key(acme, engram.RoleAdmin)))
	if len(got) != 1 || got[0].Namespace != acme || got[0].Memories != 2 {
		t.Errorf("an admin key of acme/app sees %+v, want acme/app alone", got)
	}
	var h struct {
		KeysRequired *bool `json:"keys_required"`
	}
	if err := json.Unmarshal(do(t, "GET", srv.URL+"/healthz", "").Body, &h); err != nil || h.KeysRequired == nil || !*h.KeysRequired {
		t.Errorf("healthz keys_required = %v, %v; want true", h.KeysRequired, err)
	}
}

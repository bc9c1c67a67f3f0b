package http_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// TestSensitivePolicy_Route: with keys, only an admin key of the whole
// tenant reads and sets its policy (another tenant's, a user's admin key
// or a write key: 403); a bad treatment is 400 naming the group and
// changes nothing; a setting applies to the tenant's next add, whose
// answer counts what was treated; {} returns to the server's default. The
// Go client reads and sets it too.
func TestSensitivePolicy_Route(t *testing.T) {
	ctx := context.Background()
	keep, _ := engram.ParseSensitivePolicy("keep")
	eng, err := storeopen.Engine(ctx, t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour, Sensitive: keep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	h := engramhttp.SensitivePolicyHandler(eng)
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Keys: keys, Mounts: []engramhttp.Mount{
		{Pattern: engramhttp.SensitivePolicyPattern, Handler: h, Role: engram.RoleAdmin},
		{Pattern: engramhttp.SetSensitivePolicyPattern, Handler: h, Role: engram.RoleAdmin},
	}}))
	t.Cleanup(srv.Close)
	key := func(n engram.Namespace, role string) string {
		_, secret, err := keys.CreateKey(ctx, engram.KeySpec{Namespace: n, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	acme := engram.Namespace{Org: "acme", Project: "app"}
	admin := "Bearer " + key(acme, engram.RoleAdmin)
	url := srv.URL + "/v1/tenants/acme/app/sensitive"
	for _, k := range []string{key(acme, engram.RoleWrite), key(engram.Namespace{Org: "acme", Project: "app", User: "ann"}, engram.RoleAdmin), key(engram.Namespace{Org: "globex", Project: "web"}, engram.RoleAdmin)} {
		if r := do(t, "PUT", url, `{"secret":"redact"}`, "Authorization", "Bearer "+k); r.Status != 403 {
			t.Errorf("PUT with a key that is not acme/app's admin: status %d: %s", r.Status, r.Body)
		}
	}
	if r := do(t, "PUT", url, `{"payment":"hide"}`, "Authorization", admin); r.Status != 400 || !strings.Contains(string(r.Body), "payment") {
		t.Errorf("PUT a bad treatment: status %d: %s; want 400 naming payment", r.Status, r.Body)
	}
	r := do(t, "PUT", url, `{"secret":"redact"}`, "Authorization", admin)
	var tp engram.TenantPolicy
	if err := json.Unmarshal(r.Body, &tp); r.Status != 200 || err != nil || tp.Set.Secret != engram.TreatRedact || tp.Applied.Contact != engram.TreatKeep {
		t.Fatalf("PUT secret=redact: status %d: %s", r.Status, r.Body)
	}
	client := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Key: strings.TrimPrefix(admin, "Bearer ")})
	res, err := client.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: engram.Namespace{Org: "acme", Project: "app", User: "ann"},
		Episodes: []engram.EpisodeInput{{Content: "el token es ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"}}})
	want := []engram.SensitiveCount{{Kind: "api_key", Treatment: engram.TreatRedact, Count: 1}}
	if err != nil || res.Episodes[0].Content != "el token es [secret:api_key#1]" || len(res.Sensitive) != 1 || res.Sensitive[0] != want[0] {
		t.Fatalf("add after secret=redact = %+v, %v", res, err)
	}
	got, err := client.SetSensitivePolicy(ctx, acme, engram.SensitivePolicy{})
	if err != nil || !got.Set.IsZero() || got.Applied != keep {
		t.Errorf("client set {} = %+v, %v; want the server's default", got, err)
	}
	if got, err := client.SensitivePolicy(ctx, acme); err != nil || got.Applied != keep {
		t.Errorf("client get = %+v, %v", got, err)
	}
}

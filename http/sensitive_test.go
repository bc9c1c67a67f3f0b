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

// TestSensitiveScan_Route: POST /v1/tenants/{org}/{project}/sensitive/scan
// scans the tenant's scope of the query's user: without a key 401, with a
// key that is not the whole tenant's admin 403, a bad parameter 400
// naming it. The admin's scan reports kinds, counts and record ids, never
// the value; with apply=true it treats what the policy seals, after which
// the episode holds the placeholder and the Go client's scan finds nothing.
func TestSensitiveScan_Route(t *testing.T) {
	ctx := context.Background()
	keep, _ := engram.ParseSensitivePolicy("keep")
	eng, err := storeopen.Engine(ctx, t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour, Sensitive: keep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Keys: keys, Mounts: []engramhttp.Mount{
		{Pattern: engramhttp.SensitiveScanPattern, Handler: engramhttp.SensitiveScanHandler(eng), Role: engram.RoleAdmin},
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
	ann := engram.Namespace{Org: "acme", Project: "app", User: "ann"}
	admin := key(acme, engram.RoleAdmin)
	const secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
	noForm := false
	res, err := eng.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ann, Form: &noForm, Episodes: []engram.EpisodeInput{{Content: "El token de GitHub es " + secret}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Episodes[0].ID
	url := srv.URL + "/v1/tenants/acme/app/sensitive/scan?user=ann"
	if r := do(t, "POST", url, ""); r.Status != 401 {
		t.Errorf("scan without a key: status %d: %s", r.Status, r.Body)
	}
	for _, k := range []string{key(acme, engram.RoleWrite), key(ann, engram.RoleAdmin), key(engram.Namespace{Org: "globex", Project: "web"}, engram.RoleAdmin)} {
		if r := do(t, "POST", url, "", "Authorization", "Bearer "+k); r.Status != 403 {
			t.Errorf("scan with a key that is not acme/app's admin: status %d: %s", r.Status, r.Body)
		}
	}
	for _, bad := range []struct{ query, name string }{{"?apply=maybe", "apply"}, {"?usr=ann", "usr"}} {
		r := do(t, "POST", srv.URL+"/v1/tenants/acme/app/sensitive/scan"+bad.query, "", "Authorization", "Bearer "+admin)
		if r.Status != 400 || !strings.Contains(string(r.Body), bad.name) {
			t.Errorf("scan%s: status %d: %s; want 400 naming %s", bad.query, r.Status, r.Body, bad.name)
		}
	}
	r := do(t, "POST", url, "", "Authorization", "Bearer "+admin)
	var rep engram.SensitiveScan
	if err := json.Unmarshal(r.Body, &rep); r.Status != 200 || err != nil || len(rep.Found) != 1 || rep.Found[0].Kind != "api_key" ||
		rep.Found[0].Records[0] != id || rep.Treated != nil || strings.Contains(string(r.Body), secret) {
		t.Fatalf("scan: status %d: %s", r.Status, r.Body)
	}
	if _, err := eng.SetSensitivePolicy(ctx, acme, engram.SensitivePolicy{Secret: engram.TreatRedact}); err != nil {
		t.Fatal(err)
	}
	r = do(t, "POST", url+"&apply=true", "", "Authorization", "Bearer "+admin)
	if err := json.Unmarshal(r.Body, &rep); r.Status != 200 || err != nil || engram.SummarizeSensitive(rep.Treated) != "redacted api_key x1" {
		t.Fatalf("scan with apply: status %d: %s", r.Status, r.Body)
	}
	if ep, err := eng.GetEpisode(ctx, engram.ScopeOf(ann), id); err != nil || ep.Content != "El token de GitHub es [secret:api_key#1]" {
		t.Errorf("after the scan the episode is %+v, %v", ep, err)
	}
	client := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Key: admin})
	if got, err := client.ScanSensitive(ctx, engram.ScopeOf(ann), false); err != nil || len(got.Found) != 0 || got.Episodes != 1 {
		t.Errorf("client scan after apply = %+v, %v", got, err)
	}
}

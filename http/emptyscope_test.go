package http_test

import (
	"strings"
	"testing"

	engramhttp "github.com/engramhq/engram/http"
)

// TestEmptyScope: a search or list over a scope that holds nothing says so
// with "empty_scope": true, judged in that scope alone (the same user in
// another tenant holds memories); where the scope holds memories and
// nothing matches, the answer's shape is as before, without the field.
func TestEmptyScope(t *testing.T) {
	e := newEngineEnv(t, engramhttp.ServerOptions{})
	add := `{"namespace":{"org":"acme","project":"app","user":"ann"},"memories":[{"kind":"semantic","value":"Ann fährt jeden Morgen Rad."}]}`
	if r := do(t, "POST", e.srv.URL+"/v1/memories", add); r.Status != 201 {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	search := func(org, user, query string) string {
		t.Helper()
		r := do(t, "POST", e.srv.URL+"/v1/search", `{"scope":{"org":"`+org+`","project":"app","user":"`+user+`"},"query":"`+query+`","budget":200}`)
		if r.Status != 200 {
			t.Fatalf("search: %d %s", r.Status, r.Body)
		}
		return string(r.Body)
	}
	list := func(path string) string {
		t.Helper()
		r := do(t, "GET", e.srv.URL+path, "")
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		return string(r.Body)
	}
	for what, body := range map[string]string{
		"search in another tenant":   search("globex", "ann", "Rad"),
		"search of another user":     search("acme", "bob", "Rad"),
		"list in another tenant":     list("/v1/memories?org=globex&project=app&user=ann"),
		"episodes in another tenant": list("/v1/episodes?org=globex&project=app&user=ann"),
	} {
		if !strings.Contains(body, `"empty_scope":true`) {
			t.Errorf("%s: %s; want empty_scope true", what, body)
		}
	}
	for what, body := range map[string]string{
		"search that matches":       search("acme", "ann", "Rad"),
		"search that matches none":  search("acme", "ann", "Klavier"),
		"list that matches none":    list("/v1/memories?org=acme&project=app&user=ann&contains=Klavier"),
		"list of a scope with some": list("/v1/memories?org=acme&project=app&user=ann"),
	} {
		if strings.Contains(body, "empty_scope") {
			t.Errorf("%s: %s; want no empty_scope", what, body)
		}
	}
	if body := search("acme", "ann", "Rad"); !strings.Contains(body, "fährt") {
		t.Errorf("the matching search found nothing: %s", body)
	}
}

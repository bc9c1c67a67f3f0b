package http_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestNamesNormalized: a name sent with a combining accent, in a body or a
// query string, is the same namespace as the precomposed name.
func TestNamesNormalized(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	decomposed, composed := "Jose\u0301", "Jos\u00e9"
	body := `{"namespace":{"org":"o","project":"p","user":"` + decomposed + `"},"episodes":[{"content":"hello"}],"form":false}`
	if r := do(t, "POST", env.srv.URL+"/v1/episodes", body); r.Status != 201 {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	page, err := env.c.ListEpisodes(context.Background(), engram.Scope{Org: "o", Project: "p", User: composed}, engram.EpisodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Episodes) != 1 || page.Episodes[0].Namespace.User != composed {
		t.Fatalf("episodes of the composed name: %+v", page.Episodes)
	}
	r := do(t, "GET", env.srv.URL+"/v1/episodes?org=o&project=p&user="+url.QueryEscape(decomposed), "")
	if r.Status != 200 {
		t.Fatalf("list with the decomposed name: %d %s", r.Status, r.Body)
	}
	var got engram.EpisodePage
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Episodes) != 1 {
		t.Errorf("list with the decomposed name found %d episodes, want 1", len(got.Episodes))
	}
}

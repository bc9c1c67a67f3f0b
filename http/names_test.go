package http_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
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

// TestBodyInvalidUTF8: a body whose bytes are not valid UTF-8 (or that
// escapes a lone surrogate) is refused with 400 naming the field, and
// stores nothing, as the same bytes in a query string are; so two byte
// strings never become one user name through U+FFFD.
func TestBodyInvalidUTF8(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	for _, tc := range []struct{ user, want string }{
		{"al\xffice", "namespace.user is not valid UTF-8"},
		{"al\xfeice", "namespace.user is not valid UTF-8"},
		{`al\udc00ice`, "namespace.user holds a \\\\u escape of a lone UTF-16 surrogate"},
	} {
		body := `{"namespace":{"org":"o","project":"p","user":"` + tc.user + `"},"episodes":[{"content":"hello"}],"form":false}`
		r := do(t, "POST", env.srv.URL+"/v1/episodes", body)
		if r.Status != 400 || !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("add as %q: %d %s, want 400 naming %q", tc.user, r.Status, r.Body, tc.want)
		}
	}
	content := `{"namespace":{"org":"o","project":"p","user":"u"},"episodes":[{"content":"caf` + "\xe9" + ` au lait"}],"form":false}`
	if r := do(t, "POST", env.srv.URL+"/v1/episodes", content); r.Status != 400 || !strings.Contains(string(r.Body), "episodes[0].content") {
		t.Errorf("add with Latin-1 content: %d %s, want 400 naming episodes[0].content", r.Status, r.Body)
	}
	for _, user := range []string{"al\ufffdice", "u"} {
		page, err := env.c.ListEpisodes(context.Background(), engram.Scope{Org: "o", Project: "p", User: user}, engram.EpisodeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Episodes) != 0 {
			t.Errorf("episodes of %q after refused adds: %d, want none", user, len(page.Episodes))
		}
	}
}

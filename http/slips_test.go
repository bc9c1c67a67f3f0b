package http_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestAddEpisodes_RoleRefused: a role outside engram.Roles (a made-up one,
// a typo, another case) is refused with 400 naming the episode's role
// field, and nothing of the batch is stored.
func TestAddEpisodes_RoleRefused(t *testing.T) {
	e := newEngineEnv(t, engramhttp.ServerOptions{})
	ns := `{"org":"o","project":"p","user":"ann"}`
	for _, tc := range []struct{ role, field string }{
		{"boss", "episodes[1].role"},
		{"asistant", "episodes[1].role"},
		{"User", "episodes[1].role"},
	} {
		body := `{"namespace":` + ns + `,"episodes":[{"role":"user","content":"I live in Lisbon."},{"role":"` + tc.role + `","content":"Ich wohne in Berlin."}]}`
		r := do(t, "POST", e.srv.URL+"/v1/episodes", body)
		if r.Status != 400 {
			t.Fatalf("role %q: status %d, want 400; body %s", tc.role, r.Status, r.Body)
		}
		msg := errorOf(t, r).Error.Message
		if !strings.Contains(msg, tc.field) || !strings.Contains(msg, tc.role) || !strings.Contains(msg, "user, assistant, system, tool, event") {
			t.Errorf("role %q: message %q does not name %s, the value and the roles allowed", tc.role, msg, tc.field)
		}
	}
	for _, role := range append([]string{""}, engram.Roles...) {
		body := `{"namespace":` + ns + `,"episodes":[{"role":"` + role + `","content":"Role ` + role + ` is fine."}]}`
		if r := do(t, "POST", e.srv.URL+"/v1/episodes", body); r.Status != 201 && r.Status != 202 {
			t.Errorf("role %q: status %d; body %s", role, r.Status, r.Body)
		}
	}
	r := do(t, "GET", e.srv.URL+"/v1/episodes?org=o&project=p&user=ann", "")
	var got struct {
		Episodes []engram.Episode `json:"episodes"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if n, want := len(got.Episodes), len(engram.Roles)+1; n != want {
		t.Errorf("%d episodes stored, want %d (the refused batches stored some)", n, want)
	}
}

// TestAddSizes_OneTextOverItsLimit: one text longer than an episode or a
// memory may hold is told that limit and the field, not to send smaller
// batches, although the texts also exceed the limit per request.
func TestAddSizes_OneTextOverItsLimit(t *testing.T) {
	e := newEngineEnv(t, engramhttp.ServerOptions{MaxEmbedBytes: 100 << 10})
	big := strings.Repeat("a", 200<<10)
	for _, tc := range []struct{ path, body, field, what string }{
		{"/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"ann"},"episodes":[{"content":"short"},{"content":"` + big + `"}]}`, "episodes[1].content", "one episode's content"},
		{"/v1/memories", `{"namespace":{"org":"o","project":"p","user":"ann"},"memories":[{"kind":"semantic","value":"` + big + `"}]}`, "memories[0].value", "one memory's value"},
	} {
		r := do(t, "POST", e.srv.URL+tc.path, tc.body)
		if r.Status != 400 {
			t.Fatalf("%s: status %d, want 400; body %s", tc.path, r.Status, r.Body)
		}
		msg := errorOf(t, r).Error.Message
		if !strings.Contains(msg, tc.field) || !strings.Contains(msg, "65536 bytes of "+tc.what) || strings.Contains(msg, "smaller batches") {
			t.Errorf("%s: message %q, want %s and the limit of %s", tc.path, msg, tc.field, tc.what)
		}
	}
	// Texts each within their limit but over the request's total are told
	// the total's limit.
	var eps []string
	for range 3 {
		eps = append(eps, `{"content":"`+strings.Repeat("b", 60<<10)+`"}`)
	}
	r := do(t, "POST", e.srv.URL+"/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"ann"},"episodes":[`+strings.Join(eps, ",")+`]}`)
	if r.Status != 413 || !strings.Contains(errorOf(t, r).Error.Message, "--max-embed-bytes") {
		t.Errorf("a batch over the total: status %d, body %s", r.Status, r.Body)
	}
}

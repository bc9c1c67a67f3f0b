package http_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// TestOpenAPI_ErrorAnswers provokes, on every route of the real server,
// each client error that guards the routes give (401 without a key, 403 for
// a foreign Origin, 415 for a text/plain body, 413 for a body over the
// limit, 429 over the rate limit) and checks that the route's responses in
// openapi.json list the status exactly when the server gives it, with the
// error body schema.
func TestOpenAPI_ErrorAnswers(t *testing.T) {
	doc := loadOpenAPI(t)
	auth := newAuthEnv(t)
	limited, _ := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{RateLimit: 1e-6, RateBurst: 1})
	small, admin := newSmallEnv(t)
	do(t, "GET", limited.URL+"/v1/openapi.json", "") // spends the one request of the burst

	big := `{"namespace":{"org":"o","project":"p","user":"u"},"scope":{"org":"o","project":"p","user":"u"},"input":"` + strings.Repeat("x", 512) + `"}`
	for _, rt := range engramhttp.Routes(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{})) {
		path := strings.NewReplacer("{id}", engram.NewID()).Replace(rt.Path)
		if slices.ContainsFunc(rt.Params, func(p engramhttp.ParamInfo) bool { return p.Name == "org" }) {
			path += "?org=o&project=p&user=u"
		}
		hasBody := rt.Method == "POST" || rt.Method == "PATCH"
		body := ""
		if hasBody {
			body = "{}"
		}
		got := map[int]rawResponse{}
		for status, r := range map[int]rawResponse{
			401: do(t, rt.Method, auth.srv.URL+path, body),
			403: do(t, rt.Method, small.URL+path, body, "Origin", "https://evil.example", "Authorization", admin),
			415: do(t, rt.Method, small.URL+path, body, "Content-Type", "text/plain", "Authorization", admin),
			413: do(t, rt.Method, small.URL+path, big, "Content-Type", bodyType(rt.Path), "Authorization", admin),
			429: do(t, rt.Method, limited.URL+path, body),
		} {
			if r.Status == status {
				got[status] = r
			}
		}
		if _, ok := got[429]; ok && got[429].Header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 429 without Retry-After", rt.Method, rt.Path)
		}
		op := operation(t, doc, rt.Method, rt.Path)
		for _, status := range []int{401, 403, 413, 415, 429} {
			_, gives := got[status]
			resp, lists := op[strconv.Itoa(status)]
			switch {
			case gives && !lists:
				t.Errorf("%s %s answers %d, which openapi.json does not list", rt.Method, rt.Path, status)
			case lists && !gives:
				t.Errorf("%s %s: openapi.json lists %d, which the server did not give", rt.Method, rt.Path, status)
			case lists && !refersToError(t, doc, resp):
				t.Errorf("%s %s: %d is not documented with the Error body", rt.Method, rt.Path, status)
			}
		}
	}
}

// newSmallEnv is a real engine behind a real server that requires keys,
// with an embedder and bodies limited to 64 bytes; it returns the server
// and the Authorization header of an admin key bound to o/p.
func newSmallEnv(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	_, secret, err := keys.CreateKey(context.Background(), engram.KeySpec{Namespace: engram.Namespace{Org: "o", Project: "p"}, Role: engram.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{
		Logger: discardLogger(), Keys: keys, MaxBodyBytes: 64, MaxImportBytes: 64, MaxResourceBytes: 64, Embedder: &fakeEmbedder{dim: 4},
	}))
	t.Cleanup(srv.Close)
	return srv, "Bearer " + secret
}

// bodyType is the media type of a route's body.
func bodyType(path string) string {
	if path == "/v1/import" {
		return engramhttp.NDJSONType
	}
	if path == "/v1/resources" {
		return "multipart/form-data; boundary=x"
	}
	return "application/json"
}

// operation returns the responses of an operation of openapi.json.
func operation(t *testing.T, doc openAPIDoc, method, path string) map[string]json.RawMessage {
	t.Helper()
	var op struct {
		Responses map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(doc.Paths[path][strings.ToLower(method)], &op); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return op.Responses
}

// refersToError reports whether a response, directly or through a
// components.responses $ref, has an application/json body of the Error
// schema.
func refersToError(t *testing.T, doc openAPIDoc, raw json.RawMessage) bool {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if ref, ok := r["$ref"].(string); ok {
		r = doc.Components.Responses[strings.TrimPrefix(ref, "#/components/responses/")]
	}
	content, _ := r["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	return schema["$ref"] == "#/components/schemas/Error"
}

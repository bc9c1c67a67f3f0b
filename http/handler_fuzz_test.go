package http_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// FuzzHandler sends arbitrary bodies and query strings to every route of a
// server in front of the fake service: whatever the request, the answer is
// never a 5xx (a panic in a handler is answered 500, so this catches those
// too), and an error answer is in the error shape.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		"", "{}", "null", `{"namespace":{"org":"acme","project":"app","user":"u1"},"episodes":[{"role":"user","content":"hi"}]}`,
		`{"scope":{"org":"acme","project":"app"},"query":"tea"}`, `{"version":1}`, `{"input":"x"}`,
		`{"type":"memory","memory":{}}` + "\n", "{\xff}", `{"k":1e999}`,
	} {
		f.Add([]byte(s), "org=acme&project=app&user=u1", uint8(0))
	}
	f.Add([]byte("{}"), "meta.k=%7B&limit=-1", uint8(4))
	f.Add([]byte(`{"reason":"x"}`), "hard=1&include_shared=0", uint8(11))

	svc := &fakeService{}
	srv := engramhttp.NewServer(svc, engramhttp.ServerOptions{Logger: discardLogger(), Embedder: &fakeEmbedder{dim: 4}})
	routes := engramhttp.Routes(srv)
	id := engram.NewID()
	f.Fuzz(func(t *testing.T, body []byte, rawQuery string, which uint8) {
		rt := routes[int(which)%len(routes)]
		u := &url.URL{Path: strings.ReplaceAll(rt.Path, "{id}", id), RawQuery: rawQuery}
		req, err := http.NewRequest(rt.Method, u.String(), bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Host = "localhost"
		ct := "application/json"
		if rt.Path == "/v1/import" {
			ct = engramhttp.NDJSONType
		}
		req.Header.Set("Content-Type", ct)
		svc.mu.Lock()
		svc.calls = nil // keep memory flat over millions of runs
		svc.mu.Unlock()
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s with body %q: status %d: %s", rt.Method, u, body, w.Code, w.Body.Bytes())
		}
		if w.Code >= 400 {
			errorOf(t, rawResponse{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()})
		}
	})
}

package ui_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/ui"
)

// Behind a server with API keys, as engram serve mounts it: the pages load
// without a key under the strict CSP, the API still needs one.
func TestHandler(t *testing.T) {
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{AccessFlush: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{
		Keys: engram.Keys{Store: eng.Store()}, Logger: slog.New(slog.DiscardHandler),
		Mounts: []engramhttp.Mount{{Pattern: ui.Prefix, Handler: ui.Handler(), Static: true}},
	}))
	t.Cleanup(srv.Close)
	get := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		res, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, c := range []struct{ path, ctype, has string }{
		{"/ui/", "text/html", `<script type="module" src="app.js">`},
		{"/ui/app.js", "javascript", "hashchange"},
		{"/ui/pages/search.js", "javascript", "/v1/search"},
		{"/ui/app.css", "text/css", "--accent"},
	} {
		res, body := get("GET", c.path)
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), c.ctype) || !strings.Contains(body, c.has) {
			t.Errorf("GET %s without a key: %d %s, body has %q: %v", c.path, res.StatusCode, res.Header.Get("Content-Type"), c.has, strings.Contains(body, c.has))
		}
		if got := res.Header.Get("Content-Security-Policy"); got != ui.CSP || !strings.HasPrefix(got, "default-src 'self'") {
			t.Errorf("GET %s: CSP %q", c.path, got)
		}
	}
	if res, _ := get("GET", "/ui"); res.StatusCode/100 != 3 || res.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d to %q, want a redirect to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := get("GET", "/ui/nope.js"); res.StatusCode != 404 {
		t.Errorf("GET a missing file: %d, want 404", res.StatusCode)
	}
	if res, _ := get("POST", "/ui/"); res.StatusCode != 401 {
		t.Errorf("POST /ui/ without a key: %d, want 401", res.StatusCode)
	}
	if res, _ := get("GET", "/v1/scopes?org=acme&project=app"); res.StatusCode != 401 {
		t.Errorf("GET /v1/scopes without a key: %d, want 401", res.StatusCode)
	}
}

// TestHandler_Method: without keys, a write method on the dashboard's
// files answers 405 with the API's error shape and code.
func TestHandler_Method(t *testing.T) {
	srv := httptest.NewServer(engramhttp.NewServer(nil, engramhttp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
		Mounts: []engramhttp.Mount{{Pattern: ui.Prefix, Handler: ui.Handler(), Static: true}},
	}))
	t.Cleanup(srv.Close)
	res, err := http.Post(srv.URL+"/ui/app.js", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(b), `"code":"method_not_allowed"`) {
		t.Errorf("POST /ui/app.js: %d, Allow %q, body %s", res.StatusCode, res.Header.Get("Allow"), b)
	}
}

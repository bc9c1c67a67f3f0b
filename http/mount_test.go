package http_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// A mounted handler runs only after the server's checks, and sees the
// request's key and actor.
func TestMount_Checks(t *testing.T) {
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	var calls int
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		k := engramhttp.KeyFrom(r.Context())
		if err := engramhttp.CheckBinding(k, engram.Namespace{Org: "acme", Project: "app", User: r.URL.Query().Get("user")}); err != nil {
			engramhttp.WriteError(w, r, err)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			engramhttp.WriteError(w, r, engram.Errorf(engram.ETOOLARGE, "body: %v", err))
			return
		}
		_, _ = io.WriteString(w, engram.ActorFrom(r.Context())+" "+k.User+" "+string(b))
	})
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{
		Logger: discardLogger(), Keys: keys, MaxBodyBytes: 64,
		Mounts: []engramhttp.Mount{{Pattern: "/x/", Handler: echo, Role: engram.RoleWrite}},
	}))
	t.Cleanup(srv.Close)
	e := &authEnv{srv: srv, keys: keys}
	read := e.key(t, "acme", "app", "ann", engram.RoleRead)
	write := e.key(t, "acme", "app", "ann", engram.RoleWrite)

	wantError(t, "no key", e.call(t, "", "POST", "/x/a", "hi"), http.StatusUnauthorized, engram.EUNAUTHORIZED, "API key")
	wantError(t, "read key", e.call(t, read, "POST", "/x/a", "hi"), http.StatusForbidden, engram.EFORBIDDEN, "role")
	wantError(t, "other user", e.call(t, write, "POST", "/x/a?user=bob", "hi"), http.StatusForbidden, engram.EFORBIDDEN, "user")
	wantError(t, "long body", e.call(t, write, "POST", "/x/a?user=ann", string(make([]byte, 100))), http.StatusRequestEntityTooLarge, engram.ETOOLARGE, "body")
	if calls != 2 {
		t.Fatalf("handler ran %d times, want 2 (only the calls past the server's checks)", calls)
	}
	r := do(t, "POST", srv.URL+"/x/a?user=ann", "hi", "Authorization", "Token "+write, engramhttp.ActorHeader, "bot")
	if r.Status != 200 || string(r.Body) != "bot ann hi" {
		t.Fatalf("got %d %q, want 200 \"bot ann hi\"", r.Status, r.Body)
	}
}

// A Static mount's GET and HEAD are served without an API key (the
// dashboard's sign-in page loads), its other methods and every REST route
// still need one.
func TestMount_Static(t *testing.T) {
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "page "+r.URL.Path)
	})
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{
		Logger: discardLogger(), Keys: keys,
		Mounts: []engramhttp.Mount{{Pattern: "/ui/", Handler: files, Static: true}, {Pattern: "/y/", Handler: files}},
	}))
	t.Cleanup(srv.Close)
	e := &authEnv{srv: srv, keys: keys}
	if r := e.call(t, "", "GET", "/ui/app.js", ""); r.Status != 200 || string(r.Body) != "page /ui/app.js" {
		t.Fatalf("GET /ui/app.js without a key: %d %q, want 200", r.Status, r.Body)
	}
	if r := e.call(t, "", "HEAD", "/ui/", ""); r.Status != 200 {
		t.Fatalf("HEAD /ui/ without a key: %d, want 200", r.Status)
	}
	wantError(t, "POST to a static mount", e.call(t, "", "POST", "/ui/x", "hi"), http.StatusUnauthorized, engram.EUNAUTHORIZED, "API key")
	wantError(t, "a mount not static", e.call(t, "", "GET", "/y/x", ""), http.StatusUnauthorized, engram.EUNAUTHORIZED, "API key")
	wantError(t, "a REST route", e.call(t, "", "GET", "/v1/memories?org=acme&project=app", ""), http.StatusUnauthorized, engram.EUNAUTHORIZED, "API key")
	wantError(t, "scopes", e.call(t, "", "GET", "/v1/scopes", ""), http.StatusUnauthorized, engram.EUNAUTHORIZED, "API key")
	wantError(t, "a path beside the mount", e.call(t, "", "GET", "/uix", ""), http.StatusUnauthorized, engram.EUNAUTHORIZED, "API key")
}

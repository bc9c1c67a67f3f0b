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

package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/internal/netproxy"
	"github.com/jackc/pgx/v5"
)

// serveBehindCutProxy starts engram serve over the PostgreSQL database at
// store, reached through a loopback proxy that starts cut (the database
// unreachable); px.Restore() lets it through.
func serveBehindCutProxy(t *testing.T, store string) (*server, *netproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	px := netproxy.Start(t, u.Host)
	px.Cut()
	u.Host = px.Addr
	return startServer(t, t.TempDir(), append(baseEnv(t), "ENGRAM_STORE="+u.String())), px
}

// errorBody is the JSON body of an error response.
type errorBody struct {
	Error struct{ Code, Message string } `json:"error"`
}

// httpCall sends a request and returns the status and the decoded error
// body, if any.
func httpCall(t *testing.T, method, u, body string) (int, errorBody) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var eb errorBody
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(raw, &eb); err != nil {
			t.Fatalf("%s %s: %d with a body that is not an error: %s", method, u, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, eb
}

// TestServeUnreachableDatabase: a server whose PostgreSQL database cannot
// be reached at start listens anyway, is alive but not ready, answers every
// API call with 503 and a sentence, names its store in the log without the
// password, and shuts down cleanly.
func TestServeUnreachableDatabase(t *testing.T) {
	t.Parallel()
	addr := netproxy.ClosedAddr(t)
	store := "postgres://engram:s3cret@" + addr + "/engram?connect_timeout=3&password=s3cret"
	srv := startServer(t, t.TempDir(), append(baseEnv(t), "ENGRAM_STORE="+store))

	if code, _ := httpCall(t, "GET", srv.url+"/healthz", ""); code != 200 {
		t.Errorf("/healthz = %d, want 200", code)
	}
	calls := []struct{ method, path, body string }{
		{"GET", "/readyz", ""},
		{"POST", "/v1/memories", `{"namespace":{"org":"acme","project":"app","user":"ana"},"memories":[{"value":"lost"}]}`},
		{"POST", "/v1/episodes", `{"namespace":{"org":"acme","project":"app","user":"ana"},"episodes":[{"content":"lost"}]}`},
		{"GET", "/v1/memories?org=acme&project=app&user=ana", ""},
		{"POST", "/v1/search", `{"scope":{"org":"acme","project":"app","user":"ana"},"query":"anything"}`},
		{"GET", "/v1/memories/01J00000000000000000000000?org=acme&project=app&user=ana", ""},
		{"DELETE", "/v1/scope?org=acme&project=app&user=ana", ""},
	}
	for _, c := range calls {
		code, eb := httpCall(t, c.method, srv.url+c.path, c.body)
		if code != http.StatusServiceUnavailable || eb.Error.Code != engram.EUNAVAILABLE {
			t.Errorf("%s %s = %d %+v, want 503 unavailable", c.method, c.path, code, eb)
			continue
		}
		if msg := eb.Error.Message; !strings.Contains(msg, "the database at "+addr+" is unreachable") || strings.Contains(msg, "s3cret") {
			t.Errorf("%s %s says %q; want the reason, naming %s, without the password", c.method, c.path, msg, addr)
		}
	}
	if srv.cmd.ProcessState != nil {
		t.Fatalf("the server exited:\n%s", srv.logs.String())
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	logs := srv.logs.String()
	if want := "store=postgres://engram@" + addr + "/engram"; !strings.Contains(logs, want) {
		t.Errorf("logs do not name the store (%s):\n%s", want, logs)
	}
	if strings.Contains(logs, "s3cret") {
		t.Errorf("logs show the password:\n%s", logs)
	}
}

// TestServeLogNamesSQLiteStore: the start log names the SQLite file.
func TestServeLogNamesSQLiteStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startServer(t, dir, baseEnv(t))
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if want := "store=sqlite:" + filepath.Join(dir, "engram.db"); !strings.Contains(srv.logs.String(), want) {
		t.Errorf("logs do not say %q:\n%s", want, srv.logs.String())
	}
}

// TestServeWaitsForDatabase: a server started before its database is
// reachable becomes ready once it is, applying the migrations, and then
// serves writes.
func TestServeWaitsForDatabase(t *testing.T) {
	store := pgSchemaURL(t)
	srv, px := serveBehindCutProxy(t, store)
	c := engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "app", User: "ana"}

	if err := c.Ready(ctx); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("ready before the database is reachable: %v, want unavailable", err)
	}
	if _, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "too early"}}}); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("write before the database is reachable: %v, want unavailable", err)
	}

	px.Restore()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Ready(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready 30s after the database became reachable: %v\n%s", err, srv.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	ms, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "Ana keeps bees on her roof"}}})
	if err != nil {
		t.Fatalf("write once ready: %v", err)
	}
	p, err := c.ListMemories(ctx, engram.ScopeOf(ns), engram.MemoryFilter{})
	if err != nil || len(p.Memories) != 1 || p.Memories[0].ID != ms[0].ID {
		t.Errorf("memories = %+v, %v; want only the one written once ready", p, err)
	}
	// The server applied the migrations when it connected.
	mc := &cli{t: t, env: baseEnv(t)}
	if got, want := mc.ok("migrate", "--store", store), "up to date\n"; got != want {
		t.Errorf("migrate after the server connected printed %q, want %q", got, want)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d:\n%s", code, srv.logs.String())
	}
}

// TestStoreOrServer: naming both a database and a server is a usage error;
// a flag beats the other's variable.
func TestStoreOrServer(t *testing.T) {
	t.Parallel()
	addr := netproxy.ClosedAddr(t)
	store := "postgres://u:pw@" + addr + "/db?connect_timeout=3"
	server := "http://" + addr
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr string
	}{
		{"both flags", nil, []string{"list", "--store", store, "--server", server}, 2, "give either --store or --server, not both"},
		{"both variables", []string{"ENGRAM_STORE=" + store, "ENGRAM_SERVER=" + server}, []string{"list"}, 2, "ENGRAM_SERVER and ENGRAM_STORE are both set"},
		// The store flag wins over ENGRAM_SERVER: the error is the database's.
		{"store flag", []string{"ENGRAM_SERVER=" + server}, []string{"list", "--store", store}, 1, "the database at " + addr + " is unreachable"},
		// The server flag wins over ENGRAM_STORE: the error is the server's.
		{"server flag", []string{"ENGRAM_STORE=" + store}, []string{"list", "--server", server}, 1, addr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cli{t: t, env: append(baseEnv(t), tc.env...)}
			stderr := c.fail(tc.code, tc.args...)
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not say %q", stderr, tc.stderr)
			}
			if tc.name == "server flag" && strings.Contains(stderr, "database") {
				t.Errorf("stderr %q is about the database, but --server was given", stderr)
			}
		})
	}
}

// TestReembedStoreFlags: reembed works on the store --store or
// ENGRAM_STORE names, not on the data directory.
func TestReembedStoreFlags(t *testing.T) {
	t.Parallel()
	addr := netproxy.ClosedAddr(t)
	store := "postgres://u:pw@" + addr + "/db?connect_timeout=3"
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite"), extra: []string{"--data", t.TempDir()}}
	if stderr := c.fail(1, "reembed", "--store", store); !strings.Contains(stderr, "the database at "+addr+" is unreachable") {
		t.Errorf("reembed --store: %q does not say the database is unreachable", stderr)
	}
	c.env = append(c.env, "ENGRAM_STORE="+store)
	if stderr := c.fail(1, "reembed"); !strings.Contains(stderr, "the database at "+addr+" is unreachable") {
		t.Errorf("reembed with ENGRAM_STORE: %q does not say the database is unreachable", stderr)
	}
	if stderr := c.fail(2, "reembed", "--store", "mysql://u:pw@h/db"); !strings.Contains(stderr, "postgres://") || strings.Contains(stderr, "pw@") {
		t.Errorf("reembed --store mysql://: %q", stderr)
	}
}

// TestReembedPostgres: a PostgreSQL store filled without an embedder is
// refused with one until reembed --store embeds it.
func TestReembedPostgres(t *testing.T) {
	store := pgSchemaURL(t)
	plain := &cli{t: t, env: append(baseEnv(t), "ENGRAM_STORE="+store), extra: []string{"--data", t.TempDir()}}
	plain.ok("add", "--memory", "--user", "ann", "Ann plays the cello in a quartet")
	plain.env = append(plain.env, "ENGRAM_EMBEDDER=use-lite")
	if r := plain.run("search", "--user", "ann", "music instrument"); r.code != 1 || !strings.Contains(r.stderr, "engram reembed") {
		t.Fatalf("search with a new embedder: exit %d, stderr %q", r.code, r.stderr)
	}
	// --store on the command line, the variable unset.
	flags := &cli{t: t, env: append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite"), extra: []string{"--data", t.TempDir()}}
	if out := flags.ok("reembed", "--store", store); !strings.Contains(out, "re-embedded 1 active memories with use-lite") {
		t.Errorf("reembed said %q", out)
	}
	var sr engram.SearchResult
	plain.json(&sr, "search", "--user", "ann", "--explain", "which instrument does she play")
	if len(sr.Hits) != 1 {
		t.Fatalf("search after reembed = %+v", sr.Hits)
	}
	dense := false
	for _, ch := range sr.Hits[0].Explain {
		dense = dense || ch.Channel == "dense"
	}
	if !dense {
		t.Errorf("hit not found by the dense channel after reembed: %+v", sr.Hits[0].Explain)
	}
}

// TestServeStopsOnSchemaNewer: a server waiting for its database stops
// with exit status 1 when the database it reaches has a schema newer than
// it knows, since retrying cannot fix that.
func TestServeStopsOnSchemaNewer(t *testing.T) {
	store := pgSchemaURL(t)
	conn, err := pgx.Connect(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')",
	} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(context.Background())
	srv, px := serveBehindCutProxy(t, store)
	if code, _ := httpCall(t, "GET", srv.url+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while the database is unreachable = %d, want 503", code)
	}
	px.Restore()
	select {
	case err := <-srv.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("server ended with %v, want exit status 1", err)
		}
		if logs := srv.logs.String(); !strings.Contains(logs, "newer than the") {
			t.Errorf("logs do not say the schema is newer:\n%s", logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the server still runs 30s after reaching a database with a newer schema:\n%s", srv.logs.String())
	}
}

package main_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/internal/netproxy"
	"github.com/jackc/pgx/v5"
)

// pgSchemaURL returns the URL of the test PostgreSQL database
// (ENGRAM_TEST_POSTGRES_URL, set by scripts/pg.sh) with a search_path
// selecting a new empty schema, dropped when the test ends. Without the
// variable the test is skipped, unless ENGRAM_REQUIRE_POSTGRES=1.
func pgSchemaURL(t *testing.T) string {
	t.Helper()
	raw := os.Getenv("ENGRAM_TEST_POSTGRES_URL")
	if raw == "" {
		if os.Getenv("ENGRAM_REQUIRE_POSTGRES") == "1" {
			t.Fatal("ENGRAM_TEST_POSTGRES_URL is not set but ENGRAM_REQUIRE_POSTGRES=1; run the tests through scripts/pg.sh")
		}
		t.Skip("ENGRAM_TEST_POSTGRES_URL is not set; run through scripts/pg.sh to test against PostgreSQL")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	defer conn.Close(ctx)
	name := "cli_" + strings.ToLower(engram.NewID())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), raw)
		if err != nil {
			t.Errorf("drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestMigrateUsage(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	if usage := c.ok("help", "migrate"); !strings.HasPrefix(usage, "Usage: engram migrate") || !strings.Contains(usage, "ENGRAM_STORE") {
		t.Errorf("help migrate:\n%s", usage)
	}
	for _, args := range [][]string{
		{"migrate"},
		{"migrate", "--store", "/var/lib/engram"},
		{"migrate", "--store", "mysql://u:secret@h/db"},
		{"migrate", "--store", "postgres://u:secret@h/db", "extra"},
	} {
		stderr := c.fail(2, args...)
		if !strings.Contains(stderr, "store") && !strings.Contains(stderr, "arguments") {
			t.Errorf("engram %s: stderr %q does not say what is wrong", strings.Join(args, " "), stderr)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("engram %s: stderr %q shows the password", strings.Join(args, " "), stderr)
		}
	}
}

func TestMigrateUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_STORE=postgres://u:secret@"+addr+"/db?connect_timeout=3")}
	stderr := c.fail(1, "migrate")
	if !strings.Contains(stderr, "the database at "+addr+" is unreachable") {
		t.Errorf("stderr %q does not say the database at %s is unreachable", stderr, addr)
	}
	if strings.Contains(stderr, "secret") {
		t.Errorf("stderr %q shows the password", stderr)
	}
}

func TestMigrate(t *testing.T) {
	store := pgSchemaURL(t)
	c := &cli{t: t, env: baseEnv(t)}
	names, err := filepath.Glob("../../postgres/migrations/*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("list migrations: %v", err)
	}
	var want strings.Builder
	for _, n := range names {
		want.WriteString("applied " + filepath.Base(n) + "\n")
	}
	if got, want := c.ok("migrate", "--store", store), want.String(); got != want {
		t.Errorf("first migrate printed %q, want %q", got, want)
	}
	withEnv := &cli{t: t, env: append(baseEnv(t), "ENGRAM_STORE="+store)}
	if got, want := withEnv.ok("migrate"), "up to date\n"; got != want {
		t.Errorf("second migrate printed %q, want %q", got, want)
	}
	// The data commands work on the migrated store.
	local := &cli{t: t, env: append(baseEnv(t), "ENGRAM_STORE="+store), extra: []string{"--data", t.TempDir()}}
	local.ok("add", "--memory", "Ana's sister works as a pharmacist in Porto")
	if out := local.ok("search", "pharmacist"); !strings.Contains(out, "Porto") {
		t.Errorf("search through --store found:\n%s", out)
	}
}

// TestTwoServersOverPostgres runs two engram servers over one database:
// what one acknowledges, the other serves at once, by id, in lists, and
// through both search channels; what one deletes, the other stops serving
// at once.
func TestTwoServersOverPostgres(t *testing.T) {
	store := pgSchemaURL(t)
	env := append(baseEnv(t), "ENGRAM_STORE="+store, "ENGRAM_EMBEDDER=use-lite")
	a := startServer(t, t.TempDir(), env)
	b := startServer(t, t.TempDir(), env)
	ca := engramhttp.NewClient(a.url, engramhttp.ClientOptions{})
	cb := engramhttp.NewClient(b.url, engramhttp.ClientOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "app", User: "ana"}
	s := engram.ScopeOf(ns)

	search := func(c *engramhttp.Client, q string, channels ...string) []string {
		t.Helper()
		res, err := c.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 10, Channels: channels})
		if err != nil {
			t.Fatalf("search %q %v: %v", q, channels, err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.Memory.ID)
		}
		return ids
	}
	list := func(c *engramhttp.Client) []string {
		t.Helper()
		p, err := c.ListMemories(ctx, s, engram.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range p.Memories {
			ids = append(ids, m.ID)
		}
		return ids
	}

	// Both servers have searched once, so each holds a loaded dense index
	// that only the change log can bring up to date.
	for _, c := range []*engramhttp.Client{ca, cb} {
		if got := search(c, "anything at all", engine.ChannelDense); len(got) != 0 {
			t.Fatalf("dense search of an empty store = %v", got)
		}
	}
	ms, err := ca.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{
		{Value: "Ana is allergic to peanuts and shellfish"},
		{Value: "Ana's brother plays the violin in an orchestra"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	allergy, violin := ms[0], ms[1]

	// Written through A, served by B right away.
	if got, err := cb.GetMemory(ctx, s, allergy.ID); err != nil || got.Value != allergy.Value {
		t.Errorf("B's GetMemory right after A's write = %+v, %v", got, err)
	}
	if got := list(cb); !slices.Contains(got, allergy.ID) || !slices.Contains(got, violin.ID) {
		t.Errorf("B's list right after A's write = %v", got)
	}
	if got := search(cb, "peanuts", "bm25"); !slices.Equal(got, []string{allergy.ID}) {
		t.Errorf("B's BM25 search right after A's write = %v, want %v", got, []string{allergy.ID})
	}
	if got := search(cb, "what is Ana allergic to", engine.ChannelDense); len(got) == 0 || got[0] != allergy.ID {
		t.Errorf("B's dense search right after A's write = %v, want %s first", got, allergy.ID)
	}

	// Changed through B, served changed by A.
	newValue := "Ana's brother plays the cello in a string quartet"
	if _, err := cb.UpdateMemory(ctx, s, violin.ID, engram.MemoryPatch{Value: &newValue}); err != nil {
		t.Fatal(err)
	}
	if got, err := ca.GetMemory(ctx, s, violin.ID); err != nil || got.Value != newValue {
		t.Errorf("A's GetMemory right after B's update = %+v, %v", got, err)
	}
	if got := search(ca, "cello", "bm25"); !slices.Equal(got, []string{violin.ID}) {
		t.Errorf("A's BM25 search for the new text = %v", got)
	}
	if got := search(ca, "violin", "bm25"); len(got) != 0 {
		t.Errorf("A's BM25 search for the old text = %v", got)
	}

	// Deleted through A (soft), gone from B's lists and searches at once;
	// purged through B, gone from A at once.
	if err := ca.DeleteMemory(ctx, s, allergy.ID, engram.DeleteOptions{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if got := list(cb); slices.Contains(got, allergy.ID) {
		t.Errorf("B lists a memory A deleted: %v", got)
	}
	if got := search(cb, "peanuts", "bm25"); len(got) != 0 {
		t.Errorf("B's BM25 search finds a memory A deleted: %v", got)
	}
	if got := search(cb, "what is Ana allergic to", engine.ChannelDense); slices.Contains(got, allergy.ID) {
		t.Errorf("B's dense search finds a memory A deleted: %v", got)
	}
	if err := cb.DeleteMemory(ctx, s, violin.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.GetMemory(ctx, s, violin.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("A's GetMemory of a memory B purged: %v, want not found", err)
	}
	if got := search(ca, "brother quartet cello", engine.ChannelDense); slices.Contains(got, violin.ID) {
		t.Errorf("A's dense search finds a memory B purged: %v", got)
	}

	// Episodes too.
	res, err := cb.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{
		{Role: "user", Content: "I moved to Lisbon last spring"}}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := ca.ListEpisodes(ctx, s, engram.EpisodeFilter{})
	if err != nil || len(page.Episodes) != 1 || page.Episodes[0].ID != res.Episodes[0].ID {
		t.Errorf("A's episodes after B's write = %+v, %v", page, err)
	}

	for _, srv := range []*server{a, b} {
		if code := srv.stop(t); code != 0 {
			t.Errorf("server exit code %d:\n%s", code, srv.logs.String())
		}
	}
}

// TestServerWithoutDatabase: a server whose database goes away reports
// not ready and refuses writes with 503 and a sentence, without exiting,
// and serves again when the database is back.
func TestServerWithoutDatabase(t *testing.T) {
	store := pgSchemaURL(t)
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	px := netproxy.Start(t, u.Host)
	u.Host = px.Addr
	srv := startServer(t, t.TempDir(), append(baseEnv(t), "ENGRAM_STORE="+u.String()))
	c := engramhttp.NewClient(srv.url, engramhttp.ClientOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "app", User: "ana"}
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("ready with the database there: %v", err)
	}

	px.Cut()
	err = c.Ready(ctx)
	if engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(engram.ErrorMessage(err), "unreachable") {
		t.Errorf("readiness without the database = %v, want unavailable, unreachable", err)
	}
	resp, err := http.Post(srv.url+"/v1/memories", "application/json",
		strings.NewReader(`{"namespace":{"org":"acme","project":"app","user":"ana"},"memories":[{"value":"lost"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "the database at "+px.Addr+" is unreachable") {
		t.Errorf("write without the database: %d %s, want 503 saying the database at %s is unreachable", resp.StatusCode, body, px.Addr)
	}
	if srv.cmd.ProcessState != nil {
		t.Fatalf("the server exited without its database:\n%s", srv.logs.String())
	}

	px.Restore()
	if err := c.Ready(ctx); err != nil {
		t.Errorf("ready after the database came back: %v", err)
	}
	ms, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "kept"}}})
	if err != nil {
		t.Fatalf("write after the database came back: %v", err)
	}
	p, err := c.ListMemories(ctx, engram.ScopeOf(ns), engram.MemoryFilter{})
	if err != nil || len(p.Memories) != 1 || p.Memories[0].ID != ms[0].ID {
		t.Errorf("memories after the outage = %+v, %v; want only the one written after it", p, err)
	}
}

package main_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPostgresDumpRestore follows docs/operations.md#backup-and-restore on
// PostgreSQL: pg_dump -Fc of the store's schema, the schema lost (renamed
// away), pg_restore into the database, and engram serve over the restored
// schema answers the searches as before, with its API key.
func TestPostgresDumpRestore(t *testing.T) {
	t.Parallel()
	store := pgSchemaURL(t)
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	libpq := u.String() // pg_dump and pg_restore take libpq's parameters only
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (the postgresql-client package)", tool)
		}
	}
	env := baseEnv(t)
	c := &cli{t: t, env: env}
	c.ok("keys", "create", "--store", store, "--org", "o", "--project", "p", "--role", "read", "--name", "kept")
	srv := startServer(t, t.TempDir(), env, "--store", store)
	var seeded struct{ Memories []struct{ ID string } }
	var mems []map[string]string
	for _, f := range []string{"Ann plays the cello on Sundays.", "Ich wohne seit Mai in Hamburg.", "Mi hermana vive en Sevilla.",
		"J'ai adopté un chat nommé Miso.", "我每天早上喝绿茶。", "Ann's dentist is Dr. Okafor."} {
		mems = append(mems, map[string]string{"kind": "semantic", "value": f})
	}
	if err := post(t, srv.url, "/v1/memories", map[string]any{"namespace": map[string]string{"org": "o", "project": "p", "user": "ann"}, "memories": mems}, &seeded); err != nil {
		t.Fatal(err)
	}
	queries := []string{"cello", "Hamburg", "Sevilla", "chat Miso", "绿茶", "dentist"}
	before := map[string][]string{}
	for _, query := range queries {
		before[query] = searchIDs(t, srv.url, "ann", query)
	}
	srv.stop(t)

	dump := filepath.Join(t.TempDir(), "engram.pgdump")
	if out, err := exec.Command("pg_dump", "-Fc", "-n", schema, "-f", dump, libpq).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, libpq)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER SCHEMA "+schema+" RENAME TO "+schema+"_lost"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+"_lost CASCADE") })
	if out, err := exec.Command("pg_restore", "--no-owner", "-d", libpq, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}

	back := startServer(t, t.TempDir(), env, "--store", store)
	for _, query := range queries {
		if got := searchIDs(t, back.url, "ann", query); len(got) == 0 || !slices.Equal(got, before[query]) {
			t.Errorf("search %q: restored %v, before %v", query, got, before[query])
		}
	}
	back.stop(t)
	if keys := c.ok("keys", "list", "--store", store, "--org", "o", "--project", "p"); !strings.Contains(keys, "kept") {
		t.Errorf("the API key is not in the restored schema: %s", keys)
	}
	_ = os.Remove(dump)
}

package storeopen_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storeopen"
)

func TestBackend(t *testing.T) {
	for _, tc := range []struct {
		name, loc, want, code string
	}{
		{"postgres URL", "postgres://u:secret@db.example/engram", storeopen.Postgres, ""},
		{"postgresql URL", "postgresql://db.example:5433/engram?sslmode=disable", storeopen.Postgres, ""},
		{"absolute directory", "/var/lib/engram", storeopen.SQLite, ""},
		{"relative directory", "data", storeopen.SQLite, ""},
		{"other scheme", "mysql://u:secret@h/db", "", engram.EINVALID},
		{"file URL", "file:///tmp/engram", "", engram.EINVALID},
		{"empty", "", "", engram.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := storeopen.Backend(tc.loc)
			if got != tc.want || engram.ErrorCode(err) != tc.code {
				t.Fatalf("Backend(%q) = %q, %v; want %q, code %q", tc.loc, got, err, tc.want, tc.code)
			}
			if strings.Contains(engram.ErrorMessage(err), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestOpenDataDirectory: a directory opens the SQLite store in its DBFile,
// created on demand unless MustExist is set.
func TestOpenDataDirectory(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := storeopen.Open(ctx, dir, storeopen.Options{MustExist: true}); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("MustExist over a missing directory: %v, want EINVALID", err)
	}
	st, err := storeopen.Open(ctx, dir, storeopen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, ok := st.(*sqlite.DB)
	if !ok {
		t.Fatalf("store is %T, want *sqlite.DB", st)
	}
	if got, want := db.Path(), storeopen.File(dir); got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = storeopen.Open(ctx, dir, storeopen.Options{MustExist: true})
	if err != nil {
		t.Fatalf("MustExist over an existing store: %v", err)
	}
	st.Close()
}

// TestOpenPostgresUnreachable: a PostgreSQL URL goes to the PostgreSQL
// backend, which reports a server that does not answer as EUNAVAILABLE (the
// SQLite backend would have made a directory named after the URL).
func TestOpenPostgresUnreachable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := storeopen.Open(ctx, "postgres://engram@127.0.0.1:1/engram?connect_timeout=2", storeopen.Options{})
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Fatalf("err = %v, want code %s", err, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("opening a URL wrote %s in the working directory", ents[0].Name())
	}
}

// TestEngineClosesStore: the engine storeopen.Engine returns owns its
// store, so the data directory can be opened again once it is closed.
func TestEngineClosesStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := storeopen.Engine(ctx, dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Store().Ready(ctx); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Errorf("store after the engine closed: Ready = %v, want EUNAVAILABLE", err)
	}
}

package postgres_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/postgres"
	"github.com/jackc/pgx/v5"
)

// TestResidue: after a hard delete, an episode delete and a scope purge,
// and the background rewrite they ask for, no file of the cluster's data
// directory holds the deleted text, except the
// write-ahead log in pg_wal, which PostgreSQL recycles on its own schedule
// (see README, "What delete removes"). The scan needs the data directory
// and a superuser to CHECKPOINT, which scripts/pg.sh exports.
func TestResidue(t *testing.T) {
	data, adminURL := os.Getenv("ENGRAM_TEST_POSTGRES_DATA"), os.Getenv("ENGRAM_TEST_POSTGRES_ADMIN_URL")
	if data == "" || adminURL == "" {
		t.Skip("ENGRAM_TEST_POSTGRES_DATA and ENGRAM_TEST_POSTGRES_ADMIN_URL are not set; run through scripts/pg.sh")
	}
	// The rewrite runs in the background, soon after the deletes here.
	db := openAt(t, schemaURL(t), postgres.Options{ScrubInterval: time.Millisecond})
	files := func(t *testing.T) []string {
		t.Helper()
		if err := db.ScrubWait(ctx); err != nil {
			t.Fatalf("wait for the scrub: %v", err)
		}
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			t.Fatalf("connect as superuser: %v", err)
		}
		defer conn.Close(ctx)
		// Written pages reach the files at a checkpoint.
		if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		var out []string
		for _, f := range enginetest.DirFiles(t, data) {
			if !strings.HasPrefix(f, filepath.Join(data, "pg_wal")+string(filepath.Separator)) {
				out = append(out, f)
			}
		}
		return out
	}
	enginetest.RunResidue(t, db, files)
}

// TestSensitiveResidue: after sealed writes no file of the cluster's data
// directory, the write-ahead log included (a sealed span never reaches the
// database), holds a sealed span. Like TestResidue it needs scripts/pg.sh.
func TestSensitiveResidue(t *testing.T) {
	data, adminURL := os.Getenv("ENGRAM_TEST_POSTGRES_DATA"), os.Getenv("ENGRAM_TEST_POSTGRES_ADMIN_URL")
	if data == "" || adminURL == "" {
		t.Skip("ENGRAM_TEST_POSTGRES_DATA and ENGRAM_TEST_POSTGRES_ADMIN_URL are not set; run through scripts/pg.sh")
	}
	db := openAt(t, schemaURL(t), postgres.Options{})
	files := func(t *testing.T) []string {
		t.Helper()
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			t.Fatalf("connect as superuser: %v", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		return enginetest.DirFiles(t, data)
	}
	enginetest.RunSensitiveResidue(t, db, files)
}

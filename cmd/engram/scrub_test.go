package main_test

import (
	"context"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/jackc/pgx/v5"
)

func TestScrubUsage(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	if usage := c.ok("help", "scrub"); !strings.HasPrefix(usage, "Usage: engram scrub") || !strings.Contains(usage, "engram_scrub_interval") {
		t.Errorf("help scrub:\n%s", usage)
	}
	for _, args := range [][]string{
		{"scrub"},
		{"scrub", "--store", "/var/lib/engram"},
		{"scrub", "--store", "postgres://u:secret@h/db", "extra"},
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

// TestScrub: after a hard delete on a store whose servers never scrub on
// their own, engram scrub rewrites it, and the rewrite is recorded for the
// servers' interval; a bad engram_scrub_interval is refused by name.
func TestScrub(t *testing.T) {
	store := pgSchemaURL(t)
	off := store + "&engram_scrub_interval=off"
	local := &cli{t: t, env: append(baseEnv(t), "ENGRAM_STORE="+off), extra: []string{"--data", t.TempDir()}}
	var mems engram.MemoryPage
	local.json(&mems, "add", "--memory", "Ana's sister works as a pharmacist in Porto")
	if len(mems.Memories) != 1 {
		t.Fatalf("add gave %+v", mems)
	}
	local.ok("delete", "--hard", mems.Memories[0].ID)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	stamp := func() string {
		var v string
		_ = conn.QueryRow(ctx, "SELECT value FROM meta WHERE key = 'scrub_started'").Scan(&v)
		return v
	}
	if s := stamp(); s != "" {
		t.Fatalf("a rewrite ran at %s with engram_scrub_interval=off", s)
	}
	c := &cli{t: t, env: baseEnv(t)}
	if got := c.ok("scrub", "--store", off); !strings.HasPrefix(got, "rewrote the tables that hold text in ") {
		t.Errorf("scrub printed %q", got)
	}
	if stamp() == "" {
		t.Error("engram scrub recorded no rewrite")
	}
	stderr := c.fail(1, "scrub", "--store", store+"&engram_scrub_interval=soon")
	if !strings.Contains(stderr, "engram_scrub_interval") {
		t.Errorf("a bad engram_scrub_interval: stderr %q does not name it", stderr)
	}
}

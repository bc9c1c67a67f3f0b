package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/jackc/pgx/v5"
)

// TestScrubIntervalParam: the URL's engram_scrub_interval sets the time
// between rewrites or turns them off, a bad value is refused naming the
// parameter, and the option wins over the URL.
func TestScrubIntervalParam(t *testing.T) {
	u := emptiedURL(t)
	for _, c := range []struct {
		value string
		opt   time.Duration
		want  time.Duration
	}{
		{"6h", 0, 6 * time.Hour},
		{"off", 0, -1},
		{"6h", time.Minute, time.Minute},
		{"", 0, postgres.DefaultScrubInterval},
	} {
		at := u
		if c.value != "" {
			at = withParam(t, u, postgres.ScrubIntervalParam, c.value)
		}
		db := openAt(t, at, postgres.Options{ScrubInterval: c.opt})
		if got := postgres.ScrubIntervalOf(db); got != c.want {
			t.Errorf("%s=%q, option %v: interval %v, want %v", postgres.ScrubIntervalParam, c.value, c.opt, got, c.want)
		}
	}
	for _, bad := range []string{"soon", "0s", "-1h"} {
		_, err := postgres.Open(ctx, withParam(t, u, postgres.ScrubIntervalParam, bad), postgres.Options{SkipMigrations: true, Logger: quiet})
		wantCode(t, "engram_scrub_interval="+bad, err, engram.EINVALID)
		if err != nil && !strings.Contains(err.Error(), postgres.ScrubIntervalParam) {
			t.Errorf("engram_scrub_interval=%s: %v does not name the parameter", bad, err)
		}
	}
	// Off: a delete's Scrub asks for nothing, so nothing runs.
	off := openAt(t, withParam(t, u, postgres.ScrubIntervalParam, "off"), postgres.Options{})
	if err := off.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	if err := off.ScrubWait(ctx); err != nil {
		t.Fatal(err)
	}
	if s := postgres.ScrubStarted(off); !s.IsZero() {
		t.Errorf("scrubbing is off, yet a rewrite began at %v", s)
	}
}

// TestScrubOncePerIntervalAcrossServers: two servers sharing a database
// rewrite at most once per interval between them, and a rewrite asked for
// within the interval runs once it has passed.
func TestScrubOncePerIntervalAcrossServers(t *testing.T) {
	u := emptiedURL(t)
	const interval = 700 * time.Millisecond
	a := openAt(t, u, postgres.Options{ScrubInterval: interval})
	b := openAt(t, u, postgres.Options{ScrubInterval: interval})
	if err := a.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.ScrubWait(ctx); err != nil {
		t.Fatal(err)
	}
	first := postgres.ScrubStarted(a)
	if first.IsZero() {
		t.Fatal("a's rewrite never began")
	}
	if err := b.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.ScrubWait(ctx); err != nil {
		t.Fatal(err)
	}
	second := postgres.ScrubStarted(b)
	// Clocks: the interval is counted by the database's, the starts by
	// this process's; both are this machine's.
	if gap := second.Sub(first); gap < interval-50*time.Millisecond {
		t.Errorf("b's rewrite began %v after a's, within the interval of %v", gap, interval)
	}
}

// TestScrubNowAndTheLock: while another server holds the store's rewrite
// lock, a background rewrite waits and runs once it is free; ScrubNow runs
// whatever the interval, even with rewrites off, after the lock is free.
func TestScrubNowAndTheLock(t *testing.T) {
	u := emptiedURL(t)
	other, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	const lock = "(x'656e6772'::int, hashtext(current_schema()))"
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock"+lock); err != nil {
		t.Fatal(err)
	}
	bg := openAt(t, u, postgres.Options{ScrubInterval: 100 * time.Millisecond})
	if err := bg.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	off := openAt(t, withParam(t, u, postgres.ScrubIntervalParam, "off"), postgres.Options{})
	now := make(chan error, 1)
	go func() { now <- off.ScrubNow(ctx) }()
	time.Sleep(400 * time.Millisecond)
	if s := postgres.ScrubStarted(bg); !s.IsZero() {
		t.Fatalf("a rewrite began at %v while another server held the lock", s)
	}
	select {
	case err := <-now:
		t.Fatalf("ScrubNow returned (%v) while another server held the lock", err)
	default:
	}
	freed := time.Now()
	if _, err := other.Exec(ctx, "SELECT pg_advisory_unlock"+lock); err != nil {
		t.Fatal(err)
	}
	if err := <-now; err != nil {
		t.Fatalf("ScrubNow: %v", err)
	}
	if s := postgres.ScrubStarted(off); s.Before(freed) {
		t.Errorf("ScrubNow's rewrite began at %v, before the lock was freed at %v", s, freed)
	}
	if err := bg.ScrubWait(ctx); err != nil {
		t.Fatal(err)
	}
	if s := postgres.ScrubStarted(bg); s.Before(freed) {
		t.Errorf("the background rewrite began at %v, before the lock was freed at %v", s, freed)
	}
	var stamp string
	if err := other.QueryRow(ctx, "SELECT value FROM meta WHERE key = 'scrub_started'").Scan(&stamp); err != nil || stamp == "" {
		t.Errorf("no rewrite recorded in meta: %q, %v", stamp, err)
	}
}

// TestScrubFailedAttemptCounts: a rewrite that gives up on a table's lock
// still counts for the interval, so neither this server nor another one
// copies the tables again until it has passed.
func TestScrubFailedAttemptCounts(t *testing.T) {
	u := emptiedURL(t)
	a := openAt(t, u, postgres.Options{ScrubInterval: time.Hour})
	b := openAt(t, u, postgres.Options{ScrubInterval: time.Hour})
	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE episodes IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	if err := a.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	// The attempt waits 2 s for the lock, then gives up.
	short, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	if err := a.ScrubWait(short); err == nil {
		t.Fatal("the rewrite finished while episodes was locked")
	}
	tx.Rollback(ctx)
	if postgres.ScrubStarted(a).IsZero() {
		t.Fatal("no rewrite was attempted")
	}
	if err := b.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if s := postgres.ScrubStarted(b); !s.IsZero() {
		t.Errorf("another server rewrote at %v, within the interval of the failed attempt", s)
	}
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/storeopen"
)

var scrubCommand = &Command{
	Name:     "scrub",
	Synopsis: "clear deleted rows from the PostgreSQL store's files now",
	Usage: `
Usage: engram scrub --store URL

Rewrites the tables of the PostgreSQL database at URL that hold text
(VACUUM FULL), so that the bytes of memories, episodes and the rest that
deletes removed leave the database's files, and prints how long it took.
Servers do this on their own, in the background, at most once per
engram_scrub_interval (a parameter of the store URL, default 1h, "off" for
never) counted across every server sharing the database. A rewrite locks
each table while copying it (about 42 s for 1M memories), and reads and
writes of that table wait, so on a large store set engram_scrub_interval=off
on the servers and run this command at a quiet hour instead. It waits for a
rewrite another server has under way, then runs its own.

SQLite stores need no scrub: a delete there clears the bytes at once.`,
	Run: runScrub,
}

// scrubber is a store that rewrites its files on demand (PostgreSQL).
type scrubber interface {
	ScrubNow(ctx context.Context) error
	Addr() string
}

func runScrub(ctx context.Context, m *Main, cmd *Command, args []string) error {
	st, err := openStoreCommand(ctx, m, cmd, args, storeopen.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	db, ok := st.(scrubber)
	if !ok {
		return engram.Errorf(engram.EINVALID, "the store at --store (%T) cannot be scrubbed", st)
	}
	start := time.Now()
	if err := db.ScrubNow(ctx); err != nil {
		return fmt.Errorf("scrub the PostgreSQL store at %s: %w", db.Addr(), err)
	}
	fmt.Fprintf(m.Stdout, "rewrote the tables that hold text in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

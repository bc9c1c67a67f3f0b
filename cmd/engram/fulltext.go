package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/storeopen"
)

var fulltextCommand = &Command{
	Name:     "fulltext",
	Synopsis: "show, or turn on or off, the store's full-text index of memories",
	Usage: `
Usage: engram fulltext [--data DIR | --store URL] [on|off]

Without an argument, prints whether the store keeps a full-text index of
memories in its database ("on" or "off"). With one, turns that index on or
off for every tenant and every server sharing the store.

Full-text search uses the engine's own in-memory index in every namespace
(tenant and user) of up to --text-index-limit memories, and the database's
index only above that. With the database's index off the in-memory index
serves every namespace, whatever its size (raise serve's --text-index-mb
to keep a large one in memory), writes no longer maintain the database's
index, and on PostgreSQL a scrub rewrite has one index fewer to rebuild.

off  SQLite drops the index in one write transaction; PostgreSQL drops it
     without blocking reads or writes (DROP INDEX CONCURRENTLY).
on   indexes every memory. SQLite does it in one write transaction, which
     holds other writes until it is done; PostgreSQL builds the index
     without blocking them (CREATE INDEX CONCURRENTLY).

Running servers see the change at their next search or write; the command
waits for a scrub rewrite under way on PostgreSQL.`,
	Run: runFulltext,
}

func runFulltext(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` (env ENGRAM_DATA)")
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "PostgreSQL `URL` of the store instead of the data directory (env ENGRAM_STORE)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	var set, on bool
	switch {
	case len(pos) > 1:
		return cmdUsageErrorf(cmd, "fulltext takes at most one argument, on or off; got %d", len(pos))
	case len(pos) == 1 && (pos[0] == "on" || pos[0] == "off"):
		set, on = true, pos[0] == "on"
	case len(pos) == 1:
		return cmdUsageErrorf(cmd, "fulltext's argument is on or off, not %q", pos[0])
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	loc := storeLocation(*data, *store)
	st, err := openStore(ctx, "--store", loc, storeopen.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("open %s: %w", storeName(loc), err)
	}
	defer st.Close()
	if set {
		start := time.Now()
		if err := st.SetFullTextIndexed(ctx, on); err != nil {
			return fmt.Errorf("turn the full-text index of %s %s: %w", storeName(loc), pos[0], err)
		}
		fmt.Fprintf(m.Stderr, "took %s\n", time.Since(start).Round(time.Millisecond))
	}
	var indexed bool
	err = st.View(ctx, func(r engram.Reader) error {
		indexed, err = r.FullTextIndexed(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("read the full-text index of %s: %w", storeName(loc), err)
	}
	fmt.Fprintln(m.Stdout, map[bool]string{true: "on", false: "off"}[indexed])
	return nil
}

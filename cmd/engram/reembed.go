package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"

	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storeopen"
)

var reembedCommand = &Command{
	Name:     "reembed",
	Synopsis: "re-embed every memory with another embedder",
	Usage: `
Usage: engram reembed [--data DIR | --store URL] [--embedder KIND ...] [--progress]

Moves a local data directory, or with --store (env ENGRAM_STORE) the
PostgreSQL database at URL, to the configured embedder: embeds the
abstraction and value of every active memory with it, then removes the
vectors of the previous embedder and records the new one. Engines refuse a
store whose vectors another embedder made; this is the way to switch.

Progress is committed every few hundred memories: an interrupted run
(error, Ctrl-C, kill) continues where it stopped when started again with the
same embedder. Stop servers using the store while it runs. With --store the
data directory holds only the embedding cache.`,
	Run: runReembed,
}

func runReembed(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` (env ENGRAM_DATA)")
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "re-embed the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	progress := fs.Bool("progress", false, "show a progress bar even when stderr is not a terminal")
	var ef embedFlags
	ef.register(fs, m.Getenv)
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "reembed takes no arguments, got %q", pos[0])
	}
	if ef.kind == embedNone {
		return cmdUsageErrorf(cmd, "--embedder none has no vectors to make")
	}
	if *store != "" {
		if err := checkStoreURL(cmd, *store); err != nil {
			return err
		}
	} else if _, err := os.Stat(*data); errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("data directory %s does not exist", *data)
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := os.MkdirAll(*data, 0o700); err != nil {
		return fmt.Errorf("create data directory %s: %w", *data, err)
	}
	emb, closeEmb, err := ef.open(ctx, cacheFile(*data), logger)
	if err != nil {
		return err
	}
	defer closeEmb()
	loc := storeLocation(*data, *store)
	db, err := openStore(ctx, "--store", loc, storeopen.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("open %s: %w", storeName(loc), err)
	}
	defer db.Close()

	var report func(int)
	if *progress || m.StderrIsTerminal {
		bar := newBar(m.Stderr, -1, "re-embedding memories", false)
		defer bar.Finish()
		report = func(n int) { bar.Set(n) }
	}
	stats, err := engine.Reembed(ctx, db, emb, report)
	if err != nil {
		return fmt.Errorf("reembed (run it again to resume): %w", err)
	}
	from := "no embedder"
	if stats.From != nil {
		from = fmt.Sprintf("%s (%d dimensions)", stats.From.Name, stats.From.Dim)
	}
	resumed := ""
	if stats.Resumed {
		resumed = ", resuming an interrupted run"
	}
	fmt.Fprintf(m.Stdout, "re-embedded %d active memories with %s (%d dimensions), moving from %s%s; removed %d old vectors\n",
		stats.Memories, stats.To.Name, stats.To.Dim, from, resumed, stats.Removed)
	return nil
}

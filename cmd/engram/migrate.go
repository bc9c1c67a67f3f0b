package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/postgres"
)

var migrateCommand = &Command{
	Name:     "migrate",
	Synopsis: "apply the PostgreSQL store's schema migrations",
	Usage: `
Usage: engram migrate --store URL

Connects to the PostgreSQL database at URL
(postgres://USER:PASSWORD@HOST:PORT/DATABASE) and applies the schema
migrations it has not seen yet, printing "applied NAME" for each, or "up to
date" when there was nothing to do. Servers started with --store apply them
too; this command deploys the schema ahead of them. Several runs and servers
may start at once: migrations take an advisory lock and each is applied
exactly once.

Give the URL in ENGRAM_STORE rather than on the command line, or leave the
password out of it and set PGPASSWORD, to keep the password out of process
listings.`,
	Run: runMigrate,
}

func runMigrate(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "PostgreSQL `URL` (env ENGRAM_STORE)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "migrate takes no arguments, got %q", pos[0])
	}
	if err := checkStoreURL(cmd, *store); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := postgres.Open(ctx, *store, postgres.Options{SkipMigrations: true, Logger: logger})
	if err != nil {
		return fmt.Errorf("open the PostgreSQL store: %w", err)
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	for _, name := range applied {
		fmt.Fprintf(m.Stdout, "applied %s\n", name)
	}
	if err != nil {
		return fmt.Errorf("migrate the PostgreSQL store at %s: %w", db.Addr(), err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(m.Stdout, "up to date")
	}
	return nil
}

// checkStoreURL refuses a missing --store or one that is not a PostgreSQL
// URL, without echoing it (it may hold a password).
func checkStoreURL(cmd *Command, url string) error {
	if url == "" {
		return cmdUsageErrorf(cmd, "--store (or ENGRAM_STORE) is required: the URL of a PostgreSQL database")
	}
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return cmdUsageErrorf(cmd, "--store must be a postgres:// or postgresql:// URL")
	}
	return nil
}

// openPostgresEngine opens the engine over the PostgreSQL store at url,
// applying its migrations. Closing the returned engine's closer closes the
// store as well.
func openPostgresEngine(ctx context.Context, url string, opts engine.Options) (*engine.Engine, func() error, error) {
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, nil, usageErrorf("--store must be a postgres:// or postgresql:// URL")
	}
	db, err := postgres.Open(ctx, url, postgres.Options{Logger: opts.Logger})
	if err != nil {
		return nil, nil, err
	}
	eng, err := engine.New(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return eng, func() error { return errors.Join(eng.Close(), db.Close()) }, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storeopen"
)

// Every command finds its store here, through package storeopen: a
// postgres:// or postgresql:// URL is PostgreSQL, anything else a data
// directory holding the SQLite store.

// storeLocation returns where a command's store is: the --store URL when
// one is given, else the data directory.
func storeLocation(dataDir, storeURL string) string {
	if storeURL != "" {
		return storeURL
	}
	return dataDir
}

// storeName names the store at loc in error messages, without the password
// a URL may hold.
func storeName(loc string) string {
	if b, _ := storeopen.Backend(loc); b == storeopen.Postgres {
		return "the PostgreSQL store"
	}
	return "data directory " + loc
}

// checkStoreURL refuses a missing --store or one that is not a PostgreSQL
// URL, without echoing it (it may hold a password).
func checkStoreURL(cmd *Command, url string) error {
	if url == "" {
		return cmdUsageErrorf(cmd, "--store (or ENGRAM_STORE) is required: the URL of a PostgreSQL database")
	}
	if b, _ := storeopen.Backend(url); b != storeopen.Postgres {
		return cmdUsageErrorf(cmd, "--store must be a postgres:// or postgresql:// URL")
	}
	return nil
}

// checkLocation returns an EINVALID error whose sentence starts with the
// flag (such as "--to") if storeopen.Backend refuses loc, else nil.
func checkLocation(flag, loc string) error {
	if _, err := storeopen.Backend(loc); err != nil {
		return engram.Errorf(engram.EINVALID, "%s: %s", flag, engram.ErrorMessage(err))
	}
	return nil
}

// openStore opens the store at loc, given with the flag named flag (such
// as "--from"). A location storeopen.Backend refuses (an unknown URL
// scheme) is an EINVALID error whose sentence starts with the flag; other
// errors are storeopen.Open's.
func openStore(ctx context.Context, flag, loc string, opts storeopen.Options) (engram.Store, error) {
	if err := checkLocation(flag, loc); err != nil {
		return nil, err
	}
	return storeopen.Open(ctx, loc, opts)
}

// openEngineOn opens the store at loc (migrating it) and an engine over it;
// the returned function closes both. It fails as storeopen.Open or
// engine.New does; a location storeopen refuses is a usage error about
// --store.
func openEngineOn(ctx context.Context, loc string, opts engine.Options) (*engine.Engine, func() error, error) {
	if _, err := storeopen.Backend(loc); err != nil {
		return nil, nil, usageErrorf("--store must be a postgres:// or postgresql:// URL")
	}
	st, err := storeopen.Open(ctx, loc, storeopen.Options{Logger: opts.Logger})
	if err != nil {
		return nil, nil, err
	}
	eng, err := engine.New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return eng, func() error { return errors.Join(eng.Close(), st.Close()) }, nil
}

// openStoreCommand parses the command line of cmd, a command that takes
// only --store (ENGRAM_STORE), the URL of a PostgreSQL database, and opens
// that store with opts, its logs going to stderr at warning level. A bad
// command line is a usage error; other errors are storeopen.Open's.
func openStoreCommand(ctx context.Context, m *Main, cmd *Command, args []string, opts storeopen.Options) (engram.Store, error) {
	fs := m.flagSet(cmd)
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "PostgreSQL `URL` (env ENGRAM_STORE)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cmdUsageErrorf(cmd, "%s takes no arguments, got %q", cmd.Name, pos[0])
	}
	if err := checkStoreURL(cmd, *store); err != nil {
		return nil, err
	}
	opts.Logger = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := openStore(ctx, "--store", *store, opts)
	if err != nil {
		return nil, fmt.Errorf("open the PostgreSQL store: %w", err)
	}
	return st, nil
}

// Package storeopen is the one place that maps where a store is to the
// backend that serves it: a postgres:// or postgresql:// URL opens the
// PostgreSQL store, anything else without a scheme is a data directory
// holding the embedded SQLite store in DBFile. The command line, the
// evaluation harness and tests open stores and engines through it, so the
// engine itself depends on no backend.
package storeopen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/sqlite"
)

// DBFile is the name of the SQLite database inside a data directory.
const DBFile = "engram.db"

// Backends that Backend names.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Options configure Open. Zero values give the defaults.
type Options struct {
	// Logger receives the backend's operational logs; default
	// slog.Default().
	Logger *slog.Logger
	// MustExist refuses a data directory that holds no database yet,
	// instead of creating the directory and an empty database in it.
	MustExist bool
	// SkipMigrations opens a PostgreSQL store without applying its schema
	// migrations (the caller applies them). SQLite always migrates.
	SkipMigrations bool
}

// Backend returns the backend serving the store at loc: Postgres for a
// postgres:// or postgresql:// URL, SQLite for a data directory. An empty
// loc, or a URL of another scheme, is an EINVALID error whose message
// shows only the scheme, as a URL may hold a password.
func Backend(loc string) (string, error) {
	switch {
	case loc == "":
		return "", engram.Errorf(engram.EINVALID, "no store given: a data directory or a postgres:// URL is required")
	case strings.HasPrefix(loc, "postgres://"), strings.HasPrefix(loc, "postgresql://"):
		return Postgres, nil
	case strings.Contains(loc, "://"):
		return "", engram.Errorf(engram.EINVALID, "%q is neither a data directory nor a postgres:// URL", Redact(loc))
	}
	return SQLite, nil
}

// Redact keeps only the scheme of a URL, which may hold a password; a data
// directory is returned unchanged.
func Redact(loc string) string {
	scheme, _, ok := strings.Cut(loc, "://")
	if !ok {
		return loc
	}
	return scheme + "://..."
}

// File returns the SQLite database file of the data directory dir.
func File(dir string) string { return filepath.Join(dir, DBFile) }

// Open opens the store at loc (see Backend), creating a missing data
// directory and database unless opts.MustExist is set. It fails with
// EINVALID for a loc Backend refuses or, with MustExist, a directory
// holding no database; with EUNAVAILABLE when PostgreSQL cannot be
// reached; and with the backend's error when the database cannot be opened
// or migrated.
func Open(ctx context.Context, loc string, opts Options) (engram.Store, error) {
	backend, err := Backend(loc)
	if err != nil {
		return nil, err
	}
	if backend == Postgres {
		db, err := postgres.Open(ctx, loc, postgres.Options{Logger: opts.Logger, SkipMigrations: opts.SkipMigrations})
		if err != nil {
			return nil, err
		}
		return db, nil
	}
	file := File(loc)
	if opts.MustExist {
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			return nil, engram.Errorf(engram.EINVALID, "data directory %s holds no %s", loc, DBFile)
		}
	} else if err := os.MkdirAll(loc, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	db, err := sqlite.Open(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("open store in %s: %w", loc, err)
	}
	return db, nil
}

// Engine opens the store at loc as Open does, with opts.Logger as its
// logger, and returns an engine over it that closes the store when it is
// closed. It fails as Open does, or as engine.New does (the store is then
// closed again).
func Engine(ctx context.Context, loc string, opts engine.Options) (*engine.Engine, error) {
	st, err := Open(ctx, loc, Options{Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	opts.CloseStore = true
	e, err := engine.New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return e, nil
}

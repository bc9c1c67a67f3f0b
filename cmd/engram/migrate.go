package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/storeopen"
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

// migrator is a store whose schema is migrated on demand (PostgreSQL).
type migrator interface {
	// Migrate applies the migrations not applied yet and names them.
	Migrate(ctx context.Context) ([]string, error)
	// Addr names the server and database, without a password.
	Addr() string
}

func runMigrate(ctx context.Context, m *Main, cmd *Command, args []string) error {
	st, err := openStoreCommand(ctx, m, cmd, args, storeopen.Options{SkipMigrations: true})
	if err != nil {
		return err
	}
	defer st.Close()
	db, ok := st.(migrator)
	if !ok {
		return engram.Errorf(engram.EINVALID, "the store at --store (%T) has no schema migrations to apply", st)
	}
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

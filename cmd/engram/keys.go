package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/storeopen"
)

var keysCommand = &Command{
	Name:     "keys",
	Synopsis: "create, list and revoke the API keys of the HTTP API",
	Usage: `
Usage: engram keys create --org ORG --project PROJECT [--user USER] --role read|write|admin [--name NAME]
       engram keys list [--org ORG --project PROJECT]
       engram keys revoke ID

Manages the API keys that engram serve requires, in the data directory (or,
with --store, the PostgreSQL database at URL) that the server uses; a
running server sees the change at once.

A key is bound to an org and a project, and with --user to one user of it;
requests with it may name only scopes inside that binding. Its role says
what it may do: read (GET requests and search), write (also add, update,
delete and import) or admin (also manage keys with /v1/keys and purge a
scope with DELETE /v1/scope).

create prints the key's secret on stdout, and nothing else there, so that
KEY=$(engram keys create ...) keeps it: the store holds only a hash of it,
and it cannot be shown again. Clients send it as Authorization: Bearer KEY;
the engram command sends --key (ENGRAM_KEY) with --server.

list prints the keys, revoked ones included, without their secrets. revoke
makes requests with the key answer 401 from then on.`,
	Run: runKeys,
}

func runKeys(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "keys needs a subcommand: create, list or revoke")
	}
	sub, args := args[0], args[1:]
	fs := m.flagSet(cmd)
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` (env ENGRAM_DATA)")
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "keep the keys in the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	open := func() (engram.KeyService, func() error, error) {
		logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		slog.SetDefault(logger) // the stores log migrations through it
		loc := storeLocation(*data, *store)
		st, err := openStore(ctx, "--store", loc, storeopen.Options{Logger: logger})
		if err != nil {
			return nil, nil, fmt.Errorf("open %s: %w", storeName(loc), err)
		}
		return engram.Keys{Store: st}, st.Close, nil
	}
	switch sub {
	case "create":
		return runKeysCreate(ctx, m, cmd, fs, args, open)
	case "list":
		return runKeysList(ctx, m, cmd, fs, args, open)
	case "revoke":
		return runKeysRevoke(ctx, m, cmd, fs, args, open)
	}
	return cmdUsageErrorf(cmd, "unknown keys subcommand %q; it is one of create, list, revoke", sub)
}

type keysOpener func() (engram.KeyService, func() error, error)

func runKeysCreate(ctx context.Context, m *Main, cmd *Command, fs *flag.FlagSet, args []string, open keysOpener) error {
	var spec engram.KeySpec
	fs.StringVar(&spec.Namespace.Org, "org", "", "the `org` the key is bound to (required)")
	fs.StringVar(&spec.Namespace.Project, "project", "", "the `project` the key is bound to (required)")
	fs.StringVar(&spec.Namespace.User, "user", "", "the `user` the key is bound to; empty binds it to the whole project")
	fs.StringVar(&spec.Role, "role", "", "`role`: read, write or admin (required)")
	fs.StringVar(&spec.Name, "name", "", "a `name` to recognise the key by in keys list")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cmdUsageErrorf(cmd, "keys create takes no arguments, got %q", pos[0])
	case spec.Namespace.Org == "" || spec.Namespace.Project == "":
		return cmdUsageErrorf(cmd, "keys create needs --org and --project")
	case spec.Role != engram.RoleRead && spec.Role != engram.RoleWrite && spec.Role != engram.RoleAdmin:
		return cmdUsageErrorf(cmd, "keys create needs --role read, write or admin")
	}
	spec.Namespace = spec.Namespace.Normalize()
	ks, closeFn, err := open()
	if err != nil {
		return err
	}
	defer closeFn()
	k, secret, err := ks.CreateKey(ctx, spec)
	if err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, secret)
	fmt.Fprintf(m.Stderr, "created API key %s: %s of %s; the secret above is shown only this once\n", k.ID, k.Role, binding(k))
	return nil
}

func runKeysList(ctx context.Context, m *Main, cmd *Command, fs *flag.FlagSet, args []string, open keysOpener) error {
	org := fs.String("org", "", "list only the keys of this `org` (with --project)")
	project := fs.String("project", "", "list only the keys of this `project` (with --org)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "keys list takes no arguments, got %q", pos[0])
	}
	if (*org == "") != (*project == "") {
		return cmdUsageErrorf(cmd, "keys list takes --org and --project together, or neither")
	}
	ks, closeFn, err := open()
	if err != nil {
		return err
	}
	defer closeFn()
	keys, err := ks.ListKeys(ctx, *org, *project)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tROLE\tBOUND TO\tNAME\tCREATED\tREVOKED")
	for _, k := range keys {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.Format(time.RFC3339)
		}
		name := k.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Role, binding(&k), name, k.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func runKeysRevoke(ctx context.Context, m *Main, cmd *Command, fs *flag.FlagSet, args []string, open keysOpener) error {
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	ks, closeFn, err := open()
	if err != nil {
		return err
	}
	defer closeFn()
	if err := ks.RevokeKey(ctx, "", "", id); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "revoked %s\n", id)
	return nil
}

// binding says what a key is bound to: "org/project" or
// "org/project user U".
func binding(k *engram.APIKey) string {
	if k.User == "" {
		return k.Org + "/" + k.Project
	}
	return k.Org + "/" + k.Project + " user " + k.User
}

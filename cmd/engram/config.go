package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
)

// storeFlags are the flags every data command shares: where the data is
// (a local directory or a server) and which namespace it works in. Each
// flag's default comes from its ENGRAM_* variable, so a flag beats the
// environment and the environment beats the built-in default.
type storeFlags struct {
	fs *flag.FlagSet

	data   string
	server string
	key    string
	store  string

	org, project, user, agent, session string
	shared                             bool
	actor                              string
	embed                              embedFlags
}

// register adds the shared flags to fs.
func (c *storeFlags) register(fs *flag.FlagSet, m *Main) {
	c.fs = fs
	env := m.Getenv
	fs.StringVar(&c.data, "data", envOr(env, "ENGRAM_DATA", defaultDataDir(env)), "local data `directory` (env ENGRAM_DATA)")
	fs.StringVar(&c.server, "server", env("ENGRAM_SERVER"), "work against the server at this `URL` instead of a data directory (env ENGRAM_SERVER)")
	fs.StringVar(&c.key, "key", env("ENGRAM_KEY"), "API `key` sent to the server of --server (env ENGRAM_KEY)")
	fs.StringVar(&c.store, "store", env("ENGRAM_STORE"), "keep the data in the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	fs.StringVar(&c.org, "org", envOr(env, "ENGRAM_ORG", "default"), "organisation (env ENGRAM_ORG)")
	fs.StringVar(&c.project, "project", envOr(env, "ENGRAM_PROJECT", "default"), "project (env ENGRAM_PROJECT)")
	fs.StringVar(&c.user, "user", env("ENGRAM_USER"), "user; empty means records of no user (env ENGRAM_USER)")
	fs.StringVar(&c.agent, "agent", env("ENGRAM_AGENT"), "agent (env ENGRAM_AGENT)")
	fs.StringVar(&c.session, "session", env("ENGRAM_SESSION"), "session (env ENGRAM_SESSION)")
	fs.BoolVar(&c.shared, "shared", false, "also read memories shared at project level")
	fs.StringVar(&c.actor, "actor", envOr(env, "ENGRAM_ACTOR", "cli"), "name recorded as the author of writes (env ENGRAM_ACTOR)")
	c.embed.register(fs, env)
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// defaultDataDir follows the XDG base directory convention.
func defaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "engram")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "engram")
	}
	return "engram-data"
}

// scope is the scope reads use and writes create records in, names in
// Unicode NFC.
func (c *storeFlags) scope() engram.Scope {
	return engram.Scope{
		Org: c.org, Project: c.project, User: c.user, Agent: c.agent, Session: c.session,
		IncludeShared: c.shared,
	}.Normalize()
}

// namespace is where writes put new records.
func (c *storeFlags) namespace() engram.Namespace { return c.scope().Namespace() }

// context attributes the command's writes to --actor.
func (c *storeFlags) context(ctx context.Context) context.Context {
	return engram.WithActor(ctx, c.actor)
}

// useServer decides between a server and a local store (a data directory,
// or PostgreSQL with --store). An explicit flag beats the environment, so an
// empty --server flag forces local mode. Naming a server and a local store
// at the same level (both flags, or both variables) is a usage error, as is
// giving both --data and a non-empty --server.
func (c *storeFlags) useServer(cmd *Command) (bool, error) {
	dataFlag, serverFlag, storeFlag := flagWasSet(c.fs, "data"), flagWasSet(c.fs, "server"), flagWasSet(c.fs, "store")
	switch {
	case dataFlag && serverFlag && c.server != "":
		return false, cmdUsageErrorf(cmd, "give either --data or --server, not both")
	case storeFlag && serverFlag && c.store != "" && c.server != "":
		return false, cmdUsageErrorf(cmd, "give either --store or --server, not both: --store works on a database directly, --server through a server")
	case serverFlag:
		return c.server != "", nil
	case dataFlag || storeFlag:
		return false, nil
	case c.server != "" && c.store != "":
		return false, cmdUsageErrorf(cmd, "ENGRAM_SERVER and ENGRAM_STORE are both set; unset one, or choose with --server or --store")
	}
	return c.server != "", nil
}

// openMode says whether a command may create a missing data directory.
type openMode int

const (
	openRead  openMode = iota // a missing directory is an error
	openWrite                 // a missing directory is created
)

// open returns the Service the command works with, and a function that
// releases it. In local mode it opens the engine in this process; in server
// mode it returns an HTTP client, which behaves the same.
func (c *storeFlags) open(ctx context.Context, cmd *Command, m *Main, mode openMode) (engram.Service, func() error, error) {
	remote, err := c.useServer(cmd)
	if err != nil {
		return nil, nil, err
	}
	if remote {
		client := engramhttp.NewClient(c.server, engramhttp.ClientOptions{Key: c.key})
		return client, func() error { return nil }, nil
	}
	eng, closeFn, err := c.openLocal(ctx, cmd, m, mode)
	if err != nil {
		return nil, nil, err
	}
	return eng, closeFn, nil
}

// openLocal opens the engine of the data directory (or of the PostgreSQL
// store of --store) in this process, as open does in local mode, with the
// default sensitive policy of ENGRAM_SENSITIVE (as engram serve
// --sensitive reads it; a bad one is a usage error); tune, if given,
// changes the engine's options before it opens.
func (c *storeFlags) openLocal(ctx context.Context, cmd *Command, m *Main, mode openMode, tune ...func(*engine.Options)) (*engine.Engine, func() error, error) {
	var err error
	if c.data == "" {
		return nil, nil, cmdUsageErrorf(cmd, "--data is empty")
	}
	if mode == openRead && c.store == "" {
		if _, err := os.Stat(c.data); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("data directory %s does not exist (set --data or ENGRAM_DATA, or --server)", c.data)
		}
	}
	// Only warnings: a command's stderr is for its own messages. The
	// default logger is set too, for packages that log through it.
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	slog.SetDefault(logger)
	if c.embed.vault, err = openVault(m.Getenv("ENGRAM_VAULT_KEY"), m.Getenv(envVaultKeyFile)); err != nil {
		return nil, nil, err
	}
	def, err := engine.SensitiveTune(m.Getenv("ENGRAM_SENSITIVE"))
	if err != nil {
		return nil, nil, cmdUsageErrorf(cmd, "ENGRAM_SENSITIVE: %s", engram.ErrorMessage(err))
	}
	tune = append([]func(*engine.Options){def}, tune...)
	eng, closeFn, err := openEngineAt(ctx, c.data, c.store, "", &c.embed, logger, tune...)
	if err != nil && c.store != "" {
		return nil, nil, fmt.Errorf("open the PostgreSQL store: %w", err)
	} else if err != nil {
		return nil, nil, fmt.Errorf("open data directory %s: %w", c.data, err)
	}
	return eng, closeFn, nil
}

// withService opens the service, runs fn and closes the service, returning
// fn's error first.
func (c *storeFlags) withService(ctx context.Context, cmd *Command, m *Main, mode openMode, fn func(ctx context.Context, svc engram.Service) error) error {
	svc, closeFn, err := c.open(ctx, cmd, m, mode)
	if err != nil {
		return err
	}
	err = fn(c.context(ctx), svc)
	if cerr := closeFn(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return err
}

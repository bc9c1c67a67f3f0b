package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	engramhttp "github.com/engramhq/engram/http"
)

var serveCommand = &Command{
	Name:     "serve",
	Synopsis: "serve the HTTP API over a data directory",
	Usage: `
Usage: engram serve [--addr HOST:PORT] [--data DIR]

Opens the data directory and serves the HTTP API until interrupted. On start
it logs "listening on http://HOST:PORT" with the port actually bound, so
--addr 127.0.0.1:0 picks a free port. SIGINT or SIGTERM shuts down
gracefully: requests in flight finish, then the data directory is closed and
the command exits 0.`,
	Run: runServe,
}

func runServe(ctx context.Context, m *Main, cmd *Command, args []string) (err error) {
	fs := m.flagSet(cmd)
	addr := fs.String("addr", envOr(m.Getenv, "ENGRAM_ADDR", "127.0.0.1:8080"), "`HOST:PORT` to listen on (env ENGRAM_ADDR)")
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` (env ENGRAM_DATA)")
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "serve the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	var ef embedFlags
	ef.register(fs, m.Getenv)
	level := fs.String("log-level", envOr(m.Getenv, "ENGRAM_LOG_LEVEL", "info"), "log `level`: debug, info, warn or error (env ENGRAM_LOG_LEVEL)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "serve takes no arguments, got %q", pos[0])
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return cmdUsageErrorf(cmd, "--log-level %q is not one of debug, info, warn, error", *level)
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(logger) // for packages that log through the default logger

	eng, closeEng, err := openEngineAt(ctx, *data, *store, "", &ef, logger)
	if err != nil && *store != "" {
		return fmt.Errorf("open the PostgreSQL store: %w", err)
	} else if err != nil {
		return fmt.Errorf("open data directory %s: %w", *data, err)
	}
	defer func() {
		if cerr := closeEng(); err == nil && cerr != nil {
			err = fmt.Errorf("close data directory: %w", cerr)
		}
	}()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := engramhttp.NewServer(eng, engramhttp.ServerOptions{Ready: eng.Ready, Logger: logger, Embedder: eng.Embedder()})
	logger.Info("listening on http://"+ln.Addr().String(), "data", *data)
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("shut down")
	return nil
}

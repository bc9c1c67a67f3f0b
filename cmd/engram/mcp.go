package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/mcp"
)

var mcpCommand = &Command{
	Name:     "mcp",
	Synopsis: "serve the MCP tools over stdio, for an MCP host that starts engram",
	Usage: `
Usage: engram mcp [--data DIR | --store URL | --server URL] [--org ORG] [--project PROJECT] [--user USER] [flags]

Serves the Model Context Protocol on standard input and output, for a host
(Claude Desktop, an IDE, an agent framework) that starts engram as a
process: the tools remember, recall, get, list, update, forget and history,
and the resources engram://profile, engram://users/{user}/profile and
engram://memories/{id}. The scope flags are the default scope of every
call; a tool call may name another org, project, user, agent or session.
Writes are recorded as made by --actor (default mcp). Standard output
carries only the protocol; warnings go to standard error. It ends when the
host closes standard input.`,
	Run: runMCP,
}

func runMCP(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	if m.Getenv("ENGRAM_ACTOR") == "" {
		// MCP writes are recorded as mcp's unless --actor or the
		// environment names another; -h shows that default.
		actor := fs.Lookup("actor")
		actor.DefValue = "mcp"
		_ = actor.Value.Set("mcp")
	}
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "mcp takes no arguments, got %q", pos[0])
	}
	if err := sf.scope().Validate(); err != nil {
		return cmdUsageErrorf(cmd, "the default scope: %s", engram.ErrorMessage(err))
	}
	return sf.withService(ctx, cmd, m, openWrite, func(ctx context.Context, svc engram.Service) error {
		srv := mcp.NewServer(svc, mcp.Options{
			Scope: sf.namespace(), Actor: sf.actor, Version: buildVersion().Version,
			Logger: slog.Default(), // standard error (see storeFlags.open)
		})
		err := srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(m.Stdin), Writer: nopWriteCloser{m.Stdout}})
		if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
			return nil // the host went away or we were interrupted
		}
		return err
	})
}

// nopWriteCloser leaves closing standard output to the process.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

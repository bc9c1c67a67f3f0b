package main

import (
	"context"
	"fmt"
	"io"
)

var helpCommand = &Command{
	Name:     "help",
	Synopsis: "list the commands, or show one command's usage",
	Usage: `
Usage: engram help [COMMAND]

Without COMMAND, lists the commands. With it, shows the command's usage and
flags, like "engram COMMAND -h".`,
	Run: runHelp,
}

func runHelp(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	switch len(pos) {
	case 0:
		m.printCommandList(m.Stdout)
		return nil
	case 1:
	default:
		return cmdUsageErrorf(cmd, "help takes one COMMAND")
	}
	target := lookupCommand(pos[0])
	if target == nil {
		return usageErrorf("unknown command %q; run 'engram help' for the list", pos[0])
	}
	// Every command prints its usage and flags on -h; help reuses that so
	// the flags listed are exactly the ones the command parses.
	return target.Run(ctx, m, target, []string{"-h"})
}

func (m *Main) printCommandList(w io.Writer) {
	fmt.Fprint(w, `engram is a long-term memory engine for AI agents.

Usage: engram COMMAND [flags] [arguments]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Synopsis)
	}
	fmt.Fprint(w, `
Data commands work on the local data directory of --data (ENGRAM_DATA), or
on the server of --server (ENGRAM_SERVER), with the same output. They act in
the namespace of --org, --project, --user, --agent and --session (ENGRAM_ORG,
ENGRAM_PROJECT, ENGRAM_USER, ENGRAM_AGENT, ENGRAM_SESSION); flags beat the
environment. --json prints JSON instead of text.

Run 'engram help COMMAND' for a command's flags.
`)
}

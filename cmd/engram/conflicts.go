package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
)

var conflictsCommand = &Command{
	Name:     "conflicts",
	Synopsis: "list and resolve memories that contradict each other",
	Usage: `
Usage: engram conflicts list [flags]
       engram conflicts resolve [flags] --keep MEMORY_ID [--delete] [--reason TEXT] CONFLICT_ID

A former marks two memories as a conflict when they contradict each other
and neither is newer (such as "I work at Bosch" told after "I work at
Siemens now", but dated earlier): both stay active until resolved.

list prints the open conflicts of the scope, each with its memories.
resolve keeps --keep and supersedes the other memory by it (closed at the
kept one's valid_from), or with --delete soft-deletes it; the reason is
kept in both memories' history.`,
	Run: runConflicts,
}

func runConflicts(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "conflicts needs a subcommand: list or resolve")
	}
	switch args[0] {
	case "list":
		return runConflictsList(ctx, m, cmd, args[1:])
	case "resolve":
		return runConflictsResolve(ctx, m, cmd, args[1:])
	}
	return cmdUsageErrorf(cmd, "unknown conflicts subcommand %q; it is one of list, resolve", args[0])
}

func runConflictsList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the conflicts as JSON")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "conflicts list takes no arguments, got %q", pos[0])
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		out, err := svc.ListConflicts(ctx, sf.scope())
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, nonNilConflicts(out))
		}
		for _, c := range out {
			fmt.Fprintf(m.Stdout, "conflict %s\n", c.ID)
			for i := range c.Memories {
				fmt.Fprintln(m.Stdout, "  "+memoryLine(&c.Memories[i]))
			}
		}
		return nil
	})
}

func nonNilConflicts(cs []engram.Conflict) []engram.Conflict {
	if cs == nil {
		return []engram.Conflict{}
	}
	return cs
}

func runConflictsResolve(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print both memories as JSON")
	keep := fs.String("keep", "", "the `id` of the memory that stays current")
	del := fs.Bool("delete", false, "soft-delete the other memory instead of superseding it")
	reason := fs.String("reason", "", "why, kept in both memories' history")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	if *keep == "" {
		return cmdUsageErrorf(cmd, "conflicts resolve needs --keep MEMORY_ID")
	}
	req := engram.ResolveConflictRequest{Keep: *keep, Action: engram.ResolveSupersede, Reason: *reason}
	if *del {
		req.Action = engram.ResolveDelete
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		res, err := svc.ResolveConflict(ctx, sf.scope(), id, req)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, res)
		}
		fmt.Fprintln(m.Stdout, "kept   "+memoryLine(&res.Kept))
		if res.Other.ID != "" {
			fmt.Fprintln(m.Stdout, "other  "+memoryLine(&res.Other))
		}
		return nil
	})
}

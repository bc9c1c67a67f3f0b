package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

var communitiesCommand = &Command{
	Name:     "communities",
	Synopsis: "refresh, list and show communities: groups of entities more tied to each other than to the rest",
	Usage: `
Usage: engram communities refresh [flags]
       engram communities list [flags]
       engram communities get [flags] ID

Communities are found by label propagation over the relations between a
user's entities, each with a summary quoting the memories that name the
most of its members (and an LLM's abstract with --llm-url on the server).

refresh recomputes the communities that changed since the last refresh
(--full: every one) and prints what it did; a server with
--community-refresh does it on its own. list prints one line per
community (id, size, names); get prints one with its summary and members.
All work on the data directory, --store or, with --server, a running
server.`,
	Run: runCommunities,
}

func runCommunities(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "communities needs a subcommand: refresh, list or get")
	}
	switch args[0] {
	case "refresh":
		return runCommunitiesRefresh(ctx, m, cmd, args[1:])
	case "list":
		return runCommunitiesList(ctx, m, cmd, args[1:])
	case "get":
		return runCommunitiesGet(ctx, m, cmd, args[1:])
	}
	return cmdUsageErrorf(cmd, "unknown communities subcommand %q; it is one of refresh, list, get", args[0])
}

// communityLine is the one-line form of a community: ID SIZE NAMES.
func communityLine(c *engram.Community) string {
	return fmt.Sprintf("%s  %3d  %s", c.ID, len(c.Members), strings.Join(c.Names, ", "))
}

// runCommunitiesRefresh is engram communities refresh.
func runCommunitiesRefresh(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	full := fs.Bool("full", false, "recompute every community, not only those that changed")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "communities refresh takes no arguments, got %q", pos[0])
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		res, err := svc.RefreshCommunities(ctx, sf.scope(), *full)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, res)
		}
		fmt.Fprintf(m.Stdout, "%d communities: %d written, %d removed; %d entities recomputed, %d had changed\n",
			res.Total, res.Written, res.Deleted, res.Recomputed, res.Dirty)
		return nil
	})
}

// runCommunitiesList is engram communities list.
func runCommunitiesList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "communities list takes no arguments, got %q", pos[0])
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		l, err := svc.ListCommunities(ctx, sf.scope())
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, l)
		}
		for i := range l.Communities {
			fmt.Fprintln(m.Stdout, communityLine(&l.Communities[i]))
		}
		return nil
	})
}

// runCommunitiesGet is engram communities get.
func runCommunitiesGet(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the community as JSON")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		d, err := svc.GetCommunity(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, d)
		}
		fmt.Fprintln(m.Stdout, communityLine(&d.Community))
		if d.Community.Summary != "" {
			fmt.Fprintln(m.Stdout, "  "+d.Community.Summary)
		}
		if d.Community.Abstract != "" {
			fmt.Fprintln(m.Stdout, "  "+d.Community.Abstract)
		}
		for i := range d.Entities {
			fmt.Fprintln(m.Stdout, "  "+entityLine(&d.Entities[i]))
		}
		return nil
	})
}

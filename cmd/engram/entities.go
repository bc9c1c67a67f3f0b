package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

var entitiesCommand = &Command{
	Name:     "entities",
	Synopsis: "list and show the entities (people, places, things) named in memories",
	Usage: `
Usage: engram entities list [flags]
       engram entities get [flags] ID
       engram entities merge [flags] ID --from ID [--from ID ...]
       engram entities split [flags] ID --name NAME --memory ID [--memory ID ...]
       engram entities history [flags] ID

Every memory written names entities: its speaker, its cue anchors and the
proper names in it, resolved against the user's entities (the same name
with case and accents folded, an alias, a spelling variant, a short form).

list prints the scope's entities by name, one per line (id, type,
mentions, name and aliases); --type and --prefix narrow it. get prints
one entity with the memories that name it and its relations. merge moves
the --from entities' mentions, relations and names into ID; split moves the
mentions of the --memory memories (and their share of the relations) to a
new entity --name; history prints every version of an entity (a merged or
deleted one's too) with its actor. All work on the data directory, --store
or, with --server, a running server.`,
	Run: runEntities,
}

func runEntities(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "entities needs a subcommand: list, get, merge, split or history")
	}
	switch args[0] {
	case "list":
		return runEntitiesList(ctx, m, cmd, args[1:])
	case "get":
		return runEntitiesGet(ctx, m, cmd, args[1:])
	case "merge":
		return runEntitiesMerge(ctx, m, cmd, args[1:])
	case "split":
		return runEntitiesSplit(ctx, m, cmd, args[1:])
	case "history":
		return runEntitiesHistory(ctx, m, cmd, args[1:])
	}
	return cmdUsageErrorf(cmd, "unknown entities subcommand %q; it is one of list, get, merge, split, history", args[0])
}

// entityLine is the one-line form of an entity: ID TYPE MENTIONS NAME (ALIASES).
func entityLine(e *engram.Entity) string {
	typ := e.Type
	if typ == "" {
		typ = "-"
	}
	line := fmt.Sprintf("%s  %-7s %4d  %s", e.ID, typ, e.Mentions, e.Name)
	if len(e.Aliases) > 0 {
		line += " (" + strings.Join(e.Aliases, ", ") + ")"
	}
	return line
}

// runEntitiesList is engram entities list.
func runEntitiesList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the page as JSON")
	typ := fs.String("type", "", "only entities of this `type` (person, place, work, thing)")
	prefix := fs.String("prefix", "", "only entities whose name starts with this `text` (case and accents folded)")
	limit := fs.Int("limit", 0, "entities per page (default 50, at most 1000)")
	cursor := fs.String("cursor", "", "start at this page `cursor` from a previous list")
	all := fs.Bool("all", false, "follow cursors and list every entity")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "entities list takes no arguments, got %q", pos[0])
	}
	if *limit < 0 || *limit > engram.MaxEntityLimit {
		return cmdUsageErrorf(cmd, "--limit %d is outside 1..%d", *limit, engram.MaxEntityLimit)
	}
	f := engram.EntityFilter{Type: *typ, Prefix: *prefix, Limit: *limit, Cursor: *cursor}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		out := engram.EntityPage{Entities: []engram.Entity{}}
		for {
			page, err := svc.ListEntities(ctx, sf.scope(), f)
			if err != nil {
				return err
			}
			if !*asJSON {
				for i := range page.Entities {
					fmt.Fprintln(m.Stdout, entityLine(&page.Entities[i]))
				}
			}
			out.Entities, out.Next = append(out.Entities, page.Entities...), page.Next
			if !*all || page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}
		return m.finishList(&out, out.Next, *asJSON)
	})
}

// runEntitiesGet is engram entities get.
func runEntitiesGet(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the entity as JSON")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		d, err := svc.GetEntity(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, d)
		}
		fmt.Fprintln(m.Stdout, entityLine(&d.Entity))
		for _, t := range d.Timeline {
			fmt.Fprintf(m.Stdout, "  %s  %s  %-10s %s\n", formatTime(t.At), t.MemoryID, t.Status, oneLine(t.Abstraction, summaryLen))
		}
		for _, r := range d.Relations {
			state := "current"
			if !r.Current() {
				state = "expired"
			}
			fmt.Fprintf(m.Stdout, "  %s %s  weight %g  %s\n", r.Label, r.Other(d.Entity.ID), r.Weight, state)
		}
		return nil
	})
}

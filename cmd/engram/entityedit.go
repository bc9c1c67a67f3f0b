package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

// editEntity runs edit on the graph editor of the store sf opens and
// prints the entity it returns, as JSON when asJSON; an error of either
// is returned as it is.
func editEntity(ctx context.Context, m *Main, cmd *Command, sf *storeFlags, asJSON bool,
	edit func(context.Context, engram.GraphEditor) (*engram.Entity, error)) error {
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		ent, err := edit(ctx, svc)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(m.Stdout, ent)
		}
		fmt.Fprintln(m.Stdout, entityLine(ent))
		return nil
	})
}

// runEntitiesMerge is engram entities merge ID --from ID [--from ID …].
func runEntitiesMerge(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the merged entity as JSON")
	var from stringList
	fs.Var(&from, "from", "an entity `ID` to merge into ID (repeat for several)")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(from) == 0 {
		return cmdUsageErrorf(cmd, "entities merge needs --from: the entities to merge into %s", id)
	}
	return editEntity(ctx, m, cmd, &sf, *asJSON, func(ctx context.Context, g engram.GraphEditor) (*engram.Entity, error) {
		return g.MergeEntities(ctx, sf.scope(), id, from)
	})
}

// runEntitiesSplit is engram entities split ID --name NAME --memory ID
// [--memory ID …].
func runEntitiesSplit(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the new entity as JSON")
	var req engram.SplitRequest
	fs.StringVar(&req.Name, "name", "", "the new entity's `name`")
	fs.StringVar(&req.Type, "type", "", "the new entity's `type` (default the split entity's)")
	var mems stringList
	fs.Var(&mems, "memory", "a memory `ID` whose mention moves to the new entity (repeat for several)")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	if strings.TrimSpace(req.Name) == "" || len(mems) == 0 {
		return cmdUsageErrorf(cmd, "entities split needs --name and at least one --memory")
	}
	req.Memories = mems
	return editEntity(ctx, m, cmd, &sf, *asJSON, func(ctx context.Context, g engram.GraphEditor) (*engram.Entity, error) {
		return g.SplitEntity(ctx, sf.scope(), id, req)
	})
}

// runEntitiesHistory is engram entities history ID.
func runEntitiesHistory(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		vs, err := svc.EntityHistory(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, map[string]any{"versions": append([]engram.EntityVersion{}, vs...)})
		}
		for _, v := range vs {
			line := fmt.Sprintf("%3d  %s  %-7s", v.Version, formatTime(v.At), v.Op)
			if v.Entity != nil {
				line += "  " + v.Entity.Name
				if len(v.Entity.Aliases) > 0 {
					line += " (" + strings.Join(v.Entity.Aliases, ", ") + ")"
				}
			}
			if len(v.Related) > 0 {
				line += "  [" + strings.Join(v.Related, ", ") + "]"
			}
			if v.Actor != "" {
				line += "  by " + v.Actor
			}
			fmt.Fprintln(m.Stdout, line)
		}
		return nil
	})
}

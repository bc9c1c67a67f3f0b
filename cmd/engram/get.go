package main

import (
	"context"

	"github.com/engramhq/engram"
)

var getCommand = &Command{
	Name:     "get",
	Synopsis: "show one memory or episode",
	Usage: `
Usage: engram get [flags] ID
       engram get --episode [flags] ID

Shows the memory (in any status) or, with --episode, the episode with this
id in the scope. An id from another scope is reported as not found.`,
	Run: runGet,
}

func runGet(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the record as JSON")
	episode := fs.Bool("episode", false, "get an episode instead of a memory")
	asVault := vaultFlag(fs)
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		if *episode {
			e, err := svc.GetEpisode(ctx, sf.scope(), id)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(m.Stdout, e)
			}
			printEpisode(m.Stdout, e)
			return nil
		}
		mem, err := svc.GetMemory(vaultContext(ctx, *asVault), sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, mem)
		}
		printMemory(m.Stdout, mem)
		return nil
	})
}

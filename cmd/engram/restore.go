package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
)

var restoreCommand = &Command{
	Name:     "restore",
	Synopsis: "bring a soft-deleted memory back",
	Usage: `
Usage: engram restore [flags] ID
       engram restore --backup DIR|FILE.tar [--data DIR] [--force]

Makes a soft-deleted memory active again, as a new version. Prints the
restored memory.

With --backup, brings back a backup engram backup wrote instead: checks
each file against the backup's manifest, copies the database and the index
files into the data directory, which must be missing or empty (--force
replaces the store and index files of one whose server is stopped), and
opens the store once to check it. Vault memories need the master key they
were sealed under.`,
	Run: runRestore,
}

func runRestore(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the memory as JSON")
	reason := fs.String("reason", "", "why the memory comes back, kept in its history")
	backup := fs.String("backup", "", "restore the backup in this `directory` or FILE.tar (from engram backup) into --data instead")
	force := fs.Bool("force", false, "with --backup: replace the store of a data directory that is not empty")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if *backup != "" || *force {
		return restoreFromBackup(ctx, m, cmd, pos, &sf, *backup, *force)
	}
	var id string
	switch len(pos) {
	case 0:
		return cmdUsageErrorf(cmd, "restore needs an ID, or --backup DIR")
	case 1:
		id = pos[0]
	default:
		return cmdUsageErrorf(cmd, "restore takes one ID, got %d arguments", len(pos))
	}
	return m.changeMemory(ctx, cmd, &sf, *asJSON, func(ctx context.Context, svc engram.Service) (*engram.Memory, error) {
		return svc.RestoreMemory(ctx, sf.scope(), id, *reason)
	})
}

// restoreFromBackup is engram restore --backup: it takes no ID and works
// on the data directory only.
func restoreFromBackup(ctx context.Context, m *Main, cmd *Command, pos []string, sf *storeFlags, backup string, force bool) error {
	switch {
	case len(pos) > 0:
		return cmdUsageErrorf(cmd, "restore --backup takes no ID, got %q", pos[0])
	case backup == "":
		return cmdUsageErrorf(cmd, "--force goes with --backup DIR")
	case sf.server != "" || sf.store != "":
		return cmdUsageErrorf(cmd, "restore --backup writes a data directory (--data), not a server or a PostgreSQL store (see docs/operations.md#backup-and-restore)")
	}
	n, err := restoreBackup(ctx, backup, sf.data, force)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "restored %s into %s (%d files)\n", backup, sf.data, n)
	return nil
}

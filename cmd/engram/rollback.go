package main

import (
	"context"

	"github.com/engramhq/engram"
)

var rollbackCommand = &Command{
	Name:     "rollback",
	Synopsis: "make a memory what it was at an earlier version",
	Usage: `
Usage: engram rollback [flags] ID --version N

Restores the memory's content as of version N (see engram history) as a new
version; the versions in between stay in the history. Prints the memory.`,
	Run: runRollback,
}

func runRollback(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the memory as JSON")
	version := fs.Int("version", 0, "version `number` to return to (required)")
	reason := fs.String("reason", "", "why the memory is rolled back, kept in its history")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	if !flagWasSet(fs, "version") {
		return cmdUsageErrorf(cmd, "rollback needs --version N")
	}
	return m.changeMemory(ctx, cmd, &sf, *asJSON, func(ctx context.Context, svc engram.Service) (*engram.Memory, error) {
		return svc.Rollback(ctx, sf.scope(), id, *version, *reason)
	})
}

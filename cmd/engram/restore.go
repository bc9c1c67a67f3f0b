package main

import (
	"context"

	"github.com/engramhq/engram"
)

var restoreCommand = &Command{
	Name:     "restore",
	Synopsis: "bring a soft-deleted memory back",
	Usage: `
Usage: engram restore [flags] ID

Makes a soft-deleted memory active again, as a new version. Prints the
restored memory.`,
	Run: runRestore,
}

func runRestore(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the memory as JSON")
	reason := fs.String("reason", "", "why the memory comes back, kept in its history")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return m.changeMemory(ctx, cmd, &sf, *asJSON, func(ctx context.Context, svc engram.Service) (*engram.Memory, error) {
		return svc.RestoreMemory(ctx, sf.scope(), id, *reason)
	})
}

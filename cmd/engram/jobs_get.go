package main

import (
	"context"

	"github.com/engramhq/engram"
)

// runJobsGet is engram jobs get.
func runJobsGet(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the job as JSON")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		j, err := svc.GetJob(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, j)
		}
		printJob(m, j)
		return nil
	})
}

package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
)

// runJobsList is engram jobs list.
func runJobsList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the page as JSON")
	var states stringList
	fs.Var(&states, "state", "only jobs in this `state`: queued, running, done, failed (repeatable)")
	limit := fs.Int("limit", 0, "jobs per page (default 50, at most 1000)")
	cursor := fs.String("cursor", "", "start at this page `cursor` from a previous list")
	all := fs.Bool("all", false, "follow cursors and list every job")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "jobs list takes no arguments, got %q", pos[0])
	}
	f := engram.JobFilter{Limit: *limit, Cursor: *cursor}
	for _, s := range states {
		f.States = append(f.States, engram.JobState(s))
	}
	if err := f.Validate(); err != nil {
		return cmdUsageErrorf(cmd, "--%s", engram.ErrorMessage(err))
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		out := engram.JobPage{Jobs: []engram.Job{}}
		for {
			page, err := svc.ListJobs(ctx, sf.scope(), f)
			if err != nil {
				return err
			}
			if !*asJSON {
				for i := range page.Jobs {
					fmt.Fprintln(m.Stdout, jobLine(&page.Jobs[i]))
				}
			}
			out.Jobs, out.Next = append(out.Jobs, page.Jobs...), page.Next
			if !*all || page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}
		return m.finishList(&out, out.Next, *asJSON)
	})
}

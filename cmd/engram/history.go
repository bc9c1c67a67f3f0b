package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
)

var historyCommand = &Command{
	Name:     "history",
	Synopsis: "show the versions of a memory",
	Usage: `
Usage: engram history [flags] ID

Lists the versions of a memory, oldest first: number, operation, time,
actor, reason and the memory's content after the change (before it, for a
delete). With --json the output is the array of versions with the full
state before and after each change.`,
	Run: runHistory,
}

func runHistory(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the versions as JSON")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		vs, err := svc.History(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			if vs == nil {
				vs = []engram.Version{}
			}
			return writeJSON(m.Stdout, vs)
		}
		for i := range vs {
			fmt.Fprintln(m.Stdout, versionLine(&vs[i]))
		}
		return nil
	})
}

// versionLine is the one-line form of a version:
// vN OP TIME ACTOR [reason] SUMMARY.
func versionLine(v *engram.Version) string {
	state := v.New
	if state == nil {
		state = v.Old
	}
	summary := ""
	if state != nil {
		summary = memorySummary(state)
	}
	actor := v.Actor
	if actor == "" {
		actor = "-"
	}
	reason := ""
	if v.Reason != "" {
		reason = "(" + oneLine(v.Reason, 60) + ") "
	}
	return fmt.Sprintf("v%-3d %-9s %s  %s  %s%s", v.Version, v.Op, formatTime(v.At), actor, reason, summary)
}

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

var deleteCommand = &Command{
	Name:     "delete",
	Synopsis: "delete a memory or an episode, or purge a whole scope",
	Usage: `
Usage: engram delete [flags] ID
       engram delete --hard [flags] ID
       engram delete --episode [flags] ID
       engram delete --scope --yes [flags]

Soft-deletes a memory: it leaves search and list but keeps its history and
can be brought back with "engram restore". --hard purges the memory with its
history instead. --episode purges an episode (memories formed from it stay).

--scope purges every episode, memory and version in the scope named by
--user, --agent and --session (the audit log stays); a scope wider than one
user or agent is refused. It cannot be undone, so it needs --yes.`,
	Run: runDelete,
}

func runDelete(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	hard := fs.Bool("hard", false, "purge the memory and its history instead of a soft delete")
	episode := fs.Bool("episode", false, "delete an episode instead of a memory")
	scope := fs.Bool("scope", false, "purge everything in the scope")
	yes := fs.Bool("yes", false, "confirm --scope")
	reason := fs.String("reason", "", "why the memory is deleted, kept in its history")

	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if *scope {
		if len(pos) > 0 {
			return cmdUsageErrorf(cmd, "delete --scope takes no ID, got %q", pos[0])
		}
		if *hard || *episode {
			return cmdUsageErrorf(cmd, "delete --scope cannot be combined with --hard or --episode")
		}
		if !*yes {
			return cmdUsageErrorf(cmd, "delete --scope purges everything in %s for good; add --yes to confirm", namespaceString(sf.namespace()))
		}
		return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
			n, err := svc.DeleteScope(ctx, sf.scope())
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(m.Stdout, n)
			}
			fmt.Fprintf(m.Stdout, "purged %s: %d episodes, %d memories, %d versions\n",
				namespaceString(sf.namespace()), n.Episodes, n.Memories, n.Versions)
			return nil
		})
	}

	switch len(pos) {
	case 0:
		return cmdUsageErrorf(cmd, "delete needs an ID (or --scope)")
	case 1:
	default:
		return cmdUsageErrorf(cmd, "delete takes one ID, got %d arguments", len(pos))
	}
	id := pos[0]
	if *episode && (*hard || *reason != "") {
		return cmdUsageErrorf(cmd, "an episode is always purged; --hard and --reason apply to memories")
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		result := struct {
			Type     string   `json:"type"`
			ID       string   `json:"id"`
			Hard     bool     `json:"hard"`
			Removed  []string `json:"removed,omitempty"`  // an episode's memories purged with it
			Reformed []string `json:"reformed,omitempty"` // an episode's memories formed again without it
		}{Type: engram.RecordMemory, ID: id, Hard: *hard}
		if *episode {
			res, err := svc.DeleteEpisode(ctx, sf.scope(), id)
			if err != nil {
				return err
			}
			result.Type, result.Hard, result.Removed, result.Reformed = engram.RecordEpisode, true, res.Removed, res.Reformed
		} else if err := svc.DeleteMemory(ctx, sf.scope(), id, engram.DeleteOptions{Hard: *hard, Reason: *reason}); err != nil {
			return err
		}
		switch {
		case *asJSON:
			return writeJSON(m.Stdout, result)
		case *episode:
			printEpisodeDelete(m, id, result.Removed, result.Reformed)
		case result.Hard:
			fmt.Fprintf(m.Stdout, "purged %s %s\n", result.Type, id)
		default:
			fmt.Fprintf(m.Stdout, "deleted memory %s (engram restore %s brings it back)\n", id, id)
		}
		return nil
	})
}

// printEpisodeDelete says that episode id is purged, and which memories
// went with it and which were formed again without it.
func printEpisodeDelete(m *Main, id string, removed, reformed []string) {
	fmt.Fprintf(m.Stdout, "purged episode %s\n", id)
	for _, x := range []struct {
		what string
		ids  []string
	}{{"removed", removed}, {"formed again without it", reformed}} {
		if len(x.ids) > 0 {
			fmt.Fprintf(m.Stdout, "memories %s: %s\n", x.what, strings.Join(x.ids, ", "))
		}
	}
}

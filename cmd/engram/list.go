package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/engramhq/engram"
)

var listCommand = &Command{
	Name:     "list",
	Synopsis: "list memories or episodes",
	Usage: `
Usage: engram list [flags]
       engram list --episodes [flags]

Lists the memories in the scope, newest first, one per line (id, kind,
status, version, summary); by default only active ones. With --episodes it
lists episodes in the order they occurred.

One page of --limit records is printed; when there are more, the cursor of
the next page is printed on stderr for --cursor. --all follows the cursors
to the end. With --json the output is the page object ({"memories": [...],
"next": "..."}); with --all it holds every record and no cursor.`,
	Run: runList,
}

func runList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the page as JSON")
	episodes := fs.Bool("episodes", false, "list episodes instead of memories")
	limit := fs.Int("limit", 0, "records per page (default 50, at most 1000)")
	cursor := fs.String("cursor", "", "start at this page `cursor` from a previous list")
	all := fs.Bool("all", false, "follow cursors and list every record")
	asVault := vaultFlag(fs)
	var ff memoryFilterFlags
	ff.register(fs)
	var roles stringList
	fs.Var(&roles, "role", "with --episodes: only episodes with this `role` (repeatable)")
	speaker := fs.String("speaker", "", "with --episodes: only episodes by this `speaker`")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "list takes no arguments, got %q", pos[0])
	}
	if err := checkListFilters(cmd, fs, *episodes); err != nil {
		return err
	}
	page := listPaging{limit: *limit, cursor: *cursor, all: *all, asJSON: *asJSON}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		ctx = vaultContext(ctx, *asVault)
		if *episodes {
			f := engram.EpisodeFilter{Roles: roles, Speaker: *speaker, Contains: ff.contains, Metadata: ff.meta}
			return m.listEpisodes(ctx, svc, sf.scope(), f, page)
		}
		return m.listMemories(ctx, svc, sf.scope(), ff.filter(), page)
	})
}

// checkListFilters refuses the filters of memories with --episodes and
// those of episodes without it.
func checkListFilters(cmd *Command, fs *flag.FlagSet, episodes bool) error {
	if episodes {
		for _, name := range []string{"kind", "status", "valid-at"} {
			if flagWasSet(fs, name) {
				return cmdUsageErrorf(cmd, "--%s filters memories and cannot be used with --episodes", name)
			}
		}
		return nil
	}
	for _, name := range []string{"role", "speaker"} {
		if flagWasSet(fs, name) {
			return cmdUsageErrorf(cmd, "--%s filters episodes and needs --episodes", name)
		}
	}
	return nil
}

// listPaging is how list walks the pages: where it starts, how many a
// page holds, whether it follows the cursors and how it prints.
type listPaging struct {
	limit  int
	cursor string
	all    bool
	asJSON bool
}

// listEpisodes prints the episodes of the page (of every page with
// --all) as they come, then finishes the listing.
func (m *Main) listEpisodes(ctx context.Context, svc engram.Service, sc engram.Scope, f engram.EpisodeFilter, pg listPaging) error {
	f.Limit = pg.limit
	var out engram.EpisodePage
	var err error
	out.Episodes, out.Next, err = listPages(pg, func(cursor string) ([]engram.Episode, string, error) {
		f.Cursor = cursor
		page, err := svc.ListEpisodes(ctx, sc, f)
		if err != nil {
			return nil, "", err
		}
		out.EmptyScope = out.EmptyScope || page.EmptyScope
		return page.Episodes, page.Next, nil
	}, func(e *engram.Episode) { fmt.Fprintln(m.Stdout, episodeLine(e)) })
	if err != nil {
		return err
	}
	if len(out.Episodes) == 0 {
		m.noMatch("episode listed", sc, out.EmptyScope)
	}
	return m.finishList(&out, out.Next, pg.asJSON)
}

// listMemories prints the memories of the page (of every page with
// --all) as they come, then finishes the listing.
func (m *Main) listMemories(ctx context.Context, svc engram.Service, sc engram.Scope, f engram.MemoryFilter, pg listPaging) error {
	f.Limit = pg.limit
	var out engram.MemoryPage
	var err error
	out.Memories, out.Next, err = listPages(pg, func(cursor string) ([]engram.Memory, string, error) {
		f.Cursor = cursor
		page, err := svc.ListMemories(ctx, sc, f)
		if err != nil {
			return nil, "", err
		}
		out.EmptyScope = out.EmptyScope || page.EmptyScope
		return page.Memories, page.Next, nil
	}, func(mem *engram.Memory) { fmt.Fprintln(m.Stdout, memoryLine(mem)) })
	if err != nil {
		return err
	}
	if len(out.Memories) == 0 {
		m.noMatch("memory listed", sc, out.EmptyScope)
	}
	return m.finishList(&out, out.Next, pg.asJSON)
}

// listPages lists the page at pg.cursor, and with pg.all every page after
// it, printing each record as it comes unless pg.asJSON. It returns the
// records (never nil) and the cursor of the page after the last listed,
// or the first error of list.
func listPages[T any](pg listPaging, list func(cursor string) ([]T, string, error), print func(*T)) ([]T, string, error) {
	out := []T{}
	cursor := pg.cursor
	for {
		recs, next, err := list(cursor)
		if err != nil {
			return nil, "", err
		}
		if !pg.asJSON {
			for i := range recs {
				print(&recs[i])
			}
		}
		out = append(out, recs...)
		if !pg.all || next == "" {
			return out, next, nil
		}
		cursor = next
	}
}

// finishList prints the JSON page, or the next page's cursor after a human
// listing (on stderr, so that stdout stays one record per line).
func (m *Main) finishList(page any, next string, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, page)
	}
	if next != "" {
		fmt.Fprintf(m.Stderr, "more: --cursor %s\n", next)
	}
	return nil
}

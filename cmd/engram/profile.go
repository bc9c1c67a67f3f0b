package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
)

var profileCommand = &Command{
	Name:     "profile",
	Synopsis: "show what is kept about a user",
	Usage: `
Usage: engram profile [flags]

Shows the profile of the scope: the stable traits and transient states the
LLM former keeps (engram serve --llm-url), and the scope's active core
memories, the profile memory first. Without an LLM the lists are empty and
the core memories are those added or formed by rules; a profile with no
traits or states says so on standard error and exits 0.`,
	Run: runProfile,
}

// noTraitsHint says on standard error why a profile has no traits or
// states: only the LLM former keeps them.
const noTraitsHint = "engram: no traits or states are kept for this scope; the LLM former keeps them (engram serve --llm-url URL --llm-model MODEL), the rules former only core memories"

func runProfile(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the profile as JSON")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "profile takes no arguments, got %q", pos[0])
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		p, err := svc.Profile(ctx, sf.scope())
		if err != nil {
			return err
		}
		if len(p.Traits) == 0 && len(p.States) == 0 {
			fmt.Fprintln(m.Stderr, noTraitsHint)
		}
		if *asJSON {
			return writeJSON(m.Stdout, p)
		}
		for _, t := range p.Traits {
			fmt.Fprintf(m.Stdout, "trait: %s\n", t)
		}
		for _, s := range p.States {
			fmt.Fprintf(m.Stdout, "state: %s\n", s)
		}
		for _, mem := range p.Memories {
			if mem.Metadata[engram.MetaProfile] != true {
				fmt.Fprintf(m.Stdout, "core %s: %s\n", mem.ID, mem.Value)
			}
		}
		return nil
	})
}

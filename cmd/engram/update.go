package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/engramhq/engram"
)

var updateCommand = &Command{
	Name:     "update",
	Synopsis: "change fields of an active memory",
	Usage: `
Usage: engram update [flags] ID --value TEXT [--abstraction TEXT] [--cue C]...

Changes the given fields of the memory in place and records the change as a
new version (see engram history). Only flags given on the command line
change anything: --cue replaces all cues (--no-cues removes them), --meta
replaces the whole metadata map. Prints the updated memory.`,
	Run: runUpdate,
}

func runUpdate(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the memory as JSON")
	value := fs.String("value", "", "new `value`")
	noCues := fs.Bool("no-cues", false, "remove all cues")
	var meta metaFlag
	fs.Var(&meta, "meta", "metadata `key=value` (repeatable; replaces the whole map)")
	reason := fs.String("reason", "", "why the memory changes, kept in its history")
	var mf memoryFlags
	mf.register(fs, false)
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}

	p, err := updatePatch(cmd, fs, &mf, *value, *noCues, meta)
	if err != nil {
		return err
	}
	p.Reason = *reason

	return m.changeMemory(ctx, cmd, &sf, *asJSON, func(ctx context.Context, svc engram.Service) (*engram.Memory, error) {
		return svc.UpdateMemory(ctx, sf.scope(), id, p)
	})
}

// updatePatch is the patch of the fields whose flags were given on the
// command line; a usage error when none was, or when --cue and --no-cues
// both were.
func updatePatch(cmd *Command, fs *flag.FlagSet, mf *memoryFlags, value string, noCues bool, meta metaFlag) (engram.MemoryPatch, error) {
	var p engram.MemoryPatch
	changed := false
	set := func(name string) bool {
		ok := flagWasSet(fs, name)
		changed = changed || ok
		return ok
	}
	if set("value") {
		p.Value = &value
	}
	if set("kind") {
		k := engram.Kind(mf.kind)
		p.Kind = &k
	}
	if set("abstraction") {
		p.Abstraction = &mf.abstraction
	}
	switch cues := set("cue"); {
	case cues && noCues:
		return p, cmdUsageErrorf(cmd, "give --cue or --no-cues, not both")
	case cues:
		v := []string(mf.cues)
		p.Cues = &v
	case noCues:
		changed = true
		p.Cues = &[]string{}
	}
	if set("language") {
		p.Language = &mf.language
	}
	if set("confidence") {
		p.Confidence = &mf.confidence
	}
	if set("importance") {
		p.Importance = &mf.importance
	}
	if set("valid-from") {
		p.ValidFrom = mf.validFrom.t
	}
	if set("valid-to") {
		p.ValidTo = mf.validTo.t
	}
	if set("expires-at") {
		p.ExpiresAt = mf.expiresAt.t
	}
	if set("meta") {
		p.Metadata = meta
	}
	if !changed {
		return p, cmdUsageErrorf(cmd, "nothing to update: give at least one field, e.g. --value")
	}
	return p, nil
}

// changeMemory runs change against the service (a missing data directory
// is an error) and prints the memory it returns, as JSON with asJSON; an
// error of change is returned as is. update, restore and rollback share it.
func (m *Main) changeMemory(ctx context.Context, cmd *Command, sf *storeFlags, asJSON bool, change func(ctx context.Context, svc engram.Service) (*engram.Memory, error)) error {
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		mem, err := change(ctx, svc)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(m.Stdout, mem)
		}
		fmt.Fprintln(m.Stdout, memoryLine(mem))
		return nil
	})
}

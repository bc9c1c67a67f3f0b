package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

var scanCommand = &Command{
	Name:     "scan",
	Synopsis: "find secrets and personal data in stored records, and treat them",
	Usage: `
Usage: engram scan [--apply] [flags]

Reads every episode and memory of the scope of --org, --project, --user,
--agent and --session (episodes with their speakers, memories in any
status with their versions) and reports the secrets and personal data in
their texts: by user and kind, how many and in which records (ids, never
the values). Without --user it sweeps the whole tenant: the records of
no user and those of every user (--agent and --session narrowing each). Writes treat what they
bring as the tenant's policy says (see engram sensitive); records stored
before, or under another policy, are treated by --apply: each record
holding a finding the policy does not keep is rewritten with typed
placeholders, its spans sealed into the vault (ENGRAM_VAULT_KEY) or
redacted, its full-text entries and vectors made anew from the new text,
and the old text forgotten by the embedding cache and scrubbed from the
store's files as after a hard delete. Each record is rewritten in a
transaction of its own.

scan works on a data directory (--data), a PostgreSQL store (--store) or
through a running server (--server, with an admin key of the whole tenant
in --key or ENGRAM_API_KEY where the server requires keys): the server
scans and treats, and answers kinds, counts and record ids, never a
value. In local mode the server's default policy is that of
ENGRAM_SENSITIVE; through a server, the server's.`,
	Run: runScan,
}

func runScan(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	apply := fs.Bool("apply", false, "treat the findings as the tenant's policy says, rewriting the records that hold them")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "scan takes no arguments, got %q", pos[0])
	}
	scanner, closeFn, err := sf.scanner(ctx, cmd, m)
	if err != nil {
		return err
	}
	defer closeFn()
	rep, err := scanner.ScanSensitive(sf.context(ctx), sf.scope(), *apply)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(m.Stdout, rep)
	}
	printScan(m, rep)
	return nil
}

func printScan(m *Main, rep *engram.SensitiveScan) {
	if rep.Users > 0 {
		fmt.Fprintf(m.Stdout, "scanned %d users, %d episodes and %d memories\n", rep.Users, rep.Episodes, rep.Memories)
	} else {
		fmt.Fprintf(m.Stdout, "scanned %d episodes and %d memories\n", rep.Episodes, rep.Memories)
	}
	if len(rep.Found) == 0 {
		fmt.Fprintln(m.Stdout, "found nothing")
	}
	for _, f := range rep.Found {
		who := "no user"
		if f.User != "" {
			who = "user " + strconv.Quote(f.User)
		}
		fmt.Fprintf(m.Stdout, "%-18s %4d of %s in %s\n", f.Kind, f.Count, who, strings.Join(f.Records, " "))
	}
	if len(rep.Treated) > 0 {
		fmt.Fprintf(m.Stdout, "treated: %s\n", engram.SummarizeSensitive(rep.Treated))
	}
}

// scanner returns what scans the tenant's records: the server's with
// --server, else the local engine's (read only unless it must write). The
// returned function releases it.
func (c *storeFlags) scanner(ctx context.Context, cmd *Command, m *Main) (engram.SensitivePolicies, func() error, error) {
	remote, err := c.useServer(cmd)
	if err != nil {
		return nil, nil, err
	}
	if remote {
		return engramhttp.NewClient(c.server, engramhttp.ClientOptions{Key: c.key}), func() error { return nil }, nil
	}
	return c.openLocal(ctx, cmd, m, openRead)
}

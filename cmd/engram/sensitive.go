package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

var sensitiveCommand = &Command{
	Name:     "sensitive",
	Synopsis: "show or set a tenant's treatment of secrets and personal data",
	Usage: `
Usage: engram sensitive [flags]
       engram sensitive --set POLICY [flags]

Every write is scanned for secrets (API keys, private keys, passwords,
connection strings), payment data (cards, IBANs), government ids, emails
and phone numbers; each finding is sealed (a placeholder in the text, the
value encrypted into the vault), redacted (the placeholder only) or kept,
as the policy of its tenant says. Without --set this prints the policy of
the tenant of --org and --project: what is set for it and what writes
apply (the server's default for the groups it leaves out).

--set POLICY replaces the tenant's setting: group=treatment pairs joined by
commas, of the groups secret, payment, id and contact and the treatments
seal, redact and keep ("contact=redact"), or one treatment for every group
("redact"); "default" returns the tenant to the server's default. It applies
to writes from then on, and is audited.

In local mode the server's default is that of ENGRAM_SENSITIVE (as engram
serve --sensitive takes it); with --server it is that server's, and the
key must be an admin key of the tenant.`,
	Run: runSensitive,
}

func runSensitive(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	set := fs.String("set", "", "replace the tenant's `policy` (see above); \"default\" for the server's")
	asJSON := fs.Bool("json", false, "print the policy as JSON")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "sensitive takes no arguments, got %q", pos[0])
	}
	var p engram.SensitivePolicy
	if *set != "default" {
		if p, err = engram.ParseSensitivePolicy(*set); err != nil {
			return cmdUsageErrorf(cmd, "--set: %s", engram.ErrorMessage(err))
		}
	}
	pols, closeFn, err := sf.policies(ctx, cmd, m)
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, n := sf.context(ctx), sf.namespace()
	var tp *engram.TenantPolicy
	if flagWasSet(fs, "set") {
		tp, err = pols.SetSensitivePolicy(ctx, n, p)
	} else {
		tp, err = pols.SensitivePolicy(ctx, n)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(m.Stdout, tp)
	}
	setText := tp.Set.String()
	if setText == "" {
		setText = "nothing (the server's default)"
	}
	fmt.Fprintf(m.Stdout, "tenant %s/%s\nset:     %s\napplied: %s\n", tp.Org, tp.Project, setText, tp.Applied)
	return nil
}

// policies returns the tenants' sensitive policies the command works
// with: the server's with --server, else the local engine's. The returned
// function releases them.
func (c *storeFlags) policies(ctx context.Context, cmd *Command, m *Main) (engram.SensitivePolicies, func() error, error) {
	remote, err := c.useServer(cmd)
	if err != nil {
		return nil, nil, err
	}
	if remote {
		return engramhttp.NewClient(c.server, engramhttp.ClientOptions{Key: c.key}), func() error { return nil }, nil
	}
	return c.openLocal(ctx, cmd, m, openWrite)
}

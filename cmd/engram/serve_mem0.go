package main

import (
	"flag"
	"net/http"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/mem0api"
)

// mem0Flags name the tenant of the Mem0-compatible API (served under
// /mem0) when the server runs without API keys; with keys, each key's
// binding decides.
type mem0Flags struct{ org, project *string }

func (f *mem0Flags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.org = fs.String("mem0-org", envOr(getenv, "ENGRAM_MEM0_ORG", envOr(getenv, "ENGRAM_ORG", "default")),
		"`org` of the Mem0-compatible API under /mem0 with --no-auth (env ENGRAM_MEM0_ORG, else ENGRAM_ORG)")
	f.project = fs.String("mem0-project", envOr(getenv, "ENGRAM_MEM0_PROJECT", envOr(getenv, "ENGRAM_PROJECT", "default")),
		"`project` of the Mem0-compatible API under /mem0 with --no-auth (env ENGRAM_MEM0_PROJECT, else ENGRAM_PROJECT)")
}

// check returns a usage error when the org or project is not a valid name.
func (f *mem0Flags) check(cmd *Command) error {
	if err := (engram.Namespace{Org: *f.org, Project: *f.project}).Validate(); err != nil {
		return cmdUsageErrorf(cmd, "--mem0-org/--mem0-project: %s", engram.ErrorMessage(err))
	}
	return nil
}

// mount serves svc's Mem0-compatible API under /mem0/. Its role is read:
// the handler checks writes and purges against the key itself.
func (f *mem0Flags) mount(svc mem0api.Service) engramhttp.Mount {
	h := mem0api.New(svc, mem0api.Options{Org: *f.org, Project: *f.project})
	return engramhttp.Mount{Pattern: "/mem0/", Handler: http.StripPrefix("/mem0", h), Role: engram.RoleRead}
}

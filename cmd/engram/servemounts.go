package main

import (
	"flag"
	"log/slog"
	"net/http"
	"strings"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/mcp"
	"github.com/engramhq/engram/ui"
)

// mcpFlags name the default scope of MCP calls served without API keys
// (--no-auth); with keys, a call's default scope is its key's binding.
type mcpFlags struct {
	org, project, user string
}

func (f *mcpFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.org, "mcp-org", envOr(getenv, "ENGRAM_ORG", "default"),
		"default organisation of MCP calls at /mcp without API keys (--no-auth) (env ENGRAM_ORG)")
	fs.StringVar(&f.project, "mcp-project", envOr(getenv, "ENGRAM_PROJECT", "default"),
		"default project of MCP calls at /mcp without API keys (--no-auth) (env ENGRAM_PROJECT)")
	fs.StringVar(&f.user, "mcp-user", getenv("ENGRAM_USER"),
		"default user of MCP calls at /mcp without API keys (--no-auth); empty means no user (env ENGRAM_USER)")
}

// check returns a usage error naming the flag whose value is not a valid
// name.
func (f *mcpFlags) check(cmd *Command) error {
	n := engram.Namespace{Org: f.org, Project: f.project, User: f.user}
	if err := n.Validate(); err != nil {
		flags := strings.NewReplacer("namespace.org", "--mcp-org", "namespace.project", "--mcp-project", "namespace.user", "--mcp-user")
		return cmdUsageErrorf(cmd, "%s", flags.Replace(engram.ErrorMessage(err)))
	}
	return nil
}

// mounts are the handlers engram serve serves beside the REST API over
// svc: the MCP endpoint at /mcp (streamable HTTP; read keys may call the
// read tools, write tools check the key's role per call) and the dashboard
// at /ui/ (static files served without a key; its pages call the REST API
// with the key the user signs in with), to which GET / redirects.
func (f *serveFlags) mounts(svc engram.Service) []engramhttp.Mount {
	h := mcp.Handler(svc, mcp.Options{
		Scope:   engram.Namespace{Org: f.mcp.org, Project: f.mcp.project, User: f.mcp.user}.Normalize(),
		Version: buildVersion().Version,
		Logger:  slog.Default(), // engram serve's logger
	})
	return []engramhttp.Mount{
		{Pattern: "/mcp", Handler: h, Role: engram.RoleRead},
		{Pattern: ui.Prefix, Handler: ui.Handler(), Static: true},
		{Pattern: "GET /{$}", Handler: http.RedirectHandler(ui.Prefix, http.StatusFound), Static: true},
	}
}

// sensitiveMounts serve GET and PUT /v1/tenants/{org}/{project}/sensitive
// and POST .../sensitive/scan (admin only) over p: the tenant's treatment
// of secrets and personal data, and the scan of what it stores.
func sensitiveMounts(p engram.SensitivePolicies) []engramhttp.Mount {
	h := engramhttp.SensitivePolicyHandler(p)
	return []engramhttp.Mount{
		{Pattern: engramhttp.SensitivePolicyPattern, Handler: h, Role: engram.RoleAdmin},
		{Pattern: engramhttp.SetSensitivePolicyPattern, Handler: h, Role: engram.RoleAdmin},
		{Pattern: engramhttp.SensitiveScanPattern, Handler: engramhttp.SensitiveScanHandler(p), Role: engram.RoleAdmin},
	}
}

// tenantsMount serves GET /v1/tenants (admin only) over l, the listing the
// dashboard of a server without keys opens on.
func tenantsMount(l engram.TenantLister) engramhttp.Mount {
	return engramhttp.Mount{Pattern: engramhttp.TenantsPattern, Handler: engramhttp.TenantsHandler(l), Role: engram.RoleAdmin}
}

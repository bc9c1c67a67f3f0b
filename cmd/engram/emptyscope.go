package main

import (
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

// noMatch says on standard error, after a search or list that found
// nothing, which scope it read, and whether that scope holds nothing at
// all (empty: a wrong --org, --project or --user is the likely cause) or
// holds records none of which matched.
func (m *Main) noMatch(what string, sc engram.Scope, empty bool) {
	fmt.Fprintf(m.Stderr, "engram: no %s in %s\n", what, scopeText(sc))
	if empty {
		fmt.Fprintln(m.Stderr, `engram: this scope holds nothing: name the one you mean with --org, --project and --user (ENGRAM_ORG, ENGRAM_PROJECT, ENGRAM_USER); org and project default to "default", user to none`)
		return
	}
	fmt.Fprintln(m.Stderr, "engram: the scope holds records, but none matched")
}

// scopeText names a scope's fields for a person: "org acme, project app,
// user ann"; a user left out is "no user".
func scopeText(sc engram.Scope) string {
	parts := []string{"org " + sc.Org, "project " + sc.Project}
	if sc.User == "" {
		parts = append(parts, "no user")
	} else {
		parts = append(parts, "user "+sc.User)
	}
	if sc.Agent != "" {
		parts = append(parts, "agent "+sc.Agent)
	}
	if sc.Session != "" {
		parts = append(parts, "session "+sc.Session)
	}
	if sc.IncludeShared {
		parts = append(parts, "with the shared level")
	}
	return strings.Join(parts, ", ")
}

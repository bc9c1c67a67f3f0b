package engram

import (
	"strings"
	"unicode/utf8"
)

// Namespace says whom a record belongs to. Org and Project are required;
// User, Agent and Session narrow it. A record with an empty User belongs to
// the project (or to an agent of it) and is shared with every user of the
// project only when read with Scope.IncludeShared.
//
// The pair (Org, Project) is the tenant: every table's key and index leads
// with it, so a sharded deployment distributes by it.
type Namespace struct {
	Org     string `json:"org"`
	Project string `json:"project"`
	User    string `json:"user,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
}

// Tenant returns the canonical "org/project" key that leads every stored key.
func (n Namespace) Tenant() string { return n.Org + "/" + n.Project }

// MaxNameLen is the longest org, project, user, agent or session name.
const MaxNameLen = 128

// Validate returns an EINVALID error naming the first bad field.
func (n Namespace) Validate() error {
	if n.Org == "" {
		return Errorf(EINVALID, "namespace: org is required")
	}
	if n.Project == "" {
		return Errorf(EINVALID, "namespace: project is required")
	}
	for _, f := range []struct{ name, v string }{
		{"org", n.Org}, {"project", n.Project}, {"user", n.User}, {"agent", n.Agent}, {"session", n.Session},
	} {
		if err := validName(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

func validName(field, v string) error {
	if len(v) > MaxNameLen {
		return Errorf(EINVALID, "namespace: %s is longer than %d bytes", field, MaxNameLen)
	}
	if !utf8.ValidString(v) {
		return Errorf(EINVALID, "namespace: %s is not valid UTF-8", field)
	}
	if strings.ContainsAny(v, "/\x00") || strings.TrimSpace(v) != v {
		return Errorf(EINVALID, "namespace: %s %q may not contain '/', NUL or surrounding spaces", field, v)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return Errorf(EINVALID, "namespace: %s may not contain control characters", field)
		}
	}
	return nil
}

// Scope names what a read or a scoped write may touch. Org and Project are
// required. User always matches exactly: an empty User means "records that
// belong to no user" (project or agent records), never "all users". Agent
// and Session, when set, match exactly; when empty they match any value. So
// {user: "u"} is a user across all sessions and agents, {user: "u",
// session: "s"} one session, {agent: "a"} one agent's own records.
//
// IncludeShared additionally admits records with no user, agent and session
// (memories shared at project level) in reads; it never widens a write.
type Scope struct {
	Org           string `json:"org"`
	Project       string `json:"project"`
	User          string `json:"user,omitempty"`
	Agent         string `json:"agent,omitempty"`
	Session       string `json:"session,omitempty"`
	IncludeShared bool   `json:"include_shared,omitempty"`
}

// Namespace returns the namespace a write in this scope creates records in.
func (s Scope) Namespace() Namespace {
	return Namespace{Org: s.Org, Project: s.Project, User: s.User, Agent: s.Agent, Session: s.Session}
}

// ScopeOf returns the narrowest scope that holds n.
func ScopeOf(n Namespace) Scope {
	return Scope{Org: n.Org, Project: n.Project, User: n.User, Agent: n.Agent, Session: n.Session}
}

// Tenant returns the "org/project" key of the scope.
func (s Scope) Tenant() string { return s.Org + "/" + s.Project }

// Validate returns an EINVALID error naming the first bad field.
func (s Scope) Validate() error { return s.Namespace().Validate() }

// Contains reports whether a record in namespace n is visible in scope s.
// Stores implement the same rule in their queries; this is the reference.
func (s Scope) Contains(n Namespace) bool {
	if n.Org != s.Org || n.Project != s.Project {
		return false
	}
	if s.IncludeShared && n.User == "" && n.Agent == "" && n.Session == "" {
		return true
	}
	if n.User != s.User {
		return false
	}
	if s.Agent != "" && n.Agent != s.Agent {
		return false
	}
	if s.Session != "" && n.Session != s.Session {
		return false
	}
	return true
}

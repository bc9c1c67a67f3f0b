package engram

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
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

// Validate returns an EINVALID error naming the first bad field, as
// namespace.org, namespace.user and so on. Names must be valid UTF-8 in
// Unicode NFC (see Normalize), at most MaxNameLen bytes, without '/',
// surrounding spaces, control characters or the bidirectional override and
// isolate characters that make one name display as another, nor invisible
// characters, compatibility forms or look-alike mixes of scripts (see
// checkLookalikes).
func (n Namespace) Validate() error {
	if n.Org == "" {
		return Errorf(EINVALID, "namespace.org is required")
	}
	if n.Project == "" {
		return Errorf(EINVALID, "namespace.project is required")
	}
	for _, f := range []struct{ name, v string }{
		{"org", n.Org}, {"project", n.Project}, {"user", n.User}, {"agent", n.Agent}, {"session", n.Session},
	} {
		if err := validName("namespace."+f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// Normalize returns n with every name in Unicode NFC, so that a name typed
// with a combining accent and the same name precomposed are one namespace.
// Transports call it on what they receive; Validate refuses names that are
// not normalized, so nothing else can store the other spelling.
func (n Namespace) Normalize() Namespace {
	for _, p := range []*string{&n.Org, &n.Project, &n.User, &n.Agent, &n.Session} {
		*p = norm.NFC.String(*p)
	}
	return n
}

func validName(field, v string) error {
	if len(v) > MaxNameLen {
		return Errorf(EINVALID, "%s is longer than %d bytes", field, MaxNameLen)
	}
	if !utf8.ValidString(v) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	if strings.ContainsAny(v, "/\x00") || strings.TrimSpace(v) != v {
		return Errorf(EINVALID, "%s %q may not contain '/', NUL or surrounding spaces", field, v)
	}
	for _, r := range v {
		switch {
		case r < 0x20 || r >= 0x7f && r < 0xa0:
			return Errorf(EINVALID, "%s may not contain control characters", field)
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return Errorf(EINVALID, "%s may not contain the bidirectional control character U+%04X", field, r)
		}
	}
	if !norm.NFC.IsNormalString(v) {
		return Errorf(EINVALID, "%s %q is not in Unicode normalization form NFC", field, v)
	}
	return checkLookalikes(field, v)
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
//
// ExactAgent makes an empty Agent match only records of no agent, as a
// set one matches only its own: the engine's formation reads a user's
// sessions so, for turns said without an agent. It is the engine's, not
// the API's (no JSON), and a store filters by it as by Agent, so a
// listing with a limit fills it from the records the scope admits.
type Scope struct {
	Org           string `json:"org"`
	Project       string `json:"project"`
	User          string `json:"user,omitempty"`
	Agent         string `json:"agent,omitempty"`
	Session       string `json:"session,omitempty"`
	IncludeShared bool   `json:"include_shared,omitempty"`
	ExactAgent    bool   `json:"-"`
}

// AllAgents reports whether s admits the records of every agent of its
// user: it names no agent and is not ExactAgent.
func (s Scope) AllAgents() bool { return s.Agent == "" && !s.ExactAgent }

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

// Validate returns an EINVALID error naming the first bad field; see
// Namespace.Validate.
func (s Scope) Validate() error { return s.Namespace().Validate() }

// Normalize returns s with every name in Unicode NFC; see
// Namespace.Normalize.
func (s Scope) Normalize() Scope {
	n := s.Namespace().Normalize()
	s.Org, s.Project, s.User, s.Agent, s.Session = n.Org, n.Project, n.User, n.Agent, n.Session
	return s
}

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
	if !s.AllAgents() && n.Agent != s.Agent {
		return false
	}
	if s.Session != "" && n.Session != s.Session {
		return false
	}
	return true
}

package engram

import (
	"context"
	"strings"
)

// MetaProfile is the metadata key that marks, with the value true, the
// core memory holding a user's profile.
const MetaProfile = "profile"

// Metadata keys of the profile memory's lists.
const (
	MetaTraits = "traits" // stable traits, most important first
	MetaStates = "states" // transient states, most important first
)

// Profile is what engram holds about one user: the traits and states of
// the profile a former maintains (empty without one) and the active core
// memories of the scope, the profile memory first.
type Profile struct {
	Traits   []string `json:"traits"`
	States   []string `json:"states"`
	Memories []Memory `json:"memories"`
}

// ProfileNamespace returns the namespace that holds the profile of ns: a
// profile is about a user, so it is ns without its session and, when ns
// names a user, without its agent too; one profile per (org, project,
// user) whatever agent or session the turns come in. Without a user it is
// the agent's profile (org, project, agent), or the project's. Every
// scope of that user reads and rewrites it (see ProfileScope); no other
// user's scope contains it.
func ProfileNamespace(ns Namespace) Namespace {
	ns.Session = ""
	if ns.User != "" {
		ns.Agent = ""
	}
	return ns
}

// ProfileScope returns the scope that holds the profile of scope s's user
// (see ProfileNamespace), without IncludeShared.
func ProfileScope(s Scope) Scope { return ScopeOf(ProfileNamespace(s.Namespace())) }

// IsProfile reports whether m is a profile memory: a core memory with
// MetaProfile set to true.
func IsProfile(m *Memory) bool {
	return m != nil && m.Kind == KindCore && m.Metadata[MetaProfile] == true
}

// UserProfile returns the active profile memory stored in exactly the
// profile namespace of s's user (ProfileScope), or nil when there is none.
// It reads the user's scope, which is wider than a session's or an
// agent's s but never another user's. It fails with r's errors.
func UserProfile(ctx context.Context, r Reader, s Scope) (*Memory, error) {
	ps := ProfileScope(s)
	ms, _, err := r.ListMemories(ctx, ps, MemoryFilter{
		Kinds: []Kind{KindCore}, Metadata: map[string]any{MetaProfile: true}, Limit: MaxLimit,
	})
	if err != nil {
		return nil, err
	}
	for i := range ms {
		if ms[i].Namespace == ps.Namespace() && IsProfile(&ms[i]) {
			return &ms[i], nil
		}
	}
	return nil, nil
}

// ProfileMemory returns the core memory that holds a profile of traits
// and states in namespace ns, its value the lists as lines.
func ProfileMemory(ns Namespace, traits, states []string) Memory {
	var b strings.Builder
	for _, t := range traits {
		b.WriteString(t + "\n")
	}
	for _, s := range states {
		b.WriteString("(now) " + s + "\n")
	}
	v := strings.TrimSpace(b.String())
	if v == "" {
		v = "(empty profile)"
	}
	return Memory{
		Namespace: ns, Kind: KindCore, Abstraction: "profile", Value: v,
		Confidence: 1, Importance: 1,
		Metadata: map[string]any{MetaProfile: true, MetaTraits: anys(traits), MetaStates: anys(states)},
	}
}

// ProfileOf returns the traits and states of a profile memory; nil lists
// for nil or a memory that is not one.
func ProfileOf(m *Memory) (traits, states []string) {
	if m == nil || m.Metadata[MetaProfile] != true {
		return nil, nil
	}
	return strs(m.Metadata[MetaTraits]), strs(m.Metadata[MetaStates])
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func strs(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, l...)
	}
	return out
}

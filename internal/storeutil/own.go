package storeutil

import "github.com/engramhq/engram"

// OwnMemories drops from ms, read in scope s, each memory of the project
// (user ”) whose id the user's own memory also has. Memory ids are unique
// per user, so only a scope that includes shared records can read two
// under one id, and the user's own is the one meant, as GetMemory reads it.
func OwnMemories(s engram.Scope, ms []engram.Memory) []engram.Memory {
	if !s.IncludeShared || s.User == "" {
		return ms
	}
	own := map[string]bool{}
	for _, m := range ms {
		if m.Namespace.User == s.User {
			own[m.ID] = true
		}
	}
	out := ms[:0]
	for _, m := range ms {
		if m.Namespace.User == s.User || !own[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// OwnVersions keeps of vs, the history of one memory id read in scope s,
// the user's own versions when the project's memory with the id has a
// history too (see OwnMemories).
func OwnVersions(s engram.Scope, vs []engram.Version) []engram.Version {
	if !s.IncludeShared || s.User == "" {
		return vs
	}
	own := false
	for _, v := range vs {
		own = own || v.Namespace.User == s.User
	}
	if !own {
		return vs
	}
	out := vs[:0]
	for _, v := range vs {
		if v.Namespace.User == s.User {
			out = append(out, v)
		}
	}
	return out
}

// Located is the answer of a Locator to the namespaces found holding the
// memory id: the one, ENOTFOUND for none, ECONFLICT for several (users of
// one tenant may each hold the id; the caller names the user then).
func Located(id string, found []engram.Namespace) (engram.Namespace, error) {
	switch len(found) {
	case 0:
		return engram.Namespace{}, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	case 1:
		return found[0], nil
	}
	return engram.Namespace{}, engram.Errorf(engram.ECONFLICT, "memory %s is held by several users of the tenant; name the user", id)
}

package engine

import (
	"context"
	"slices"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// profileLimit bounds the core memories a profile read returns.
const profileLimit = 200

// Profile returns the profile of scope s: the traits and states of the
// profile memory a former keeps for s's user (see
// engram.ProfileNamespace; none without one), whatever session or agent s
// names, and the active core memories of s, the profile memory first, then
// by importance. It fails with EINVALID for a bad scope and with the
// store's errors.
func (e *memories) Profile(ctx context.Context, s engram.Scope) (*engram.Profile, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	var ms []engram.Memory
	var prof *engram.Memory
	err = e.store.View(ctx, func(r engram.Reader) error {
		if ms, _, err = r.ListMemories(ctx, s, engram.MemoryFilter{Kinds: []engram.Kind{engram.KindCore}, Limit: profileLimit}); err != nil {
			return err
		}
		prof, err = engram.UserProfile(ctx, r, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &engram.Profile{Traits: []string{}, States: []string{}, Memories: orderProfile(ms, prof, s.Namespace())}
	if len(p.Memories) > 0 && p.Memories[0].Metadata[engram.MetaProfile] == true {
		t, st := engram.ProfileOf(&p.Memories[0])
		p.Traits, p.States = append(p.Traits, t...), append(p.States, st...)
	}
	return p, nil
}

// orderProfile puts the user's profile memory prof first (when nil, the
// profile memory of ns in ms, else the latest updated one: profiles kept
// per session before profiles were per user), then the rest of ms by
// importance, and drops other profile memories.
func orderProfile(ms []engram.Memory, prof *engram.Memory, ns engram.Namespace) []engram.Memory {
	rest := []engram.Memory{}
	for i := range ms {
		m := &ms[i]
		if m.Metadata[engram.MetaProfile] != true {
			rest = append(rest, *m)
			continue
		}
		if prof == nil || (prof.Namespace != engram.ProfileNamespace(ns) && prof.Namespace != ns && (m.Namespace == ns || m.UpdatedAt.After(prof.UpdatedAt))) {
			prof = m
		}
	}
	slices.SortStableFunc(rest, func(a, b engram.Memory) int {
		switch {
		case a.Importance > b.Importance:
			return -1
		case a.Importance < b.Importance:
			return 1
		}
		return 0
	})
	if prof == nil {
		return rest
	}
	return append([]engram.Memory{*prof}, rest...)
}

// readProfile returns the current profile memory of the search scope's
// user, or nil, for a search that assembles a context.
func readProfile(ctx context.Context, r engram.Reader, s engram.Scope) (*engram.Memory, error) {
	if prof, err := engram.UserProfile(ctx, r, s); prof != nil || err != nil {
		return prof, err
	}
	ms, _, err := r.ListMemories(ctx, s, engram.MemoryFilter{
		Kinds: []engram.Kind{engram.KindCore}, Metadata: map[string]any{engram.MetaProfile: true}, Limit: profileLimit,
	})
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	m := orderProfile(ms, nil, s.Namespace())[0]
	return &m, nil
}

// withProfile starts a context within budget with the profile's line,
// when there is a profile and its line takes at most half the budget; it
// returns the assembler and how many lines it holds (0 or 1).
func withProfile(prof *engram.Memory, budget int, c retrieval.Counter) (*retrieval.Assembler, int) {
	a := retrieval.NewAssembler(budget, c)
	if prof == nil {
		return a, 0
	}
	line := retrieval.Render(prof)
	if c.Count(line)+1 > budget/2 || !a.AddLine(line) {
		return a, 0
	}
	return a, 1
}

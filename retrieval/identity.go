package retrieval

import (
	"context"
	"slices"

	"github.com/engramhq/engram"
)

// ChannelIdentity is the channel of persons' faces and voices (see
// Identity).
const ChannelIdentity = "identity"

// identityEpisodes is the most episodes the identity channel reads the
// memories of.
const identityEpisodes = engram.MaxLimit

// Identity is the channel of persistent identities: when the query names
// a person, by their name or any alias, or names an entity of the graph
// linked to a person, it finds the memories formed from the episodes in
// which the person's face or voice identities were observed, newest first.
// A user without persons gives no candidates.
type Identity struct{}

// Name implements Channel.
func (Identity) Name() string { return ChannelIdentity }

// Prepare implements Channel: the identity channel has nothing to
// prepare.
func (i Identity) Prepare(context.Context, *Gathering) (Gatherer, error) { return i, nil }

// Prefetch implements Gatherer; the identity channel has nothing to
// prefetch.
func (Identity) Prefetch(*Gathering) {}

// Gather implements Gatherer, reading the identities of g.Reader; it
// fails with the store's error.
func (Identity) Gather(ctx context.Context, g *Gathering) ([]Find, error) {
	if len(g.Filter.Sources) > 0 {
		return nil, nil
	}
	keys, _ := queryKeys(g.Query)
	if len(keys) == 0 {
		return nil, nil
	}
	is := engram.IdentityScope(g.Scope)
	persons, err := g.Reader.ListPersons(ctx, is)
	if err != nil || len(persons) == 0 {
		return nil, err
	}
	named, err := namedPersons(ctx, g, persons, keys)
	if err != nil || len(named) == 0 {
		return nil, err
	}
	eps, err := personEpisodes(ctx, g.Reader, is, named)
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	f := g.Filter
	f.Sources, f.Limit = eps, min(g.Pool, engram.MaxLimit)
	ms, _, err := g.Reader.ListMemories(ctx, g.Scope, f)
	if err != nil {
		return nil, err
	}
	out := make([]Find, len(ms))
	for i := range ms {
		out[i] = Find{Memory: &ms[i], Rank: i + 1, Score: 1 / float64(i+1)}
	}
	return out, nil
}

// namedPersons returns the ids of the persons whose name or alias is among
// keys or whose entity of the graph the keys name.
func namedPersons(ctx context.Context, g *Gathering, persons []engram.Person, keys []string) ([]string, error) {
	es, err := graphOf(g).FindEntities(ctx, engram.EntityScope(g.Scope), keys)
	if err != nil {
		return nil, err
	}
	entities := make(map[string]bool, len(es))
	for _, e := range es {
		entities[e.ID] = true
	}
	var out []string
	for _, p := range persons {
		if entities[p.EntityID] || slices.ContainsFunc(p.Names(), func(n string) bool { return slices.Contains(keys, n) }) {
			out = append(out, p.ID)
		}
	}
	return out, nil
}

// personEpisodes returns the ids of the episodes the persons' identities
// were observed in, newest observation first, each once.
func personEpisodes(ctx context.Context, ir engram.IdentityReader, s engram.Scope, persons []string) ([]string, error) {
	var ids []string
	for _, p := range persons {
		xs, err := ir.ListIdentities(ctx, s, engram.IdentityFilter{PersonID: p})
		if err != nil {
			return nil, err
		}
		for _, x := range xs {
			ids = append(ids, x.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	obs, err := ir.ListObservations(ctx, s, engram.ObservationFilter{IdentityIDs: ids})
	if err != nil {
		return nil, err
	}
	var eps []string
	for _, o := range obs {
		if o.EpisodeID != "" && !slices.Contains(eps, o.EpisodeID) && len(eps) < identityEpisodes {
			eps = append(eps, o.EpisodeID)
		}
	}
	return eps, nil
}

package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/identity"
)

var _ engram.IdentityService = (*Engine)(nil)

// SourceCluster is the source of the merges the clustering decides.
const SourceCluster = "cluster"

// idTx is one identity transaction: the store's transaction, which reads
// and writes identities, the owner's scope and namespace, who acts and
// when.
type idTx struct {
	ctx   context.Context
	tx    engram.Tx
	s     engram.Scope
	owner engram.Namespace
	actor string
	e     *media
}

// identityUpdate runs fn in one write transaction of the identities of s's
// user; EINVALID when s is bad, else fn's or the store's error.
func (e *media) identityUpdate(ctx context.Context, s engram.Scope, fn func(t *idTx) error) error {
	s, err := writeScope(engram.IdentityScope(s))
	if err != nil {
		return err
	}
	return e.store.Update(ctx, func(tx engram.Tx) error {
		return fn(&idTx{ctx: ctx, tx: tx, s: s, owner: s.Namespace(), actor: engram.ActorFrom(ctx), e: e})
	})
}

// identityView runs fn in a read transaction once s is checked; EINVALID
// when s is bad, else fn's or the store's error.
func (e *media) identityView(ctx context.Context, s engram.Scope, fn func(r engram.Reader) error) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return e.store.View(ctx, fn)
}

// event appends an event of t's owner to the history.
func (t *idTx) event(ev engram.IdentityEvent) error {
	ev.ID, ev.Namespace, ev.Actor, ev.At = engram.NewID(), t.owner, t.actor, t.e.clock()
	return t.tx.InsertIdentityEvent(t.ctx, &ev)
}

// identity returns the identity id of t's scope; ENOTFOUND names field.
func (t *idTx) identity(field, id string) (*engram.Identity, error) {
	i, err := t.tx.GetIdentity(t.ctx, t.s, id)
	if engram.IsNotFound(err) || engram.ErrorCode(err) == engram.EINVALID {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s: identity %q not found", field, id)
	}
	return i, err
}

// AddObservations implements engram.IdentityService: the batch is
// checked whole (an embedding whose width is not its modality's declared
// dim is EINVALID naming it), new modalities are declared by their first
// observation, each observation joins the identity of its modality that
// identity.Default.Place picks or starts one, and a merge pass joins the
// identities that have come close. All in one transaction.
func (e *media) AddObservations(ctx context.Context, req engram.AddObservationsRequest) (*engram.AddObservationsResult, error) {
	if err := checkObservations(req); err != nil {
		return nil, err
	}
	var res *engram.AddObservationsResult
	err := e.identityUpdate(ctx, engram.ScopeOf(req.Namespace), func(t *idTx) error {
		if err := t.declare(req.Observations); err != nil {
			return err
		}
		c, err := t.loadClusters(req.Observations)
		if err != nil {
			return err
		}
		res = &engram.AddObservationsResult{}
		for _, in := range req.Observations {
			o, err := c.place(t, in)
			if err != nil {
				return err
			}
			res.Observations = append(res.Observations, *o)
		}
		if res.Merged, err = c.mergePass(t); err != nil {
			return err
		}
		for i := range res.Observations {
			res.Observations[i].IdentityID = c.resolve(res.Observations[i].IdentityID)
		}
		return c.save(t)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ListIdentities implements engram.IdentityService.
func (e *media) ListIdentities(ctx context.Context, s engram.Scope, f engram.IdentityFilter) ([]engram.Identity, error) {
	if f.Modality != "" {
		if err := engram.ValidModalityName(f.Modality); err != nil {
			return nil, err
		}
	}
	if f.PersonID != "" && !engram.ValidID(f.PersonID) {
		return nil, engram.Errorf(engram.EINVALID, "person_id %q is not a valid id", f.PersonID)
	}
	var out []engram.Identity
	err := e.identityView(ctx, s, func(r engram.Reader) (err error) {
		out, err = r.ListIdentities(ctx, engram.IdentityScope(s), f)
		return err
	})
	if out == nil {
		out = []engram.Identity{}
	}
	return out, err
}

// GetIdentity implements engram.IdentityService: the episodes are those of
// its observations that s (with its agent and session) can read.
func (e *media) GetIdentity(ctx context.Context, s engram.Scope, id string) (*engram.IdentityDetail, error) {
	var d *engram.IdentityDetail
	err := e.identityView(ctx, s, func(r engram.Reader) error {
		i, err := r.GetIdentity(ctx, engram.IdentityScope(s), id)
		if err != nil {
			return err
		}
		obs, err := r.ListObservations(ctx, engram.IdentityScope(s), engram.ObservationFilter{IdentityIDs: []string{id}})
		if err != nil {
			return err
		}
		eps, err := observedEpisodes(ctx, r, s, obs)
		if err != nil {
			return err
		}
		d = &engram.IdentityDetail{Identity: *i, Observations: obs, Episodes: eps}
		return nil
	})
	return d, err
}

// observedEpisodes returns the episodes obs were observed in that s can
// read, each once.
func observedEpisodes(ctx context.Context, rd engram.Reader, s engram.Scope, obs []engram.Observation) ([]engram.Episode, error) {
	var out []engram.Episode
	seen := map[string]bool{}
	for _, o := range obs {
		if o.EpisodeID == "" || seen[o.EpisodeID] {
			continue
		}
		seen[o.EpisodeID] = true
		ep, err := rd.GetEpisode(ctx, s, o.EpisodeID)
		if engram.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, *ep)
	}
	return out, nil
}

// DeleteIdentity implements engram.IdentityService: the identity and its
// observations are removed for good, and its person too when it has no
// identity left.
func (e *media) DeleteIdentity(ctx context.Context, s engram.Scope, id string) error {
	return e.identityUpdate(ctx, s, func(t *idTx) error {
		i, err := t.identity("id", id)
		if err != nil {
			return err
		}
		if err := t.tx.DeleteIdentity(ctx, t.owner, id); err != nil {
			return err
		}
		if err := t.dropLonelyPerson(i.PersonID); err != nil {
			return err
		}
		return t.event(engram.IdentityEvent{Op: engram.IdentityDelete, Identities: []string{id}, PersonID: i.PersonID, Source: engram.PersonAsserted})
	})
}

// dropLonelyPerson deletes person id when no identity links to it.
func (t *idTx) dropLonelyPerson(id string) error {
	if id == "" {
		return nil
	}
	left, err := t.tx.ListIdentities(t.ctx, t.s, engram.IdentityFilter{PersonID: id})
	if err != nil || len(left) > 0 {
		return err
	}
	return t.tx.DeletePerson(t.ctx, t.owner, id)
}

// LinkIdentities implements engram.IdentityService. The person is the one
// named by PersonID, else the person of a listed identity, else the one
// already known by the name, else a new one; a name it does not have yet
// becomes its name or an alias, and the graph's entity of that name (when
// the store keeps the graph) its entity. A person keeps the source it was
// made with unless an episode states it.
func (e *media) LinkIdentities(ctx context.Context, s engram.Scope, req engram.LinkRequest) (*engram.Person, error) {
	if req.Source == "" {
		req.Source = engram.PersonAsserted
	}
	if len(req.Identities) == 0 && req.Name == "" {
		return nil, engram.Errorf(engram.EINVALID, "identities: a link needs identities or a name")
	}
	if len(req.Identities) > engram.MaxLimit {
		return nil, engram.Errorf(engram.ETOOLARGE, "identities: %d, more than the limit of %d", len(req.Identities), engram.MaxLimit)
	}
	var p *engram.Person
	err := e.identityUpdate(ctx, s, func(t *idTx) error {
		ids, err := t.linked(req.Identities)
		if err != nil {
			return err
		}
		if req.EpisodeID != "" {
			if _, err := t.tx.GetEpisode(ctx, s, req.EpisodeID); err != nil {
				return engram.Errorf(engram.ENOTFOUND, "episode_id: episode %q not found", req.EpisodeID)
			}
		}
		if p, err = t.person(req, ids); err != nil {
			return err
		}
		if err := t.name(p, req.Name); err != nil {
			return err
		}
		// A person keeps the source it was made with, unless an episode
		// now states what a client only asserted.
		if p.Source == "" || req.Source == engram.PersonStated {
			p.Source, p.EpisodeID = req.Source, req.EpisodeID
		}
		p.UpdatedAt = e.clock()
		if err := t.tx.PutPerson(ctx, p); err != nil {
			return err
		}
		for _, i := range ids {
			old := i.PersonID
			i.PersonID, i.UpdatedAt = p.ID, e.clock()
			if err := t.tx.PutIdentity(ctx, i); err != nil {
				return err
			}
			if old != "" && old != p.ID {
				if err := t.dropLonelyPerson(old); err != nil {
					return err
				}
			}
		}
		if err := t.event(engram.IdentityEvent{Op: engram.IdentityLink, Identities: req.Identities, PersonID: p.ID, Source: req.Source, EpisodeID: req.EpisodeID}); err != nil {
			return err
		}
		return t.fillIdentities(p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// linked reads the identities of a link; ENOTFOUND names the first
// unknown one.
func (t *idTx) linked(ids []string) ([]*engram.Identity, error) {
	var out []*engram.Identity
	for i, id := range ids {
		x, err := t.identity(fmt.Sprintf("identities[%d]", i), id)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// person returns the person a link goes to (see LinkIdentities).
func (t *idTx) person(req engram.LinkRequest, ids []*engram.Identity) (*engram.Person, error) {
	if req.PersonID != "" {
		p, err := t.tx.GetPerson(t.ctx, t.s, req.PersonID)
		if engram.IsNotFound(err) || engram.ErrorCode(err) == engram.EINVALID {
			return nil, engram.Errorf(engram.ENOTFOUND, "person_id: person %q not found", req.PersonID)
		}
		return p, err
	}
	for _, i := range ids {
		if i.PersonID != "" {
			if p, err := t.tx.GetPerson(t.ctx, t.s, i.PersonID); err == nil {
				return p, nil
			} else if !engram.IsNotFound(err) {
				return nil, err
			}
		}
	}
	if key := engram.NormalizeName(req.Name); key != "" {
		ps, err := t.tx.ListPersons(t.ctx, t.s)
		if err != nil {
			return nil, err
		}
		for i := range ps {
			if slices.Contains(ps[i].Names(), key) {
				return &ps[i], nil
			}
		}
	}
	return &engram.Person{ID: engram.NewID(), Namespace: t.owner, CreatedAt: t.e.clock()}, nil
}

// name gives p the name (or, when it has another, the alias) name and the
// graph's entity of that name.
func (t *idTx) name(p *engram.Person, name string) error {
	key := engram.NormalizeName(name)
	if key == "" {
		return nil
	}
	switch {
	case p.Name == "":
		p.Name = name
	case !slices.Contains(p.Names(), key):
		if len(p.Aliases) >= engram.MaxAliases {
			return engram.Errorf(engram.EINVALID, "name: person %s has %d aliases already, the limit", p.ID, engram.MaxAliases)
		}
		p.Aliases = append(p.Aliases, name)
	}
	if p.EntityID != "" {
		return nil
	}
	es, err := t.tx.FindEntities(t.ctx, engram.EntityScope(t.s), p.Names())
	if err != nil {
		return err
	}
	if len(es) > 0 {
		slices.SortFunc(es, func(a, b engram.Entity) int { return b.Mentions - a.Mentions })
		p.EntityID = es[0].ID
	}
	return nil
}

// fillIdentities sets p.Identities from the store.
func (t *idTx) fillIdentities(p *engram.Person) error {
	ids, err := t.tx.ListIdentities(t.ctx, t.s, engram.IdentityFilter{PersonID: p.ID})
	p.Identities = nil
	for _, i := range ids {
		p.Identities = append(p.Identities, i.ID)
	}
	return err
}

// UnlinkIdentity implements engram.IdentityService; an identity that is
// not linked is returned as it is. A person left without identities goes.
func (e *media) UnlinkIdentity(ctx context.Context, s engram.Scope, id string) (*engram.Identity, error) {
	var i *engram.Identity
	err := e.identityUpdate(ctx, s, func(t *idTx) (err error) {
		if i, err = t.identity("id", id); err != nil || i.PersonID == "" {
			return err
		}
		old := i.PersonID
		i.PersonID, i.UpdatedAt = "", e.clock()
		if err := t.tx.PutIdentity(ctx, i); err != nil {
			return err
		}
		if err := t.dropLonelyPerson(old); err != nil {
			return err
		}
		return t.event(engram.IdentityEvent{Op: engram.IdentityUnlink, Identities: []string{id}, PersonID: old, Source: engram.PersonAsserted})
	})
	return i, err
}

// MergeIdentities implements engram.IdentityService: every identity of
// From must be of Into's modality.
func (e *media) MergeIdentities(ctx context.Context, s engram.Scope, req engram.IdentityMergeRequest) (*engram.Identity, error) {
	if len(req.From) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "from: at least one identity to merge is required")
	}
	var into *engram.Identity
	err := e.identityUpdate(ctx, s, func(t *idTx) (err error) {
		if into, err = t.identity("into", req.Into); err != nil {
			return err
		}
		for k, id := range req.From {
			field := fmt.Sprintf("from[%d]", k)
			if id == req.Into {
				return engram.Errorf(engram.EINVALID, "%s: an identity cannot be merged into itself", field)
			}
			from, err := t.identity(field, id)
			if err != nil {
				return err
			}
			if from.Modality != into.Modality {
				return engram.Errorf(engram.EINVALID, "%s: identity %s is of modality %s, %s of %s", field, id, from.Modality, req.Into, into.Modality)
			}
			if err := t.merge(into, from, engram.PersonAsserted); err != nil {
				return err
			}
		}
		return t.tx.PutIdentity(ctx, into)
	})
	return into, err
}

// SplitIdentity implements engram.IdentityService: the listed observations
// (some, not all, of the identity's) go to a new identity whose centroid
// is their mean, and the identity's centroid loses them.
func (e *media) SplitIdentity(ctx context.Context, s engram.Scope, id string, req engram.IdentitySplitRequest) (*engram.Identity, error) {
	if len(req.Observations) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "observations: at least one observation to split off is required")
	}
	if len(req.Observations) > engram.MaxIdentityMembers {
		return nil, engram.Errorf(engram.ETOOLARGE, "observations: %d, more than the limit of %d", len(req.Observations), engram.MaxIdentityMembers)
	}
	var nu *engram.Identity
	err := e.identityUpdate(ctx, s, func(t *idTx) error {
		old, err := t.identity("id", id)
		if err != nil {
			return err
		}
		obs, err := t.tx.ListObservations(ctx, t.s, engram.ObservationFilter{IDs: req.Observations})
		if err != nil {
			return err
		}
		for k, oid := range req.Observations {
			if !slices.ContainsFunc(obs, func(o engram.Observation) bool { return o.ID == oid && o.IdentityID == id }) {
				return engram.Errorf(engram.EINVALID, "observations[%d]: %q is not an observation of identity %s", k, oid, id)
			}
		}
		if len(obs) >= old.Count {
			return engram.Errorf(engram.EINVALID, "observations: splitting off all %d observations would leave identity %s empty", old.Count, id)
		}
		now := e.clock()
		nu = &engram.Identity{ID: engram.NewID(), Namespace: t.owner, Modality: old.Modality, Label: req.Label, CreatedAt: now, UpdatedAt: now}
		split(old, nu, obs)
		old.UpdatedAt = now
		if err := t.tx.PutIdentity(ctx, nu); err != nil {
			return err
		}
		if err := t.tx.PutIdentity(ctx, old); err != nil {
			return err
		}
		if err := t.tx.MoveObservations(ctx, t.owner, req.Observations, nu.ID); err != nil {
			return err
		}
		return t.event(engram.IdentityEvent{Op: engram.IdentitySplit, Identities: []string{id, nu.ID}, Observations: req.Observations, Source: engram.PersonAsserted})
	})
	return nu, err
}

// split moves the unit embeddings of obs from old's centroid into nu's.
func split(old, nu *engram.Identity, obs []engram.Observation) {
	sum := make([]float64, len(old.Centroid))
	for _, o := range obs {
		u := identity.Unit(o.Embedding)
		cl := identity.Cluster{Centroid: nu.Centroid, Count: nu.Count}
		cl.Add(u)
		nu.Centroid, nu.Count = cl.Centroid, cl.Count
		for i := range sum {
			sum[i] += float64(u[i])
		}
	}
	rest := float64(old.Count - len(obs))
	for i := range old.Centroid {
		old.Centroid[i] = float32((float64(old.Centroid[i])*float64(old.Count) - sum[i]) / rest)
	}
	old.Count -= len(obs)
}

// ListPersons implements engram.IdentityService.
func (e *media) ListPersons(ctx context.Context, s engram.Scope) ([]engram.Person, error) {
	out := []engram.Person{}
	err := e.identityView(ctx, s, func(r engram.Reader) error {
		is := engram.IdentityScope(s)
		ps, err := r.ListPersons(ctx, is)
		if err != nil {
			return err
		}
		ids, err := r.ListIdentities(ctx, is, engram.IdentityFilter{})
		if err != nil {
			return err
		}
		for _, p := range ps {
			for _, i := range ids {
				if i.PersonID == p.ID {
					p.Identities = append(p.Identities, i.ID)
				}
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// IdentityHistory implements engram.IdentityService.
func (e *media) IdentityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.IdentityEvent, error) {
	out := []engram.IdentityEvent{}
	err := e.identityView(ctx, s, func(r engram.Reader) error {
		evs, err := r.IdentityHistory(ctx, engram.IdentityScope(s), id)
		out = append(out, evs...)
		return err
	})
	return out, err
}

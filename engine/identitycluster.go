package engine

// The clustering of AddObservations: the checks of a batch, the
// declaration of modalities, and the placing and merging of observations
// into identities within one identity transaction.

import (
	"fmt"
	"slices"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/identity"
)

// checkObservations checks a batch before anything is read or written.
func checkObservations(req engram.AddObservationsRequest) error {
	if err := req.Namespace.Validate(); err != nil {
		return err
	}
	switch n := len(req.Observations); {
	case n == 0:
		return engram.Errorf(engram.EINVALID, "observations: at least one is required")
	case n > engram.MaxObservations:
		return engram.Errorf(engram.ETOOLARGE, "observations: %d in one request, more than the limit of %d", n, engram.MaxObservations)
	}
	dims := map[string]int{}
	seen := map[string]bool{}
	for i, o := range req.Observations {
		field := fmt.Sprintf("observations[%d]", i)
		if err := engram.ValidModalityName(o.Modality); err != nil {
			return engram.Errorf(engram.EINVALID, "%s.modality: %s", field, engram.ErrorMessage(err))
		}
		if err := engram.CheckEmbedding(field+".embedding", o.Embedding); err != nil {
			return err
		}
		if d, ok := dims[o.Modality]; ok && d != len(o.Embedding) {
			return engram.Errorf(engram.EINVALID, "%s.embedding: %d values, but an earlier observation of modality %s has %d", field, len(o.Embedding), o.Modality, d)
		}
		dims[o.Modality] = len(o.Embedding)
		if o.ID != "" && (!engram.ValidID(o.ID) || seen[o.ID]) {
			return engram.Errorf(engram.EINVALID, "%s.id: %q is not a valid id or is given twice", field, o.ID)
		}
		seen[o.ID] = true
		if o.EpisodeID != "" && !engram.ValidID(o.EpisodeID) {
			return engram.Errorf(engram.EINVALID, "%s.episode_id: %q is not a valid id", field, o.EpisodeID)
		}
		if sp := o.Span; sp != nil && (sp.StartMS < 0 || sp.EndMS < sp.StartMS) {
			return engram.Errorf(engram.EINVALID, "%s.span: %d..%d ms is not a span (0 <= start_ms <= end_ms)", field, sp.StartMS, sp.EndMS)
		}
	}
	return nil
}

// declare declares the batch's modalities that are not yet, and checks
// every observation's width against its modality's declared dim.
func (t *idTx) declare(in []engram.ObservationInput) error {
	ms, err := t.tx.Modalities(t.ctx, t.s)
	if err != nil {
		return err
	}
	dims := map[string]int{}
	for _, m := range ms {
		dims[m.Name] = m.Dim
	}
	for i, o := range in {
		d, ok := dims[o.Modality]
		if !ok {
			m := engram.EmbeddingModality{Namespace: t.owner, Name: o.Modality, Dim: len(o.Embedding), CreatedAt: t.e.clock()}
			if err := t.tx.PutModality(t.ctx, &m); err != nil {
				return err
			}
			dims[o.Modality] = m.Dim
			continue
		}
		if d != len(o.Embedding) {
			return engram.Errorf(engram.EINVALID, "observations[%d].embedding: %d values, but modality %s is declared with %d", i, len(o.Embedding), o.Modality, d)
		}
	}
	return nil
}

// clusters is the clustering state of one batch: the identities of the
// batch's modalities, which changed, and which were merged into which.
type clusters struct {
	byMod   map[string][]*engram.Identity
	changed map[string]*engram.Identity
	created map[string]bool
	into    map[string]string
}

// loadClusters reads the identities of the modalities of in.
func (t *idTx) loadClusters(in []engram.ObservationInput) (*clusters, error) {
	c := &clusters{byMod: map[string][]*engram.Identity{}, changed: map[string]*engram.Identity{}, created: map[string]bool{}, into: map[string]string{}}
	for _, o := range in {
		if _, ok := c.byMod[o.Modality]; ok {
			continue
		}
		ids, err := t.tx.ListIdentities(t.ctx, t.s, engram.IdentityFilter{Modality: o.Modality})
		if err != nil {
			return nil, err
		}
		c.byMod[o.Modality] = []*engram.Identity{}
		for i := range ids {
			c.byMod[o.Modality] = append(c.byMod[o.Modality], &ids[i])
		}
	}
	return c, nil
}

func asClusters(ids []*engram.Identity) []identity.Cluster {
	out := make([]identity.Cluster, len(ids))
	for i, x := range ids {
		out[i] = identity.Cluster{ID: x.ID, Centroid: x.Centroid, Count: x.Count}
	}
	return out
}

// place stores one observation under the identity it joins.
func (c *clusters) place(t *idTx, in engram.ObservationInput) (*engram.Observation, error) {
	u := identity.Unit(in.Embedding)
	ids := c.byMod[in.Modality]
	j := identity.Default.Place(asClusters(ids), u)
	now := t.e.clock()
	if j < 0 {
		x := &engram.Identity{ID: engram.NewID(), Namespace: t.owner, Modality: in.Modality, CreatedAt: now}
		ids = append(ids, x)
		c.byMod[in.Modality] = ids
		c.created[x.ID] = true
		j = len(ids) - 1
	}
	x := ids[j]
	cl := identity.Cluster{Centroid: x.Centroid, Count: x.Count}
	cl.Add(u)
	x.Centroid, x.Count, x.UpdatedAt = cl.Centroid, cl.Count, now
	c.changed[x.ID] = x
	if c.created[x.ID] && x.Count == 1 {
		// The identity must exist before its first observation is stored.
		if err := t.tx.PutIdentity(t.ctx, x); err != nil {
			return nil, err
		}
	}
	o := &engram.Observation{ID: in.ID, Namespace: t.owner, Modality: in.Modality, Embedding: in.Embedding, IdentityID: x.ID,
		EpisodeID: in.EpisodeID, Span: in.Span, At: now}
	if o.ID == "" {
		o.ID = engram.NewID()
	}
	if in.At != nil {
		o.At = norm(*in.At)
	}
	if err := t.tx.InsertObservation(t.ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

// mergePass merges the identities of the batch's modalities whose
// centroids have come within identity.Default.Merge, until none are, and
// returns the ids merged away.
func (c *clusters) mergePass(t *idTx) ([]string, error) {
	var gone []string
	for mod, ids := range c.byMod {
		for {
			ms := identity.Default.Merges(asClusters(ids))
			if len(ms) == 0 {
				break
			}
			drop := map[int]bool{}
			for _, m := range ms {
				if err := t.merge(ids[m.Into], ids[m.From], SourceCluster); err != nil {
					return nil, err
				}
				c.changed[ids[m.Into].ID] = ids[m.Into]
				delete(c.changed, ids[m.From].ID)
				c.into[ids[m.From].ID] = ids[m.Into].ID
				gone = append(gone, ids[m.From].ID)
				drop[m.From] = true
			}
			var kept []*engram.Identity
			for i, x := range ids {
				if !drop[i] {
					kept = append(kept, x)
				}
			}
			ids = kept
		}
		c.byMod[mod] = ids
	}
	slices.Sort(gone)
	return gone, nil
}

// resolve returns the identity id went into after the merge pass.
func (c *clusters) resolve(id string) string {
	for {
		to, ok := c.into[id]
		if !ok {
			return id
		}
		id = to
	}
}

// save stores the changed identities and records the created ones.
func (c *clusters) save(t *idTx) error {
	keys := make([]string, 0, len(c.changed))
	for id := range c.changed {
		keys = append(keys, id)
	}
	slices.Sort(keys)
	for _, id := range keys {
		if err := t.tx.PutIdentity(t.ctx, c.changed[id]); err != nil {
			return err
		}
		if c.created[id] {
			if err := t.event(engram.IdentityEvent{Op: engram.IdentityCreate, Identities: []string{id}, Source: SourceCluster}); err != nil {
				return err
			}
		}
	}
	return nil
}

// merge moves every observation of from into into, folds from's centroid
// into into's (in memory; the caller stores into), gives into from's
// person when it has none, deletes from and records the merge.
func (t *idTx) merge(into, from *engram.Identity, source string) error {
	for {
		obs, err := t.tx.ListObservations(t.ctx, t.s, engram.ObservationFilter{IdentityIDs: []string{from.ID}})
		if err != nil {
			return err
		}
		if len(obs) == 0 {
			break
		}
		ids := make([]string, len(obs))
		for i := range obs {
			ids[i] = obs[i].ID
		}
		if err := t.tx.MoveObservations(t.ctx, t.owner, ids, into.ID); err != nil {
			return err
		}
	}
	cl := identity.Cluster{Centroid: into.Centroid, Count: into.Count}
	cl.Absorb(identity.Cluster{Centroid: from.Centroid, Count: from.Count})
	into.Centroid, into.Count, into.UpdatedAt = cl.Centroid, cl.Count, t.e.clock()
	if into.PersonID == "" {
		into.PersonID = from.PersonID
	}
	if into.Label == "" {
		into.Label = from.Label
	}
	if err := t.tx.DeleteIdentity(t.ctx, t.owner, from.ID); err != nil {
		return err
	}
	return t.event(engram.IdentityEvent{Op: engram.IdentityMerge, Identities: []string{into.ID, from.ID}, PersonID: into.PersonID, Source: source})
}

package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/engramhq/engram"
)

// Identities in exports and imports. An export of a user's scope (no agent
// or session: identities belong to the user) ends with the user's identity
// records, kind by kind in engram.IdentityRecords order, each kind read a
// page per short read transaction. An import stores them after the
// memories, in the same order, so that each record's references are
// settled before it: a person before the identities linked to it, an
// identity before its observations, and the events last. An id another
// user of the tenant holds is renamed like any other record's, and the
// references to it follow.

// exportIdentities gives fn every identity record of s; a scope narrower
// than a user exports none. It fails with fn's or the store's error.
func (e *media) exportIdentities(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	if !s.AllAgents() || s.Session != "" {
		return nil
	}
	s = engram.IdentityScope(s)
	for _, kind := range engram.IdentityRecords {
		for after := ""; ; {
			page, next, err := e.identityPage(ctx, s, kind, after)
			if err != nil {
				return err
			}
			for _, r := range page {
				if err := fn(r); err != nil {
					return err
				}
			}
			if next == "" {
				break
			}
			after = next
		}
	}
	return nil
}

// identityPage reads one page of exportIdentities in its own read
// transaction. It fails with the store's error, naming the kind.
func (e *media) identityPage(ctx context.Context, s engram.Scope, kind, after string) (page []engram.Record, next string, err error) {
	ctx, cancel := context.WithTimeout(ctx, exportPageTimeout)
	defer cancel()
	err = e.store.View(ctx, func(r engram.Reader) error {
		var err error
		page, next, err = r.IdentityExportPage(ctx, s, kind, after, exportPage)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("export %ss: %w", kind, err)
	}
	return page, next, nil
}

// checkIdentityRecord validates an imported identity record and normalises
// its times; ok is false for a record of another type.
func checkIdentityRecord(r *engram.Record) (ok bool, err error) {
	switch r.Type {
	case engram.RecordModality:
		r.Modality.CreatedAt = norm(r.Modality.CreatedAt)
		return true, r.Modality.Validate()
	case engram.RecordPerson:
		p := r.Person
		p.CreatedAt, p.UpdatedAt = norm(p.CreatedAt), norm(p.UpdatedAt)
		p.Identities = nil // derived from the identities' person_id
		return true, p.Validate()
	case engram.RecordIdentity:
		i := r.Identity
		i.CreatedAt, i.UpdatedAt = norm(i.CreatedAt), norm(i.UpdatedAt)
		return true, i.Validate()
	case engram.RecordObservation:
		o := r.Observation
		o.At = norm(o.At)
		if o.IdentityID == "" {
			return true, engram.Errorf(engram.EINVALID, "observation: identity_id is required")
		}
		return true, o.Validate()
	case engram.RecordIdentityEvent:
		r.IdentityEvent.At = norm(r.IdentityEvent.At)
		return true, r.IdentityEvent.Validate()
	}
	return false, nil
}

// identityKey is the key under which checkHeld finds an identity record
// twice in one import; "" for a record of another type.
func identityKey(r engram.Record) string {
	switch r.Type {
	case engram.RecordModality:
		return "modality " + r.Modality.Name
	case engram.RecordPerson:
		return "person " + r.Person.ID
	case engram.RecordIdentity:
		return "identity " + r.Identity.ID
	case engram.RecordObservation:
		return "observation " + r.Observation.ID
	case engram.RecordIdentityEvent:
		return "identity event " + r.IdentityEvent.ID
	}
	return ""
}

// idImport is the state of the identity records of one import: the ids
// stored under a fresh id, by kind, and the ids of the scope's events.
type idImport struct {
	tx                       engram.Tx // the import's transaction
	owner                    engram.Scope
	persons, idents, obs, ev map[string]string
	events                   map[string]bool                // loaded on first need
	heldObs                  map[string]*engram.Observation // the scope's among the import's, by id
	modalities               map[string]int                 // the scope's, by name: dim
}

// identities stores the identity records of recs, kind by kind.
func (im *importer) identities(ctx context.Context, recs []engram.Record) error {
	if !slices.ContainsFunc(recs, func(r engram.Record) bool { return identityKey(r) != "" }) {
		return nil
	}
	x := &idImport{tx: im.tx, owner: engram.IdentityScope(im.s),
		persons: map[string]string{}, idents: map[string]string{}, obs: map[string]string{}, ev: map[string]string{}}
	im.idx = x
	if err := x.loadHeldObservations(ctx, recs); err != nil {
		return err
	}
	for _, kind := range engram.IdentityRecords {
		for i, r := range recs {
			if r.Type != kind {
				continue
			}
			if err := im.identityRecord(ctx, x, r); err != nil {
				return prefixed(fmt.Sprintf("record %d", i+1), err)
			}
		}
	}
	return nil
}

func (im *importer) identityRecord(ctx context.Context, x *idImport, r engram.Record) error {
	switch r.Type {
	case engram.RecordModality:
		return im.modality(ctx, x, r.Modality)
	case engram.RecordPerson:
		return im.person(ctx, x, r.Person)
	case engram.RecordIdentity:
		return im.identity(ctx, x, r.Identity)
	case engram.RecordObservation:
		return im.observation(ctx, x, r.Observation)
	case engram.RecordIdentityEvent:
		return im.identityEvent(ctx, x, r.IdentityEvent)
	}
	return nil
}

// modality declares a modality, or skips one the scope declares with the
// same dimension; another dimension is ECONFLICT.
func (im *importer) modality(ctx context.Context, x *idImport, m *engram.EmbeddingModality) error {
	if x.modalities == nil {
		ms, err := x.tx.Modalities(ctx, x.owner)
		if err != nil {
			return err
		}
		x.modalities = map[string]int{}
		for _, m := range ms {
			x.modalities[m.Name] = m.Dim
		}
	}
	if dim, ok := x.modalities[m.Name]; ok {
		if dim != m.Dim {
			return engram.Errorf(engram.ECONFLICT, "modality %s is declared with dim %d, the import says %d", m.Name, dim, m.Dim)
		}
		im.res.Skipped++
		return nil
	}
	if err := x.tx.PutModality(ctx, m); err != nil {
		return err
	}
	x.modalities[m.Name] = m.Dim
	im.res.IdentityRecords++
	return nil
}

// putOnce stores a record whose writer replaces (PutPerson, PutIdentity)
// under id unless the scope has id, then ECONFLICT, as place expects.
func putOnce(exists func() error, put func() error) error {
	err := exists()
	switch {
	case err == nil:
		return engram.Errorf(engram.ECONFLICT, "id taken")
	case !engram.IsNotFound(err):
		return err
	}
	return put()
}

// placeIdentityRecord is place for an identity record: it stores c under
// its id or a fresh one, compares one the scope holds with get, records a
// rename in ids and counts the result.
func (im *importer) placeIdentityRecord(id string, n engram.Namespace, what string, c any, setID func(string), insert func() error, get func(string) (any, error), ids map[string]string) error {
	nid, held, err := place(id, n, func(try string) error {
		setID(try)
		return insert()
	}, func(try string) (bool, error) {
		old, err := get(try)
		if err == nil {
			return true, skipIfSame(old, c, what, try, &im.res)
		}
		return false, notFound(err)
	})
	if err != nil {
		return err
	}
	if nid != id {
		ids[id] = nid
	}
	if !held {
		im.res.IdentityRecords++
	}
	return nil
}

func (im *importer) person(ctx context.Context, x *idImport, p *engram.Person) error {
	c := *p
	ep, err := im.episodeRef(ctx, p.Namespace, p.EpisodeID)
	if err != nil {
		return err
	}
	c.EpisodeID = ep
	entity, err := im.personEntity(ctx, &c)
	if err != nil {
		return err
	}
	c.EntityID = entity
	get := func(id string) (any, error) { return x.tx.GetPerson(ctx, x.owner, id) }
	return im.placeIdentityRecord(p.ID, p.Namespace, "person", &c, func(id string) { c.ID = id }, func() error {
		return putOnce(func() error { _, err := get(c.ID); return err }, func() error { return x.tx.PutPerson(ctx, &c) })
	}, get, x.persons)
}

// personEntity returns the entity of the graph a person names: the one
// its record names when the scope has it, else the most mentioned entity
// with one of its names (the graph is rebuilt on import, under new ids),
// else none.
func (im *importer) personEntity(ctx context.Context, p *engram.Person) (string, error) {
	es := engram.EntityScope(im.s)
	if p.EntityID != "" {
		if _, err := im.tx.GetEntity(ctx, es, p.EntityID); err == nil {
			return p.EntityID, nil
		} else if !engram.IsNotFound(err) {
			return "", err
		}
	}
	found, err := im.tx.FindEntities(ctx, es, p.Names())
	if err != nil || len(found) == 0 {
		return "", err
	}
	slices.SortStableFunc(found, func(a, b engram.Entity) int { return b.Mentions - a.Mentions })
	return found[0].ID, nil
}

func (im *importer) identity(ctx context.Context, x *idImport, i *engram.Identity) error {
	c := *i
	if i.PersonID != "" {
		id, err := im.ownRef(x.persons, i.Namespace, i.PersonID, func(id string) error { _, err := x.tx.GetPerson(ctx, x.owner, id); return err })
		if err != nil {
			return err
		}
		if id == "" {
			return engram.Errorf(engram.EINVALID, "identity %s: person_id %s names a person this import does not hold", i.ID, i.PersonID)
		}
		c.PersonID = id
	}
	get := func(id string) (any, error) { return x.tx.GetIdentity(ctx, x.owner, id) }
	return im.placeIdentityRecord(i.ID, i.Namespace, "identity", &c, func(id string) { c.ID = id }, func() error {
		return putOnce(func() error { _, err := get(c.ID); return err }, func() error { return x.tx.PutIdentity(ctx, &c) })
	}, get, x.idents)
}

func (im *importer) observation(ctx context.Context, x *idImport, o *engram.Observation) error {
	c := *o
	id, err := im.ownRef(x.idents, o.Namespace, o.IdentityID, func(id string) error { _, err := x.tx.GetIdentity(ctx, x.owner, id); return err })
	if err != nil {
		return err
	}
	if id == "" {
		return engram.Errorf(engram.EINVALID, "observation %s: identity_id %s names an identity this import does not hold", o.ID, o.IdentityID)
	}
	c.IdentityID = id
	if c.EpisodeID, err = im.episodeRef(ctx, o.Namespace, o.EpisodeID); err != nil {
		return err
	}
	get := func(id string) (any, error) {
		if held, ok := x.heldObs[id]; ok {
			return held, nil
		}
		return nil, engram.Errorf(engram.ENOTFOUND, "observation %s not found", id)
	}
	return im.placeIdentityRecord(o.ID, o.Namespace, "observation", &c, func(id string) { c.ID = id }, func() error {
		return x.tx.InsertObservation(ctx, &c)
	}, get, x.obs)
}

// loadHeldObservations reads, a batch of ids at a time, the observations
// the scope holds under the id of an observation record of recs or the id
// an import renames it to, so that a second import compares them without
// a read per record.
func (x *idImport) loadHeldObservations(ctx context.Context, recs []engram.Record) error {
	x.heldObs = map[string]*engram.Observation{}
	var ids []string
	flush := func() error {
		os, err := x.tx.ListObservations(ctx, x.owner, engram.ObservationFilter{IDs: ids, Limit: engram.MaxIdentityMembers})
		for i := range os {
			x.heldObs[os[i].ID] = &os[i]
		}
		ids = ids[:0]
		return err
	}
	for _, r := range recs {
		if o := r.Observation; o != nil {
			ids = append(ids, o.ID, renamed(o.Namespace, o.ID))
			if len(ids) >= engram.MaxIdentityMembers {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return flush()
}

// identityEvent stores an event with the ids it names rewritten. It may
// name identities and observations that no longer exist (they were
// deleted, merged away): those ids are kept as they are.
func (im *importer) identityEvent(ctx context.Context, x *idImport, ev *engram.IdentityEvent) error {
	c := *ev
	swap := func(ids map[string]string, id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		return id
	}
	c.Identities = make([]string, len(ev.Identities))
	for i, id := range ev.Identities {
		c.Identities[i] = swap(x.idents, id)
	}
	c.Observations = make([]string, len(ev.Observations))
	for i, id := range ev.Observations {
		c.Observations[i] = swap(x.obs, id)
	}
	if len(ev.Identities) == 0 {
		c.Identities = nil
	}
	if len(ev.Observations) == 0 {
		c.Observations = nil
	}
	if c.PersonID != "" {
		c.PersonID = swap(x.persons, c.PersonID)
	}
	ep, err := im.episodeRef(ctx, ev.Namespace, ev.EpisodeID)
	if err != nil {
		return err
	}
	c.EpisodeID = ep
	nid, held, err := place(ev.ID, ev.Namespace, func(id string) error {
		c.ID = id
		return x.tx.InsertIdentityEvent(ctx, &c)
	}, func(id string) (bool, error) { return im.heldEvent(ctx, x, id) })
	if err != nil {
		return err
	}
	if nid != ev.ID {
		x.ev[ev.ID] = nid
	}
	if held {
		im.res.Skipped++ // events are immutable: the same id is the same event
	} else {
		im.res.IdentityRecords++
	}
	return nil
}

// heldEvent reports whether the scope holds an identity event with that
// id. There is no lookup by id, so the first call reads the scope's events.
func (im *importer) heldEvent(ctx context.Context, x *idImport, id string) (bool, error) {
	if x.events == nil {
		x.events = map[string]bool{}
		for after := ""; ; {
			page, next, err := im.tx.IdentityExportPage(ctx, x.owner, engram.RecordIdentityEvent, after, engram.MaxLimit)
			if err != nil {
				return false, err
			}
			for _, r := range page {
				x.events[r.IdentityEvent.ID] = true
			}
			if next == "" {
				break
			}
			after = next
		}
	}
	return x.events[id], nil
}

// episodeRef returns the id under which the scope holds episode id: the
// one this import gave it, id itself, or the id an earlier call of a
// chunked import renamed it to when the episode was in owner's namespace
// (one of an agent or a session keeps id: its namespace is not known
// here).
func (im *importer) episodeRef(ctx context.Context, owner engram.Namespace, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	n, err := im.ownRef(im.eps, owner, id, func(id string) error { _, err := im.tx.GetEpisode(ctx, im.s, id); return err })
	if err != nil || n == "" {
		return id, err
	}
	return n, nil
}

// ownRef returns the id under which the scope holds the record id in
// namespace n: the one this import gave it (ids), id itself, or the id an
// earlier import renamed it to; "" if none. get is ENOTFOUND for an id the
// scope does not hold.
func (im *importer) ownRef(ids map[string]string, n engram.Namespace, id string, get func(string) error) (string, error) {
	if nid, ok := ids[id]; ok {
		return nid, nil
	}
	for _, try := range []string{id, renamed(n, id)} {
		err := get(try)
		if err == nil {
			return try, nil
		} else if !engram.IsNotFound(err) {
			return "", err
		}
	}
	return "", nil
}

// renames returns the maps of the identity ids this import renamed, for
// ImportResult.Renamed; none for an import without identity records.
func (x *idImport) renames() []map[string]string {
	if x == nil {
		return nil
	}
	return []map[string]string{x.persons, x.idents, x.obs, x.ev}
}

package engine

import (
	"time"

	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/engramhq/engram"
)

// MaxImport is the most records one Import call takes; larger exports are
// imported in several calls (the CLI does this).
const MaxImport = 100_000

// Import implements engram.Service.
//
// Episode, memory, audit entry and observation ids are unique per user of
// a tenant, the other records' ids within a tenant, but a caller sees only
// its own scope, so an import must not let one user's records touch
// another's, nor tell the caller which ids other users hold:
//
//   - A record whose id the import scope holds is compared with the stored
//     one: identical is skipped, different is ECONFLICT.
//   - A record whose id is free is stored under that id; so is an episode,
//     memory, audit entry or observation whose id another user holds. A
//     record whose id is taken outside the import scope otherwise (an
//     episode's or a memory's in another session of the user) is stored
//     under a fresh id instead, with the references to it inside
//     the import (versions, sources, superseded_by, the prev and next
//     metadata links, audit ids) rewritten; Renamed maps the old id to the
//     new one. Either way it is
//     counted as stored, and the other scope's record is neither read nor
//     changed. The fresh id is derived from the record's namespace and id,
//     so a second import of the same records finds them (a renamed memory
//     also is found by the versions in a later call of a chunked import).
//   - Every version must belong to a memory in its own namespace that the
//     same import holds, or that the scope holds; otherwise the import is
//     EINVALID and stores nothing.
//   - Audit entries are stored marked as imported: their op gets the prefix
//     ImportedOp ("import:memory.update"), their actor is whoever imported
//     them and the actor they named moves into their detail, so an
//     imported entry never passes for one the server wrote. The server
//     also writes its own "import" entry with the importing actor and the
//     counts.
//   - Identity records (modalities, persons, identities, observations,
//     identity events) are stored last, in that order, each identity
//     needing its person and each observation its identity in the same
//     import or the scope (see exportidentity.go).
func (e *admin) Import(ctx context.Context, s engram.Scope, recs []engram.Record) (*engram.ImportResult, error) {
	s, err := writeScope(s)
	if err != nil {
		return nil, err
	}
	if len(recs) > MaxImport {
		return nil, engram.Errorf(engram.ETOOLARGE, "%d records in one import, more than the limit of %d", len(recs), MaxImport)
	}
	for i := range recs {
		if err := checkRecord(s, &recs[i]); err != nil {
			return nil, prefixed(fmt.Sprintf("record %d", i+1), err)
		}
	}
	if err := checkHeld(recs); err != nil {
		return nil, err
	}
	if err := checkNoVault(recs); err != nil {
		return nil, err
	}
	resources, err := checkResources(recs)
	if err != nil {
		return nil, err
	}
	recs = slices.Clone(recs)
	sc, err := e.treatImport(ctx, s.Namespace(), recs)
	if err != nil {
		return nil, err
	}
	vb := e.vec.Batch()
	var active []engram.Memory
	for _, r := range recs {
		if r.Type == engram.RecordMemory && r.Memory.Status == engram.StatusActive {
			active = append(active, *r.Memory)
		}
	}
	if err := vb.Prepare(ctx, active); err != nil {
		return nil, err
	}
	res := &engram.ImportResult{}
	entry := e.audit(s.Namespace(), engram.ActorFrom(ctx), "import", nil, "", e.clock())
	ctx, trail := e.withTrail(ctx, TriggerImport)
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		im := &importer{tx: tx, s: s, vb: vb, actor: entry.Actor, ids: map[string]string{}, a: e, now: entry.At}
		if err := im.run(ctx, recs, resources); err != nil {
			return err
		}
		if err := e.storeSeals(ctx, tx, vb, s.Namespace(), im.stored(sc), entry.Actor, entry.At); err != nil {
			return err
		}
		*res = im.res
		res.Renamed = im.ids
		res.Sensitive = sc.report()
		entry.Detail = fmt.Sprintf("imported %d episodes, %d memories, %d versions, %d audit entries, %d resources, %d identity records; skipped %d; renamed %d",
			res.Episodes, res.Memories, res.Versions, res.Audit, res.Resources, res.IdentityRecords, res.Skipped, len(res.Renamed))
		return tx.InsertAudit(ctx, entry)
	})
	err = vb.Done(err)
	e.report(ctx, trail, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkHeld refuses an import holding the same record twice, or a version
// in another namespace than the memory it holds with the same id.
func checkHeld(recs []engram.Record) error {
	mems := map[string]engram.Namespace{}
	seen := map[string]bool{}
	for i, r := range recs {
		var key string
		switch r.Type {
		case engram.RecordEpisode:
			key = "episode " + r.Episode.ID
		case engram.RecordMemory:
			key = "memory " + r.Memory.ID
			mems[r.Memory.ID] = r.Memory.Namespace
		case engram.RecordVersion:
			key = fmt.Sprintf("version %d of memory %s", r.Version.Version, r.Version.MemoryID)
		case engram.RecordAudit:
			key = "audit entry " + r.Audit.ID
		case engram.RecordResource:
			key = "resource " + r.Resource.ID
		case engram.RecordResourceChunk:
			continue // checkResources places every chunk
		default:
			key = identityKey(r)
		}
		if seen[key] {
			return engram.Errorf(engram.EINVALID, "record %d: %s appears twice in this import", i+1, key)
		}
		seen[key] = true
	}
	for i, r := range recs {
		if r.Type != engram.RecordVersion {
			continue
		}
		if n, ok := mems[r.Version.MemoryID]; ok && n != r.Version.Namespace {
			return unheld(i, r.Version.MemoryID)
		}
	}
	return nil
}

func unheld(i int, id string) error {
	return engram.Errorf(engram.EINVALID, "record %d: version of memory %s which this import does not hold", i+1, id)
}

// checkRecord validates an imported record and normalises its times.
func checkRecord(s engram.Scope, r *engram.Record) error {
	n, err := r.Namespace()
	if err != nil {
		return err
	}
	if !s.Contains(n) {
		return engram.Errorf(engram.EINVALID, "%s belongs to namespace %s/%s user %q agent %q session %q, outside the import scope",
			r.Type, n.Org, n.Project, n.User, n.Agent, n.Session)
	}
	if ok, err := checkIdentityRecord(r); ok {
		return err
	}
	switch r.Type {
	case engram.RecordEpisode:
		ep := r.Episode
		if ep.ID == "" {
			return engram.Errorf(engram.EINVALID, "episode has no id")
		}
		ep.OccurredAt, ep.ReceivedAt = norm(ep.OccurredAt), norm(ep.ReceivedAt)
		return ep.Validate()
	case engram.RecordMemory:
		return checkStoredMemory(r.Memory)
	case engram.RecordVersion:
		v := r.Version
		if !engram.ValidID(v.MemoryID) || v.Version < 1 {
			return engram.Errorf(engram.EINVALID, "version needs a valid memory_id and a version number from 1")
		}
		switch v.Op {
		case engram.OpAdd, engram.OpUpdate, engram.OpSupersede, engram.OpDelete, engram.OpRestore, engram.OpConflict:
		default:
			return engram.Errorf(engram.EINVALID, "version op %q is not one of ADD, UPDATE, SUPERSEDE, DELETE, RESTORE, CONFLICT", v.Op)
		}
		v.At = norm(v.At)
		for _, m := range []*engram.Memory{v.Old, v.New} {
			if m != nil {
				if err := checkStoredMemory(m); err != nil {
					return err
				}
			}
		}
		return nil
	case engram.RecordAudit:
		a := r.Audit
		if !engram.ValidID(a.ID) || a.Op == "" {
			return engram.Errorf(engram.EINVALID, "audit entry needs a valid id and an op")
		}
		a.At = norm(a.At)
		return nil
	case engram.RecordResource:
		return checkResource(r.Resource)
	case engram.RecordResourceChunk:
		return nil // checked with its resource by checkResources
	}
	return engram.Errorf(engram.EINVALID, "unknown record type %q", r.Type)
}

func checkStoredMemory(m *engram.Memory) error {
	if m.ID == "" || m.Version < 1 || !m.Status.Valid() || !m.Kind.Valid() {
		return engram.Errorf(engram.EINVALID, "memory needs an id, a kind, a status and a version from 1")
	}
	m.CreatedAt, m.UpdatedAt = norm(m.CreatedAt), norm(m.UpdatedAt)
	m.ValidFrom, m.ValidTo, m.ExpiredAt = normPtr(m.ValidFrom), normPtr(m.ValidTo), normPtr(m.ExpiredAt)
	m.ExpiresAt, m.LastAccessed = normPtr(m.ExpiresAt), normPtr(m.LastAccessed)
	return m.Validate()
}

// importer stores the records of one import inside its transaction.
type importer struct {
	tx    engram.Tx
	s     engram.Scope
	vb    *vecBatch
	actor string // who imports: imported audit entries are attributed to them
	res   engram.ImportResult
	// Ids taken outside the scope, by kind, and the fresh ids used instead;
	// ids holds all four for the result.
	eps, mems, audits, resources, ids map[string]string
	held                              map[string]bool // ids of the scope's audit entries, loaded on first need
	imported                          map[string]bool // ids of the memories among the records
	idx                               *idImport       // the identity records' state, when there are any
	kept                              map[string]bool // ids (as given) of the episodes and memories stored
	a                                 *admin          // for the entity graph and quota of imported records
	now                               time.Time
}

// Memory records go through two passes: the first settles each id, the
// second stores the record with its references rewritten.
const (
	memStored = iota + 1 // stored: rewrite it if its references changed
	memHeld              // the scope holds the id: compare
)

func (im *importer) run(ctx context.Context, recs []engram.Record, resources []importedResource) error {
	im.eps, im.mems, im.audits, im.resources = map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
	at := func(i int, err error) error { return prefixed(fmt.Sprintf("record %d", i+1), err) }
	// Resources first: episodes' media and memories cite them.
	if err := im.claimResources(ctx, recs, resources); err != nil {
		return err
	}
	for i, r := range recs {
		if r.Type == engram.RecordEpisode {
			if err := im.episode(ctx, r.Episode); err != nil {
				return at(i, err)
			}
		}
	}
	state := make([]int, len(recs))
	im.imported = map[string]bool{}
	for i, r := range recs {
		if r.Type == engram.RecordMemory {
			im.imported[r.Memory.ID] = true
			st, err := im.claimMemory(ctx, r.Memory)
			if err != nil {
				return at(i, err)
			}
			state[i] = st
		}
	}
	for i, r := range recs {
		if r.Type == engram.RecordMemory {
			if err := im.memory(ctx, r.Memory, state[i]); err != nil {
				return at(i, err)
			}
		}
	}
	for i, r := range recs {
		var err error
		switch r.Type {
		case engram.RecordVersion:
			err = im.version(ctx, i, r.Version)
		case engram.RecordAudit:
			err = im.audit(ctx, r.Audit)
		}
		if err != nil {
			return at(i, err)
		}
	}
	// Identities last: observations and persons cite episodes.
	if err := im.identities(ctx, recs); err != nil {
		return err
	}
	im.ids = map[string]string{}
	for _, m := range append([]map[string]string{im.eps, im.mems, im.audits, im.resources}, im.idx.renames()...) {
		for k, v := range m {
			im.ids[k] = v
		}
	}
	return nil
}

// place stores a record under its id, or, when that id is taken outside
// the scope, under the id renamed derives from it, or failing that under a
// random one. insert stores the record under an id (ECONFLICT if the
// tenant has it); held reports whether the scope has it, in which case the
// record is not stored and the caller compares. It returns the id used.
//
// The derived id depends only on the record's namespace and id, so
// importing the same records again finds them under the same fresh ids.
func place(id string, n engram.Namespace, insert func(string) error, held func(string) (bool, error)) (string, bool, error) {
	for _, try := range []string{id, renamed(n, id), id[:10] + engram.NewID()[10:]} {
		err := insert(try)
		if engram.ErrorCode(err) != engram.ECONFLICT {
			return try, false, err
		}
		if h, err := held(try); err != nil || h {
			return try, h, err
		}
	}
	return "", false, engram.Errorf(engram.ECONFLICT, "found no free id for %s", id)
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// renamed derives a fresh id from a record's namespace and id. It keeps
// the id's time part, so the record sorts where it would have.
func renamed(n engram.Namespace, id string) string {
	h := sha256.Sum256([]byte(strings.Join([]string{n.Org, n.Project, n.User, n.Agent, n.Session, id}, "\x00")))
	b := []byte(id[:10])
	for _, c := range h[:16] {
		b = append(b, crockford[c&31])
	}
	return string(b)
}

func (im *importer) episode(ctx context.Context, ep *engram.Episode) error {
	c := *ep
	c.Media = im.rewriteMedia(ep.Media)
	id, held, err := place(ep.ID, ep.Namespace, func(id string) error {
		c.ID = id
		return im.tx.InsertEpisode(ctx, &c)
	}, func(id string) (bool, error) {
		old, err := im.tx.GetEpisode(ctx, im.s, id)
		if err == nil {
			return true, skipIfSame(old, &c, "episode", id, &im.res)
		}
		return false, notFound(err)
	})
	if id != ep.ID && err == nil {
		im.eps[ep.ID] = id
	}
	if !held && err == nil {
		im.res.Episodes++
		im.keep(ep.ID)
	}
	return err
}

// notFound turns ENOTFOUND into nil and keeps other errors.
func notFound(err error) error {
	if engram.IsNotFound(err) {
		return nil
	}
	return err
}

// claimMemory settles the id of an imported memory: it stores the memory
// (with its references as given: the second pass rewrites them) unless the
// scope holds the id.
func (im *importer) claimMemory(ctx context.Context, m *engram.Memory) (int, error) {
	c := *m
	id, held, err := place(m.ID, m.Namespace, func(id string) error {
		c.ID = id
		return im.tx.InsertMemory(ctx, &c)
	}, func(id string) (bool, error) {
		_, err := im.tx.GetMemory(ctx, im.s, id)
		return err == nil, notFound(err)
	})
	if err != nil {
		return 0, err
	}
	if id != m.ID {
		im.mems[m.ID] = id
	}
	if held {
		return memHeld, nil
	}
	return memStored, nil
}

func (im *importer) memory(ctx context.Context, m *engram.Memory, state int) error {
	c := im.rewrite(m)
	switch state {
	case memHeld:
		old, err := im.tx.GetMemory(ctx, im.s, c.ID)
		if err != nil {
			return err
		}
		// How often a memory was read is not its content: an export
		// imported again after searches is the same memory.
		a, b := *old, *c
		a.AccessCount, a.LastAccessed, b.AccessCount, b.LastAccessed = 0, nil, 0, nil
		return skipIfSame(&a, &b, "memory", c.ID, &im.res)
	case memStored:
		if c != m {
			if err := im.tx.ReplaceMemory(ctx, c); err != nil {
				return err
			}
		}
	}
	im.res.Memories++
	im.keep(m.ID)
	note(ctx, c.Namespace, engram.OpAdd, c.ID, "", im.actor)
	if err := im.vb.Stage(ctx, im.tx, c); err != nil {
		return err
	}
	// The graph is derived, so it is rebuilt from the imported memories
	// rather than carried in the export.
	return im.a.ingest.stageGraph(ctx, im.tx, nil, c, im.now)
}

// rewrite returns m with the ids this import renamed replaced, or m itself
// when there are none.
func (im *importer) rewrite(m *engram.Memory) *engram.Memory {
	if m == nil || len(im.eps)+len(im.mems)+len(im.resources) == 0 {
		return m
	}
	c, changed := *m, false
	swap := func(ids map[string]string, id *string) {
		if n, ok := ids[*id]; ok {
			*id, changed = n, true
		}
	}
	swap(im.mems, &c.ID)
	swap(im.mems, &c.SupersededBy)
	c.Sources = append([]string(nil), m.Sources...)
	for i := range c.Sources {
		swap(im.eps, &c.Sources[i])
	}
	if len(m.Metadata) > 0 {
		c.Metadata = make(map[string]any, len(m.Metadata))
		for k, v := range m.Metadata {
			if id, ok := v.(string); ok && (k == engram.MetaPrev || k == engram.MetaNext) {
				swap(im.mems, &id)
				v = id
			}
			c.Metadata[k] = v
		}
		changed = im.rewriteResource(&c) || changed
	}
	if !changed {
		return m
	}
	return &c
}

// version stores a version of a memory the import holds, or of one the
// scope holds in the version's namespace (a large export is imported in
// several calls, its versions after its memories). Any other memory id is
// refused, the same way whether some other scope has it or none does.
func (im *importer) version(ctx context.Context, i int, v *engram.Version) error {
	if !im.imported[v.MemoryID] {
		id, err := im.ownMemory(ctx, v.Namespace, v.MemoryID)
		if err != nil {
			return err
		}
		if id == "" {
			return unheld(i, v.MemoryID)
		}
		if id != v.MemoryID {
			im.mems[v.MemoryID] = id
		}
	}
	c := *v
	if n, ok := im.mems[c.MemoryID]; ok {
		c.MemoryID = n
	}
	c.Old, c.New = im.rewrite(v.Old), im.rewrite(v.New)
	vs, err := im.tx.Versions(ctx, engram.ScopeOf(c.Namespace), c.MemoryID)
	if err != nil && !engram.IsNotFound(err) {
		return err
	}
	for i := range vs {
		if vs[i].Version == c.Version {
			return skipIfSame(&vs[i], &c, "version", fmt.Sprintf("%s@%d", c.MemoryID, c.Version), &im.res)
		}
	}
	im.res.Versions++
	return im.tx.InsertVersion(ctx, &c)
}

// ImportedOp prefixes the op of every audit entry that came in through an
// import: the server did not write it and cannot vouch for it.
const ImportedOp = "import:"

func (im *importer) audit(ctx context.Context, a *engram.AuditEntry) error {
	c := *a
	// The entry is attributed to whoever imported it; the actor it names is
	// kept only as a claim in its detail. An entry imported before keeps
	// what it says.
	if !strings.HasPrefix(a.Op, ImportedOp) {
		c.Op = ImportedOp + a.Op
		c.Detail = fmt.Sprintf("imported by %q, naming actor %q", im.actor, a.Actor)
		if a.Detail != "" {
			c.Detail += ": " + a.Detail
		}
		c.Actor = im.actor
	}
	if len(a.IDs) > 0 {
		c.IDs = make([]string, len(a.IDs))
		for i, id := range a.IDs {
			if n, ok := im.mems[id]; ok {
				id = n
			} else if n, ok := im.eps[id]; ok {
				id = n
			}
			c.IDs[i] = id
		}
	}
	id, held, err := place(a.ID, a.Namespace, func(id string) error {
		c.ID = id
		return im.tx.InsertAudit(ctx, &c)
	}, func(id string) (bool, error) { return im.heldAudit(ctx, id) })
	if err != nil {
		return err
	}
	if id != a.ID {
		im.audits[a.ID] = id
	}
	if held {
		im.res.Skipped++ // audit entries are immutable: the same id is the same entry
	} else {
		im.res.Audit++
	}
	return nil
}

// ownMemory returns the id under which the scope holds memory id in
// namespace n: id itself, or the id an earlier import renamed it to; ""
// if neither.
func (im *importer) ownMemory(ctx context.Context, n engram.Namespace, id string) (string, error) {
	for _, try := range []string{id, renamed(n, id)} {
		m, err := im.tx.GetMemory(ctx, im.s, try)
		if err == nil && m.Namespace == n {
			return try, nil
		} else if err != nil && !engram.IsNotFound(err) {
			return "", err
		}
	}
	return "", nil
}

// heldAudit reports whether the scope holds an audit entry with that id.
// There is no lookup by id, so the first call reads the scope's log.
func (im *importer) heldAudit(ctx context.Context, id string) (bool, error) {
	if im.held == nil {
		im.held = map[string]bool{}
		f := engram.AuditFilter{Limit: engram.MaxLimit}
		for {
			page, next, err := im.tx.Audit(ctx, im.s, f)
			if err != nil {
				return false, err
			}
			for _, a := range page {
				im.held[a.ID] = true
			}
			if next == "" {
				break
			}
			f.Cursor = next
		}
	}
	return im.held[id], nil
}

func skipIfSame(stored, incoming any, what, id string, res *engram.ImportResult) error {
	a, _ := json.Marshal(stored)
	b, _ := json.Marshal(incoming)
	if string(a) != string(b) {
		return engram.Errorf(engram.ECONFLICT, "%s %s exists with different content", what, id)
	}
	res.Skipped++
	return nil
}

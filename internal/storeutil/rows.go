package storeutil

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Row is one row of a result as both stores' drivers hand it out
// (database/sql's *sql.Row and *sql.Rows, pgx's pgx.Row): what the row
// decoders here read.
type Row interface {
	Scan(dest ...any) error
}

// The columns of the records' tables in the order each store's scan
// function of the record reads them; both stores name them alike.
const (
	EpisodeCols = `e.id, e.org, e.project, e.user_id, e.agent, e.session, e.role, e.speaker,
	e.content, e.modality, e.occurred_at, e.received_at, e.metadata, e.media`

	MemoryCols = `m.id, m.org, m.project, m.user_id, m.agent, m.session, m.kind, m.abstraction,
	m.cues, m.value, m.language, m.confidence, m.importance, m.status, m.valid_from, m.valid_to,
	m.created_at, m.updated_at, m.expired_at, m.expires_at, m.sources, m.superseded_by,
	m.metadata, m.version, m.access_count, m.last_accessed`

	VersionCols = `v.memory_id, v.org, v.project, v.user_id, v.agent, v.session, v.version,
	v.op, v.old, v.new, v.actor, v.reason, v.at`

	AuditCols = `a.id, a.org, a.project, a.user_id, a.agent, a.session, a.actor, a.op, a.ids,
	a.detail, a.at`

	// DumpVectorCols are the columns DumpVectorRow reads, over memories m
	// joined with their vectors v.
	DumpVectorCols = `m.id, m.org, m.project, m.user_id, m.agent, m.session, v.embedder, v.field, v.dim, v.vec`
)

// DumpVectorRow returns the per-row function of the vectors of a store's
// Dump: it reads DumpVectorCols, decodes the vector (an error names the
// memory and field) and hands fn the record; fn's error comes back as a
// FnError, as DumpRow's does.
func DumpVectorRow[R Row](fn func(engram.DumpRecord) error) func(R) error {
	return func(row R) error {
		var (
			r   engram.StoredVector
			dim int
			raw []byte
		)
		n := &r.Namespace
		if err := row.Scan(&r.MemoryID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &r.Embedder, &r.Field, &dim, &raw); err != nil {
			return err
		}
		var err error
		if r.Vec, err = DecodeVec(raw, dim); err != nil {
			return fmt.Errorf("memory %s %s vector: %w", r.MemoryID, r.Field, err)
		}
		return dumpCall(fn, engram.DumpRecord{Record: engram.Record{Type: engram.RecordVector}, Vector: &r})
	}
}

// DumpMetaRow returns the per-row function of the meta values of a
// store's Dump: it reads (key, value) and hands fn the record, as
// DumpVectorRow does.
func DumpMetaRow[R Row](fn func(engram.DumpRecord) error) func(R) error {
	return func(row R) error {
		var e engram.MetaEntry
		if err := row.Scan(&e.Key, &e.Value); err != nil {
			return err
		}
		return dumpCall(fn, engram.DumpRecord{Record: engram.Record{Type: engram.RecordMeta}, Meta: &e})
	}
}

// dumpCall hands fn one record of a dump; fn's error comes back as a
// FnError, so the row loop returns it as is.
func dumpCall(fn func(engram.DumpRecord) error, r engram.DumpRecord) error {
	if err := fn(r); err != nil {
		return FnError{Err: err}
	}
	return nil
}

// EvidenceRows gives each relation of rs an empty evidence list and
// returns the relations' ids, to read their evidence by, and the per-row
// function that adds one row (relation id, memory id, weight) to its
// relation.
func EvidenceRows[R Row](rs []engram.Relation) ([]string, func(R) error) {
	ids := make([]string, len(rs))
	at := make(map[string]int, len(rs))
	for i := range rs {
		ids[i], at[rs[i].ID] = rs[i].ID, i
		rs[i].Evidence = []engram.Evidence{}
	}
	return ids, func(row R) error {
		var rid string
		var ev engram.Evidence
		if err := row.Scan(&rid, &ev.MemoryID, &ev.Weight); err != nil {
			return err
		}
		rs[at[rid]].Evidence = append(rs[at[rid]].Evidence, ev)
		return nil
	}
}

// Communities gathers the communities of a read, a row at a time, and
// then their members and sources.
type Communities struct {
	list []engram.Community
	at   map[string]int
}

// Add appends c with no members and no sources yet.
func (cs *Communities) Add(c engram.Community) {
	if cs.at == nil {
		cs.at = map[string]int{}
	}
	c.Members, c.Sources = []string{}, []string{}
	cs.at[c.ID] = len(cs.list)
	cs.list = append(cs.list, c)
}

// IDs returns the ids of the communities added, in their order.
func (cs *Communities) IDs() []string {
	ids := make([]string, len(cs.list))
	for i, c := range cs.list {
		ids[i] = c.ID
	}
	return ids
}

// MemberRows returns the per-row function that reads a row (community
// id, entity id) into the members of a community of cs.
func MemberRows[R Row](cs *Communities) func(R) error {
	return func(row R) error { return cs.addTo(row, func(c *engram.Community) *[]string { return &c.Members }) }
}

// SourceRows returns the per-row function that reads a row (community
// id, memory id) into the sources of a community of cs.
func SourceRows[R Row](cs *Communities) func(R) error {
	return func(row R) error { return cs.addTo(row, func(c *engram.Community) *[]string { return &c.Sources }) }
}

func (cs *Communities) addTo(row Row, list func(c *engram.Community) *[]string) error {
	var cid, x string
	if err := row.Scan(&cid, &x); err != nil {
		return err
	}
	l := list(&cs.list[cs.at[cid]])
	*l = append(*l, x)
	return nil
}

// List returns the communities added, nil for none.
func (cs *Communities) List() []engram.Community { return cs.list }

// One returns the only record of a read by id, or ENOTFOUND naming what
// and id when there is none; err is returned as is.
func One[T any](list []T, err error, what, id string) (*T, error) {
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s %s not found", what, id)
	}
	return &list[0], nil
}

// CallEach calls fn for each of list in order and returns its first
// error: a store reads a whole (small) list before it hands its items to
// a caller who may read again.
func CallEach[T any](list []T, fn func(T) error) error {
	for _, x := range list {
		if err := fn(x); err != nil {
			return err
		}
	}
	return nil
}

// The cursor kinds of the lists whose cursor holds the last record's id
// (and, for entities, its normalised name).
const (
	memoryCursorKind = 'm'
	jobCursorKind    = 'j'
	auditCursorKind  = 'a'
	entityCursorKind = 'n'
)

// MemoryPage trims a page of ListMemories read with one row more than
// limit and returns it with the next page's cursor ("" on the last page);
// a read that failed with err returns err as is.
func MemoryPage(out []engram.Memory, limit int, err error) ([]engram.Memory, string, error) {
	return page(out, limit, err, func(last engram.Memory) string { return EncodeCursor(memoryCursorKind, last.ID) })
}

// MemoryAfter returns the memory id a cursor of MemoryPage holds; EINVALID
// for any other cursor.
func MemoryAfter(cursor string) (string, error) { return DecodeIDCursor(memoryCursorKind, cursor) }

// JobPage is MemoryPage for ListJobs.
func JobPage(out []engram.Job, limit int, err error) ([]engram.Job, string, error) {
	return page(out, limit, err, func(last engram.Job) string { return EncodeCursor(jobCursorKind, last.ID) })
}

// JobAfter is MemoryAfter for JobPage's cursors.
func JobAfter(cursor string) (string, error) { return DecodeIDCursor(jobCursorKind, cursor) }

// AuditPage is MemoryPage for Audit.
func AuditPage(out []engram.AuditEntry, limit int, err error) ([]engram.AuditEntry, string, error) {
	return page(out, limit, err, func(last engram.AuditEntry) string { return EncodeCursor(auditCursorKind, last.ID) })
}

// AuditAfter is MemoryAfter for AuditPage's cursors.
func AuditAfter(cursor string) (string, error) { return DecodeIDCursor(auditCursorKind, cursor) }

// EntityPage is MemoryPage for ListEntities, whose cursor holds the last
// entity's normalised name and id.
func EntityPage(out []engram.Entity, limit int, err error) ([]engram.Entity, string, error) {
	return page(out, limit, err, func(last engram.Entity) string {
		return EncodeCursor(entityCursorKind, last.Norm+"\x00"+last.ID)
	})
}

// EpisodePage is MemoryPage for ListEpisodes, whose cursor holds the last
// episode's occurred_at and id (EncodeEpisodeCursor).
func EpisodePage(out []engram.Episode, limit int, err error) ([]engram.Episode, string, error) {
	return page(out, limit, err, func(last engram.Episode) string {
		return EncodeEpisodeCursor(last.OccurredAt.UnixMicro(), last.ID)
	})
}

// ResourcePage is MemoryPage for ListResources, whose cursor is the last
// resource's id as it is.
func ResourcePage(out []engram.Resource, limit int, err error) ([]engram.Resource, string, error) {
	return page(out, limit, err, func(last engram.Resource) string { return last.ID })
}

// page is NextPage after a read that may have failed with err.
func page[T any](out []T, limit int, err error, cursor func(last T) string) ([]T, string, error) {
	if err != nil {
		return nil, "", err
	}
	out, next := NextPage(out, limit, cursor)
	return out, next, nil
}

// EntityAfter returns the normalised name and id a cursor of EntityPage
// holds; ErrBadCursor for any other cursor.
func EntityAfter(cursor string) (norm, id string, err error) {
	k, err := DecodeCursor(entityCursorKind, cursor)
	norm, id, ok := strings.Cut(k, "\x00")
	if err != nil || !ok || !engram.ValidID(id) {
		return "", "", ErrBadCursor()
	}
	return norm, id, nil
}

// DecodeVersionStates decodes the memory before (old) and after (nw) a
// version, as stored in JSON, into v.Old and v.New; no bytes leave one
// nil. A malformed one is an error naming the version.
func DecodeVersionStates(v *engram.Version, old, nw []byte) error {
	for _, f := range []struct {
		b   []byte
		dst **engram.Memory
	}{{old, &v.Old}, {nw, &v.New}} {
		if len(f.b) == 0 {
			continue
		}
		*f.dst = new(engram.Memory)
		if err := UnmarshalNumbers(f.b, *f.dst); err != nil {
			return fmt.Errorf("version %d of memory %s: %w", v.Version, v.MemoryID, err)
		}
	}
	return nil
}

// DecodeEpisodeJSON decodes an episode's JSON columns, its metadata (md)
// and media, into e; no bytes leave either empty. A malformed one is an
// error naming the episode.
func DecodeEpisodeJSON(e *engram.Episode, md, media []byte) error {
	var err error
	if e.Metadata, err = DecodeMap(md); err != nil {
		return fmt.Errorf("episode %s metadata: %w", e.ID, err)
	}
	if len(media) > 0 {
		if err := json.Unmarshal(media, &e.Media); err != nil {
			return fmt.Errorf("episode %s media: %w", e.ID, err)
		}
	}
	return nil
}

// RecordEntityDeletion keeps the history of an entity a store's
// DeleteEntity removed, whose last state was snap: it records the change
// of ctx (engram.DeleteChangeOf) at the change's time, or now, through
// record; unless that change is a merge, it first removes the entity's
// earlier versions through forget (they hold its names) and records no
// snapshot. It fails with forget's or record's error.
func RecordEntityDeletion(ctx context.Context, snap *engram.Entity, forget func() error,
	record func(c engram.EntityChange, snap *engram.Entity, at time.Time) error) error {
	c := engram.DeleteChangeOf(ctx)
	at := c.At
	if at.IsZero() {
		at = time.Now()
	}
	if c.Op != engram.EntityMerged {
		if err := forget(); err != nil {
			return err
		}
		snap = nil
	}
	return record(c, snap, at)
}

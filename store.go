package engram

import (
	"context"
	"time"
)

// Store is a storage backend: the embedded SQLite store or PostgreSQL. It
// offers transactions over primitive record operations; the rules of the
// domain (versions, statuses, audit) live once in the engine, above it.
//
// Store, Reader and Tx are what every backend implements: the records and
// everything kept beside them (vectors, the change log, meta values, the
// graph, communities, identities, resources, jobs, keys), each concern a
// small interface embedded in Reader (reads) or Tx (writes), and the
// upkeep of the database on the Store itself (Scrubber, FullTextSwitch),
// so the compiler checks a backend against the whole contract. Optional,
// found by type assertion, is only what a backend may lack without losing
// anything but speed: FreshReader (PostgreSQL; SQLite reads in a View
// instead).
//
// Every method that reads takes a Scope and must return only records the
// scope contains (Scope.Contains is the reference rule). An id that exists
// outside the scope is reported exactly like one that does not exist.
type Store interface {
	// Update runs fn in one read-write transaction. If fn returns an error,
	// or the commit fails, nothing fn wrote is kept. When Update returns nil
	// the write is durable.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// View runs fn in a read-only transaction that sees one snapshot.
	View(ctx context.Context, fn func(r Reader) error) error
	// Ready returns nil when the store can serve, else an EUNAVAILABLE error.
	Ready(ctx context.Context) error
	// Close releases the store. Calls after Close fail.
	Close() error
	Scrubber
	FullTextSwitch
}

// Reader is the read side of a Store transaction.
type Reader interface {
	// GetEpisode returns the episode or an ENOTFOUND error. When s includes
	// shared records and both the user and the project hold the id, it
	// returns the user's own.
	GetEpisode(ctx context.Context, s Scope, id string) (*Episode, error)
	// GetMemory returns the memory in any status or an ENOTFOUND error.
	GetMemory(ctx context.Context, s Scope, id string) (*Memory, error)
	// GetMemories returns the memories among ids that the scope contains, in
	// any status and in no particular order; ids it does not contain (or
	// that do not exist, or are malformed) are skipped without error.
	GetMemories(ctx context.Context, s Scope, ids []string) ([]Memory, error)
	// ListEpisodes returns episodes ordered by (occurred_at, id) ascending,
	// and the cursor of the next page ("" on the last page).
	ListEpisodes(ctx context.Context, s Scope, f EpisodeFilter) ([]Episode, string, error)
	// ListMemories returns memories ordered by id descending (newest first),
	// and the cursor of the next page ("" on the last page).
	ListMemories(ctx context.Context, s Scope, f MemoryFilter) ([]Memory, string, error)
	// SearchText ranks memories matching query by BM25 over value,
	// abstraction and cues, best first, at most limit of them. A query with
	// no searchable terms returns no hits and no error.
	SearchText(ctx context.Context, s Scope, query string, f MemoryFilter, limit int) ([]TextHit, error)
	// Versions returns a memory's history, oldest first, or ENOTFOUND.
	Versions(ctx context.Context, s Scope, memoryID string) ([]Version, error)
	// Audit returns audit entries newest first and the next page's cursor.
	Audit(ctx context.Context, s Scope, f AuditFilter) ([]AuditEntry, string, error)
	// Export calls fn for every record in the scope: episodes, then memories,
	// then versions, then audit entries. An error from fn stops it.
	Export(ctx context.Context, s Scope, fn func(Record) error) error

	// What every store keeps beside the records, by concern. Each is a
	// small interface of its own, for code that needs only it.
	Locator
	TenantLister
	UserLister
	FullTextReader
	MetaReader
	VectorReader
	ChangeLog
	Dumper
	Expirer
	ExportPager
	GraphReader
	EntityHistoryReader
	CommunityReader
	IdentityReader
	IdentityExporter
	ResourceReader
	ResourceFinder
	ResourceDumper
	UploadSweeper
	JobReader
	JobBacklogReader
	KeyReader
	VaultKeyReader
}

// VectorReader is the capability of a Reader whose store keeps the
// embeddings of memories: an engine with an embedder needs it for its dense
// channel.
type VectorReader interface {
	// ScanVectors calls fn for every vector made by embedder that belongs to
	// an active memory the scope contains. An error from fn stops it and is
	// returned; an empty embedder or a bad scope is EINVALID.
	ScanVectors(ctx context.Context, s Scope, embedder string, fn func(VectorRecord) error) error
	// GetVectors returns the vectors made by embedder of the listed memories
	// of the tenant's user that are active (any agent or session: callers
	// check the namespace in each record). Unknown ids, and ids only other
	// users hold, are skipped; an empty embedder is EINVALID.
	GetVectors(ctx context.Context, tenant Namespace, embedder string, ids []string) ([]VectorRecord, error)
}

// VectorWriter is the capability of a Tx whose store keeps the embeddings
// of memories.
type VectorWriter interface {
	// PutVectors replaces the vectors that embedder made for one memory of
	// the tenant's user with vecs (one per field); ENOTFOUND if the user
	// has no such memory, EINVALID for an unknown field or an empty vector.
	PutVectors(ctx context.Context, tenant Namespace, memoryID, embedder string, vecs []FieldVector) error
	// DeleteVectorsExcept removes every stored vector not made by embedder
	// and says how many it removed (used when a re-embedding completes); an
	// empty embedder is EINVALID.
	DeleteVectorsExcept(ctx context.Context, embedder string) (int, error)
}

// ChangeLog is the capability of a Reader whose store records which
// memories each commit changed, so caches of derived data (the engine's
// vector indexes) catch up with writes made by other processes.
type ChangeLog interface {
	// Changes returns the ids of memories of the scope's tenant and user
	// (agent, session and IncludeShared are ignored) that were inserted,
	// replaced, purged or given vectors by transactions committed after
	// sequence number after, and the sequence number to pass next time.
	// With after < 0 it returns no ids, only the current sequence number.
	// Sequence numbers of one (tenant, user) grow in commit order, so a cache
	// that remembers the number and applies the returned ids is never stale,
	// even when several servers write to one database. A store may forget
	// old changes: if after is older than what it keeps, it returns
	// ECONFLICT and the caller reloads from scratch.
	Changes(ctx context.Context, s Scope, after int64) ([]string, int64, error)
}

// FreshReader is the capability of a Store that reads outside a
// transaction: ReadFresh runs fn with a Reader each of whose statements
// sees what was committed before that statement began. Two reads in fn
// need not agree with each other, so it serves only callers that do not
// need them to, such as a cache catching up through the ChangeLog, which
// reads again whatever changes later. On a networked database it saves
// the round trips of beginning and ending a transaction. fn's error is
// returned as is. Optional: PostgreSQL has it; SQLite, whose transactions
// cost no round trip, lacks it, and ReadFresh runs fn in a View instead.
type FreshReader interface {
	ReadFresh(ctx context.Context, fn func(r Reader) error) error
}

// ReadFresh runs fn through st's FreshReader when st has one, else in a
// View, which gives fn at least what a FreshReader would. fn's error, or
// the store's, is returned as is.
func ReadFresh(ctx context.Context, st Store, fn func(r Reader) error) error {
	if f, ok := st.(FreshReader); ok {
		return f.ReadFresh(ctx, fn)
	}
	return st.View(ctx, fn)
}

// MetaReader is the capability of a Reader whose store keeps store-wide
// settings, such as which embedder made its vectors.
type MetaReader interface {
	// Meta returns the store-wide value under key, or "" if there is none;
	// an empty key is EINVALID.
	Meta(ctx context.Context, key string) (string, error)
}

// MetaWriter is the capability of a Tx whose store keeps store-wide
// settings.
type MetaWriter interface {
	// SetMeta stores a store-wide value under key; an empty value deletes
	// it, an empty key is EINVALID.
	SetMeta(ctx context.Context, key, value string) error
}

// Dumper is the capability of a Reader that can read across tenants, for
// maintenance (re-embedding, copying a store to another backend) only,
// never for serving a client.
type Dumper interface {
	// ScanMemories returns up to limit memories of every tenant, in any
	// status, ordered by (org, project, user, id) after the key after (the zero
	// key starts at the beginning). A limit below 1 is EINVALID.
	ScanMemories(ctx context.Context, after MemoryKey, limit int) ([]Memory, error)
	// Dump calls fn for every record of every tenant, in this order:
	// episodes, memories, versions, audit entries, vectors of every
	// embedder, then store-wide meta values (except a backend's own
	// bookkeeping, such as change-log positions). Within a kind records come
	// in byte order of their key: (org, project, id, user) for episodes,
	// memories and audit, (org, project, memory id, user, version) for
	// versions, (org, project, memory id, user, embedder, field) for
	// vectors, and key for meta.
	// An error from fn stops it and is returned as is.
	Dump(ctx context.Context, fn func(DumpRecord) error) error
}

// Expirer is the capability of a Reader that finds, across tenants, the
// memories whose TTL has passed, for the sweeper that marks them expired;
// never for serving a client.
type Expirer interface {
	// Lapsed returns up to limit active memories of any tenant whose
	// expires_at is at or before at, ordered by (expires_at, org, project,
	// id). A limit below 1 is EINVALID.
	Lapsed(ctx context.Context, at time.Time, limit int) ([]Memory, error)
}

// ExportPager is the capability of a Reader that reads an export a page at
// a time, so that a large scope is exported in many short transactions
// instead of one that a slow client could hold open.
type ExportPager interface {
	// ExportPage returns up to limit records of type kind (RecordEpisode,
	// RecordMemory, RecordVersion or RecordAudit) in the scope, in Export's
	// order, strictly after the cursor after ("" starts at the beginning),
	// and the cursor of the next page ("" after the last). A bad scope, an
	// unknown kind, a limit below 1 or a cursor of another kind is EINVALID.
	ExportPage(ctx context.Context, s Scope, kind, after string, limit int) ([]Record, string, error)
}

// IdentityExporter is the capability of a Reader whose store keeps
// identities that reads them for an export a page at a time, with no limit
// on how many a user has.
type IdentityExporter interface {
	// IdentityExportPage returns up to limit records of type kind (one of
	// IdentityRecords) of IdentityScope(s), ordered by name (for
	// modalities) or id, strictly after the cursor after ("" starts at the
	// beginning), and the cursor of the next page ("" after the last).
	// Events come whether or not the identities they name still exist. A
	// bad scope, an unknown kind, a limit below 1 or a bad cursor is
	// EINVALID.
	IdentityExportPage(ctx context.Context, s Scope, kind, after string, limit int) ([]Record, string, error)
	// IdentityOwners calls fn with the tenant and user (Org, Project and
	// User) of every owner of identity records in the store, of every
	// tenant, each once, sorted by tenant and user. An error
	// from fn stops it and is returned as is.
	IdentityOwners(ctx context.Context, fn func(Namespace) error) error
}

// Scrubber is the capability of a Store that can clear what deleted
// records leave behind in its files: free pages, the write-ahead log, old
// versions of rows and index entries. The engine calls it after a hard
// delete and a purge, outside any transaction.
type Scrubber interface {
	// Scrub removes from the store's files, as far as the backend can (its
	// package documentation says how far), the bytes of the records that
	// committed deletes removed. It fails with the store's error; the
	// deletes stay committed either way.
	Scrub(ctx context.Context) error
}

// FullTextReader is the capability of a Reader that can tell whether its
// store keeps a full-text index of memories in the database. The engine
// searches text with an in-memory index of its own in every namespace up
// to a limit, and with the store's index above it; when the store has
// none, the engine's index serves every namespace, whatever its size.
type FullTextReader interface {
	// FullTextIndexed reports whether the store's full-text index of
	// memories is there and usable. It fails with the store's error.
	FullTextIndexed(ctx context.Context) (bool, error)
}

// FullTextSwitch is the capability of a Store whose full-text index of
// memories can be dropped and built again, for every tenant at once. It
// is a property of the database, seen by every server sharing it.
type FullTextSwitch interface {
	// SetFullTextIndexed builds the index from every memory (on) or drops
	// it (off); when the index is already so it does nothing. It fails with
	// the store's error and leaves the index as it was.
	SetFullTextIndexed(ctx context.Context, on bool) error
}

// DumpRecord is one record of Dumper.Dump: Type is one of the Record types,
// with the matching pointer of Record set, or RecordVector or RecordMeta.
type DumpRecord struct {
	Record
	Vector *StoredVector `json:"vector,omitempty"`
	Meta   *MetaEntry    `json:"meta,omitempty"`
}

// StoredVector is a stored vector with the embedder that made it.
type StoredVector struct {
	Embedder string `json:"embedder"`
	VectorRecord
}

// MetaEntry is one store-wide meta value.
type MetaEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Dump record types, beside the Record types.
const (
	RecordVector = "vector"
	RecordMeta   = "meta"
)

// MemoryKey orders memories across tenants for maintenance scans. A
// memory's id is unique per user of a tenant, so the user is part of the
// key.
type MemoryKey struct {
	Org, Project string
	User         string `json:",omitempty"`
	ID           string
}

// VectorRecord is one stored embedding of a memory's field.
type VectorRecord struct {
	MemoryID  string
	Namespace Namespace
	Field     string // FieldAbstraction or FieldValue
	Vec       []float32
}

// FieldVector is the embedding of one field of a memory.
type FieldVector struct {
	Field string
	Vec   []float32
}

// The fields of a memory that are embedded.
const (
	FieldAbstraction = "abstraction"
	FieldValue       = "value"
)

// TextHit is one result of a full-text search. Score is higher for better
// matches (backends negate BM25 where it is lower-is-better).
type TextHit struct {
	Memory Memory
	Score  float64
}

// Tx is a read-write Store transaction. It sees its own writes.
type Tx interface {
	Reader
	// InsertEpisode stores a new episode; ECONFLICT if its user has an
	// episode with its id in the tenant. Episode ids are unique per user, so
	// another user's episode with the same id is no conflict, and tells
	// nothing about it.
	InsertEpisode(ctx context.Context, e *Episode) error
	// InsertMemory stores a new memory and indexes its text; ECONFLICT if
	// its user has a memory with its id in the tenant. Memory ids are unique
	// per user, like episode ids, so another user's memory with the same id
	// is no conflict, and tells nothing about it.
	InsertMemory(ctx context.Context, m *Memory) error
	// ReplaceMemory overwrites the stored memory with the same tenant, user
	// and id (its agent and session may change), re-indexing its text;
	// ENOTFOUND if the user has none.
	ReplaceMemory(ctx context.Context, m *Memory) error
	// InsertVersion appends a history entry; ECONFLICT if that version
	// number exists for the memory.
	InsertVersion(ctx context.Context, v *Version) error
	// InsertAudit appends an audit entry; ECONFLICT if its user has an
	// entry with its id in the tenant (audit ids are unique per user, like
	// episode ids).
	InsertAudit(ctx context.Context, a *AuditEntry) error
	// PurgeMemory removes n's user's memory with the id, with its
	// versions, text index entries, vectors, mentions and relation
	// evidence, removes the entities and relations of its user left with
	// none, and clears the detail of its user's audit entries that name
	// it. It is not an error if there is nothing to remove.
	PurgeMemory(ctx context.Context, n Namespace, id string) error
	// PurgeEpisode removes the episode with n's tenant, user and id.
	PurgeEpisode(ctx context.Context, n Namespace, id string) error
	// PurgeScope removes every episode, memory, version, index entry and
	// vector in the scope, and the entities and relations of the scope's
	// user that its memories alone supported, and says how many it removed
	// of each kind (PurgeCounts). Its audit entries stay as tombstones: op,
	// actor, time and ids, with the detail cleared.
	PurgeScope(ctx context.Context, s Scope) (PurgeCounts, error)
	// Touch records accesses to memories of the tenant's user:
	// access_count grows by the number of times the id is listed in ids,
	// and last_accessed = at. Unknown ids, and other users' memories, are
	// ignored.
	Touch(ctx context.Context, tenant Namespace, ids []string, at time.Time) error

	// The writing side of what every store keeps beside the records, by
	// concern, each the match of a reading one of Reader.
	MetaWriter
	VectorWriter
	GraphWriter
	RelationsWriter
	CommunityWriter
	IdentityWriter
	ResourceWriter
	JobQueue
	KeyWriter
	VaultKeyWriter
}

// PurgeCounts says how many records a purge removed.
type PurgeCounts struct {
	Episodes int `json:"episodes"`
	Memories int `json:"memories"`
	Versions int `json:"versions"`
	// Resources counts the resources (with their content) a store that
	// keeps them removed.
	Resources int `json:"resources,omitempty"`
}

// Record is one line of an export: exactly one of its pointers is set,
// matching Type.
type Record struct {
	Type    string      `json:"type"` // one of the Record types
	Episode *Episode    `json:"episode,omitempty"`
	Memory  *Memory     `json:"memory,omitempty"`
	Version *Version    `json:"version,omitempty"`
	Audit   *AuditEntry `json:"audit,omitempty"`
	// Resource is a resource's metadata; its content follows it in
	// ResourceChunk records.
	Resource *Resource      `json:"resource,omitempty"`
	Chunk    *ResourceChunk `json:"resource_chunk,omitempty"`
	// Identity records: a user's modalities, persons, identities,
	// observations and identity events.
	Modality      *EmbeddingModality `json:"identity_modality,omitempty"`
	Person        *Person            `json:"person,omitempty"`
	Identity      *Identity          `json:"identity,omitempty"`
	Observation   *Observation       `json:"observation,omitempty"`
	IdentityEvent *IdentityEvent     `json:"identity_event,omitempty"`
}

// ResourceChunk is one stored chunk of a resource's content in an export:
// Data (base64 in JSON) is at most ResourceChunkBytes. The chunks of a
// resource follow its Resource record, Seq 0, 1, … in order, and an
// import checks that together they have the resource's size and SHA-256.
type ResourceChunk struct {
	ResourceID string    `json:"resource_id"`
	Namespace  Namespace `json:"namespace"`
	Seq        int       `json:"seq"`
	Data       []byte    `json:"data"`
}

// Record types.
const (
	RecordEpisode = "episode"
	RecordMemory  = "memory"
	RecordVersion = "version"
	RecordAudit   = "audit"
	// RecordResource and RecordResourceChunk come after the audit
	// entries: each resource, then its chunks.
	RecordResource      = "resource"
	RecordResourceChunk = "resource_chunk"
	// The identity records come after the resources, in this order, each
	// kind by user and id.
	RecordModality      = "identity_modality"
	RecordPerson        = "person"
	RecordIdentity      = "identity"
	RecordObservation   = "observation"
	RecordIdentityEvent = "identity_event"
)

// IdentityRecords lists the identity record types in export order: each
// kind refers only to kinds before it (events name ids of any kind).
var IdentityRecords = []string{RecordModality, RecordPerson, RecordIdentity, RecordObservation, RecordIdentityEvent}

// Namespace returns the namespace of the record's payload, and an EINVALID
// error if the payload does not match Type.
func (r *Record) Namespace() (Namespace, error) {
	switch {
	case r.Type == RecordEpisode && r.Episode != nil:
		return r.Episode.Namespace, nil
	case r.Type == RecordMemory && r.Memory != nil:
		return r.Memory.Namespace, nil
	case r.Type == RecordVersion && r.Version != nil:
		return r.Version.Namespace, nil
	case r.Type == RecordAudit && r.Audit != nil:
		return r.Audit.Namespace, nil
	case r.Type == RecordResource && r.Resource != nil:
		return r.Resource.Namespace, nil
	case r.Type == RecordResourceChunk && r.Chunk != nil:
		return r.Chunk.Namespace, nil
	case r.Type == RecordModality && r.Modality != nil:
		return r.Modality.Namespace, nil
	case r.Type == RecordPerson && r.Person != nil:
		return r.Person.Namespace, nil
	case r.Type == RecordIdentity && r.Identity != nil:
		return r.Identity.Namespace, nil
	case r.Type == RecordObservation && r.Observation != nil:
		return r.Observation.Namespace, nil
	case r.Type == RecordIdentityEvent && r.IdentityEvent != nil:
		return r.IdentityEvent.Namespace, nil
	}
	return Namespace{}, Errorf(EINVALID, "record: type %q does not match its payload", r.Type)
}

package engram

import (
	"maps"
	"slices"
	"time"
)

// Kind is the type of a memory, after MIRIX's memory types.
type Kind string

// Memory kinds.
const (
	KindCore       Kind = "core"       // stable facts about the user or agent (profile, persona)
	KindEpisodic   Kind = "episodic"   // what happened, when, with whom
	KindSemantic   Kind = "semantic"   // facts and knowledge independent of an event
	KindProcedural Kind = "procedural" // how to do things, preferences on procedure
	KindResource   Kind = "resource"   // documents, files, links and media
	KindVault      Kind = "vault"      // sensitive values with access control
)

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindCore, KindEpisodic, KindSemantic, KindProcedural, KindResource, KindVault:
		return true
	}
	return false
}

// Status is the lifecycle state of a memory.
type Status string

// Memory statuses. Only active memories are returned by search and by list
// unless a filter asks for others.
const (
	StatusActive     Status = "active"
	StatusSuperseded Status = "superseded" // replaced by a newer memory; kept for history
	StatusDeleted    Status = "deleted"    // soft-deleted; restorable
	StatusExpired    Status = "expired"    // past its TTL
)

// Valid reports whether s is one of the defined statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusActive, StatusSuperseded, StatusDeleted, StatusExpired:
		return true
	}
	return false
}

// Lapsed reports whether m is active but its TTL has passed at t: its
// ExpiresAt is at or before t.
func (m *Memory) Lapsed(t time.Time) bool {
	return m.Status == StatusActive && m.ExpiresAt != nil && !m.ExpiresAt.After(t)
}

// Lapse reports a memory whose TTL has passed at t as what the sweeper will
// make it: status expired, expired at its ExpiresAt. Reads apply it so a
// TTL holds at once, before the sweeper has run. It reports whether it
// changed m.
func (m *Memory) Lapse(t time.Time) bool {
	if !m.Lapsed(t) {
		return false
	}
	at := *m.ExpiresAt
	m.Status, m.ExpiredAt = StatusExpired, &at
	return true
}

// Clone returns a deep copy of m: its slices, time pointers and metadata
// (maps and lists within it too) are its own, so that changing one never
// shows in the other.
func (m *Memory) Clone() *Memory {
	c := *m
	c.Cues, c.Sources = slices.Clone(m.Cues), slices.Clone(m.Sources)
	c.ValidFrom, c.ValidTo = cloneTime(m.ValidFrom), cloneTime(m.ValidTo)
	c.ExpiredAt, c.ExpiresAt = cloneTime(m.ExpiredAt), cloneTime(m.ExpiresAt)
	c.LastAccessed = cloneTime(m.LastAccessed)
	if m.Metadata != nil {
		c.Metadata = cloneValue(m.Metadata).(map[string]any)
	}
	return &c
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// cloneValue deep-copies a decoded JSON value: maps and lists are copied,
// everything else (strings, numbers, booleans, nil) is immutable.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cloneValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneValue(x)
		}
		return out
	case []string:
		return slices.Clone(v)
	case map[string]string:
		return maps.Clone(v)
	}
	return v
}

// Memory is what engram remembers: a short primary abstraction and cue
// anchors that index a rich value, with validity in event time, transaction
// time, provenance and lifecycle state.
type Memory struct {
	ID          string    `json:"id"`
	Namespace   Namespace `json:"namespace"`
	Kind        Kind      `json:"kind"`
	Abstraction string    `json:"abstraction,omitempty"` // one short line: what this memory is about
	Cues        []string  `json:"cues,omitempty"`        // short anchor phrases: names, places, objects
	Value       string    `json:"value"`                 // the rich content
	Language    string    `json:"language,omitempty"`    // BCP 47 tag, e.g. "en", "zh"
	Confidence  float64   `json:"confidence"`            // 0..1
	Importance  float64   `json:"importance"`            // 0..1
	Status      Status    `json:"status"`

	ValidFrom *time.Time `json:"valid_from,omitempty"` // event time the fact starts to hold
	ValidTo   *time.Time `json:"valid_to,omitempty"`   // event time it stops holding (exclusive)
	CreatedAt time.Time  `json:"created_at"`           // transaction time it was recorded
	UpdatedAt time.Time  `json:"updated_at"`           // transaction time of the last version
	ExpiredAt *time.Time `json:"expired_at,omitempty"` // transaction time it stopped being current
	ExpiresAt *time.Time `json:"expires_at,omitempty"` // TTL: it expires at this time

	Sources      []string       `json:"sources,omitempty"`       // ids of the episodes it was formed from
	SupersededBy string         `json:"superseded_by,omitempty"` // id of the memory that replaced it
	Metadata     map[string]any `json:"metadata,omitempty"`
	Version      int            `json:"version"`
	AccessCount  int64          `json:"access_count"`
	LastAccessed *time.Time     `json:"last_accessed,omitempty"`
}

// Validate checks the fields a client may set and returns an EINVALID error
// naming the first bad one. Zero Kind, Status, Confidence and Importance are
// allowed here; the service fills defaults before storing.
func (m *Memory) Validate() error {
	if err := m.Namespace.Validate(); err != nil {
		return err
	}
	if m.ID != "" && !ValidID(m.ID) {
		return Errorf(EINVALID, "memory: id %q is not a valid id", m.ID)
	}
	if m.Kind != "" && !m.Kind.Valid() {
		return Errorf(EINVALID, "memory: kind %q is not one of core, episodic, semantic, procedural, resource, vault", m.Kind)
	}
	if m.Status != "" && !m.Status.Valid() {
		return Errorf(EINVALID, "memory: status %q is not one of active, superseded, deleted, expired", m.Status)
	}
	if m.Value == "" {
		return Errorf(EINVALID, "memory: value is required")
	}
	if err := checkText("memory: value", m.Value, MaxContentBytes); err != nil {
		return err
	}
	if err := checkText("memory: abstraction", m.Abstraction, MaxShortBytes); err != nil {
		return err
	}
	if err := checkText("memory: language", m.Language, 35); err != nil {
		return err
	}
	if len(m.Cues) > MaxCues {
		return Errorf(EINVALID, "memory: %d cues, more than the limit of %d", len(m.Cues), MaxCues)
	}
	for _, c := range m.Cues {
		if err := checkText("memory: cue", c, MaxShortBytes); err != nil {
			return err
		}
	}
	if len(m.Sources) > MaxSources {
		return Errorf(EINVALID, "memory: %d sources, more than the limit of %d", len(m.Sources), MaxSources)
	}
	for _, s := range m.Sources {
		if !ValidID(s) {
			return Errorf(EINVALID, "memory: source %q is not a valid episode id", s)
		}
	}
	if m.Confidence < 0 || m.Confidence > 1 {
		return Errorf(EINVALID, "memory: confidence %v is outside 0..1", m.Confidence)
	}
	if m.Importance < 0 || m.Importance > 1 {
		return Errorf(EINVALID, "memory: importance %v is outside 0..1", m.Importance)
	}
	for _, t := range []struct {
		name string
		v    *time.Time
	}{{"valid_from", m.ValidFrom}, {"valid_to", m.ValidTo}, {"expires_at", m.ExpiresAt}} {
		if t.v != nil {
			if err := checkTime("memory: "+t.name, *t.v); err != nil {
				return err
			}
		}
	}
	if m.ValidFrom != nil && m.ValidTo != nil && m.ValidTo.Before(*m.ValidFrom) {
		return Errorf(EINVALID, "memory: valid_to is before valid_from")
	}
	return checkMetadata("memory", m.Metadata)
}

// Op is the operation a Version records.
type Op string

// Version operations.
const (
	OpAdd       Op = "ADD"
	OpUpdate    Op = "UPDATE"
	OpSupersede Op = "SUPERSEDE"
	OpDelete    Op = "DELETE"
	OpRestore   Op = "RESTORE"
	// OpMerge folds a formed memory into TargetID, an existing memory
	// that says the same: TargetID keeps its id, takes the merged content
	// and gains the new memory's sources (Memora's merge-or-create).
	OpMerge Op = "MERGE"
	// OpNoop records that a formed memory adds nothing to what the scope
	// holds; nothing is written.
	OpNoop Op = "NOOP"
	// OpConflict adds a formed memory that contradicts TargetID without
	// being newer than it: both stay active, both are marked, and the pair
	// is listed for review until resolved.
	OpConflict Op = "CONFLICT"
)

// Version is one entry of a memory's history: the state before and after a
// change. Old is nil for ADD.
type Version struct {
	MemoryID  string    `json:"memory_id"`
	Namespace Namespace `json:"namespace"`
	Version   int       `json:"version"`
	Op        Op        `json:"op"`
	Old       *Memory   `json:"old,omitempty"`
	New       *Memory   `json:"new,omitempty"`
	Actor     string    `json:"actor,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	At        time.Time `json:"at"`
}

// AuditEntry records one mutation (and, later, every vault read).
type AuditEntry struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"`
	Actor     string    `json:"actor,omitempty"`
	Op        string    `json:"op"` // e.g. "episode.add", "memory.update", "scope.delete"
	IDs       []string  `json:"ids,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	At        time.Time `json:"at"`
}

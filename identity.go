package engram

import (
	"context"
	"math"
	"strings"
	"time"
)

// Identities: the faces and voices a client's own models saw and heard,
// kept as persistent identities. A client sends observations, each an
// embedding of one modality ("face", "voice", any name) from its model;
// the first observation of a modality in a user's scope declares the
// modality's dimension, and every later one must have it. engram clusters
// the observations online into identities (package identity) and records
// equivalences between a face identity, a voice identity and a name as a
// Person, stated by an episode or asserted by a client. Merges, splits,
// links and unlinks are kept as IdentityEvents. Like entities, identity
// records belong to a tenant and a user: their Namespace has only Org,
// Project and User set, and a scope's Agent and Session do not narrow
// what identity reads see.

// Identity limits.
const (
	MaxEmbeddingDim     = 4096 // the widest embedding of an observation
	MaxObservations     = 256  // observations in one request
	MaxIdentityMembers  = 1000 // observations returned with one identity
	MaxModalityNameSize = 32   // bytes of a modality name
)

// Sources of a Person's equivalences.
const (
	PersonStated   = "episode" // an episode stated it (EpisodeID names it)
	PersonAsserted = "client"  // a client asserted it
)

// Identity event operations.
const (
	IdentityCreate = "create"
	IdentityMerge  = "merge"
	IdentitySplit  = "split"
	IdentityLink   = "link"
	IdentityUnlink = "unlink"
	IdentityDelete = "delete"
)

// EmbeddingModality is the declaration of one kind of embedding in a user's scope.
type EmbeddingModality struct {
	Namespace Namespace `json:"namespace"` // Org, Project and User only
	Name      string    `json:"name"`
	Dim       int       `json:"dim"`
	CreatedAt time.Time `json:"created_at"`
}

// MediaSpan is where in an episode's audio or video an observation was
// made, in milliseconds from its start.
type MediaSpan struct {
	StartMS int64 `json:"start_ms"`
	EndMS   int64 `json:"end_ms"`
}

// Observation is one face or voice seen or heard, as an embedding.
type Observation struct {
	ID         string     `json:"id"`
	Namespace  Namespace  `json:"namespace"` // Org, Project and User only
	Modality   string     `json:"modality"`
	Embedding  []float32  `json:"embedding,omitempty"`
	IdentityID string     `json:"identity_id"`
	EpisodeID  string     `json:"episode_id,omitempty"`
	Span       *MediaSpan `json:"span,omitempty"`
	At         time.Time  `json:"at"`
}

// Identity is a cluster of observations of one modality taken to be one
// face or one voice. Centroid is the mean of its observations' unit
// embeddings; Count how many it has.
type Identity struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"` // Org, Project and User only
	Modality  string    `json:"modality"`
	Label     string    `json:"label,omitempty"`
	Centroid  []float32 `json:"centroid,omitempty"`
	Count     int       `json:"count"`
	PersonID  string    `json:"person_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Person is the equivalence of identities (a face, a voice) and a name:
// "face_3 is Alice, and voice_7 is Alice too". EntityID names the entity
// of the graph with that name when there is one.
type Person struct {
	ID         string    `json:"id"`
	Namespace  Namespace `json:"namespace"` // Org, Project and User only
	Name       string    `json:"name,omitempty"`
	Aliases    []string  `json:"aliases,omitempty"`
	EntityID   string    `json:"entity_id,omitempty"`
	Source     string    `json:"source"` // PersonStated or PersonAsserted
	EpisodeID  string    `json:"episode_id,omitempty"`
	Identities []string  `json:"identities,omitempty"` // filled on read by the engine
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Names returns the person's name and aliases, normalised (NormalizeName),
// each once.
func (p *Person) Names() []string {
	var out []string
	for _, n := range append([]string{p.Name}, p.Aliases...) {
		if k := NormalizeName(n); k != "" && !containsString(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// IdentityEvent is one entry of the history of identities and persons. It
// holds ids only, no text, so a purge leaves nothing of what was said.
type IdentityEvent struct {
	ID           string    `json:"id"`
	Namespace    Namespace `json:"namespace"` // Org, Project and User only
	Op           string    `json:"op"`        // one of the Identity* operations
	Identities   []string  `json:"identities,omitempty"`
	Observations []string  `json:"observations,omitempty"`
	PersonID     string    `json:"person_id,omitempty"`
	Source       string    `json:"source,omitempty"` // PersonStated, PersonAsserted, or "cluster"
	EpisodeID    string    `json:"episode_id,omitempty"`
	Actor        string    `json:"actor,omitempty"`
	At           time.Time `json:"at"`
}

// IdentityScope returns the scope identity reads use: s's tenant and user.
func IdentityScope(s Scope) Scope { return Scope{Org: s.Org, Project: s.Project, User: s.User} }

// IdentityOwner returns the namespace identity records of n are stored
// under: n's tenant and user.
func IdentityOwner(n Namespace) Namespace {
	return Namespace{Org: n.Org, Project: n.Project, User: n.User}
}

// ValidateOwner returns an EINVALID error naming field when n is not a
// valid namespace of a tenant and a user only.
func validateOwner(field string, n Namespace) error {
	if err := n.Validate(); err != nil {
		return err
	}
	if n.Agent != "" || n.Session != "" {
		return Errorf(EINVALID, "%s: namespace.agent and namespace.session must be empty: identities belong to a user", field)
	}
	return nil
}

// Validate returns an EINVALID error naming the first bad field of m.
func (m *EmbeddingModality) Validate() error {
	if err := validateOwner("modality", m.Namespace); err != nil {
		return err
	}
	if err := ValidModalityName(m.Name); err != nil {
		return err
	}
	if m.Dim < 1 || m.Dim > MaxEmbeddingDim {
		return Errorf(EINVALID, "modality: dim %d is not between 1 and %d", m.Dim, MaxEmbeddingDim)
	}
	return nil
}

// ValidModalityName returns an EINVALID error naming the field modality
// unless name is 1 to MaxModalityNameSize bytes of lower-case letters,
// digits, '-' and '_'.
func ValidModalityName(name string) error {
	ok := name != "" && len(name) <= MaxModalityNameSize
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}
	if !ok {
		return Errorf(EINVALID, "modality: %q is not a modality name (1 to %d of a-z, 0-9, '-', '_')", name, MaxModalityNameSize)
	}
	return nil
}

// Validate returns an EINVALID error naming the first bad field of o.
func (o *Observation) Validate() error {
	if err := validateOwner("observation", o.Namespace); err != nil {
		return err
	}
	if !ValidID(o.ID) {
		return Errorf(EINVALID, "observation: id %q is not a valid id", o.ID)
	}
	if err := ValidModalityName(o.Modality); err != nil {
		return err
	}
	if err := CheckEmbedding("observation: embedding", o.Embedding); err != nil {
		return err
	}
	if o.IdentityID != "" && !ValidID(o.IdentityID) {
		return Errorf(EINVALID, "observation: identity_id %q is not a valid id", o.IdentityID)
	}
	if o.EpisodeID != "" && !ValidID(o.EpisodeID) {
		return Errorf(EINVALID, "observation: episode_id %q is not a valid id", o.EpisodeID)
	}
	if sp := o.Span; sp != nil && (sp.StartMS < 0 || sp.EndMS < sp.StartMS) {
		return Errorf(EINVALID, "observation: span %d..%d ms is not a span (0 <= start_ms <= end_ms)", sp.StartMS, sp.EndMS)
	}
	return nil
}

// CheckEmbedding returns an EINVALID error naming field when v is empty,
// wider than MaxEmbeddingDim, all zero, or holds a NaN or an infinity.
func CheckEmbedding(field string, v []float32) error {
	if len(v) == 0 || len(v) > MaxEmbeddingDim {
		return Errorf(EINVALID, "%s: %d values, want 1 to %d", field, len(v), MaxEmbeddingDim)
	}
	zero := true
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return Errorf(EINVALID, "%s: value %d is not a finite number", field, i)
		}
		zero = zero && x == 0
	}
	if zero {
		return Errorf(EINVALID, "%s: every value is zero", field)
	}
	return nil
}

// Validate returns an EINVALID error naming the first bad field of i.
func (i *Identity) Validate() error {
	if err := validateOwner("identity", i.Namespace); err != nil {
		return err
	}
	if !ValidID(i.ID) {
		return Errorf(EINVALID, "identity: id %q is not a valid id", i.ID)
	}
	if err := ValidModalityName(i.Modality); err != nil {
		return err
	}
	if err := checkText("identity: label", i.Label, MaxShortBytes); err != nil {
		return err
	}
	if i.PersonID != "" && !ValidID(i.PersonID) {
		return Errorf(EINVALID, "identity: person_id %q is not a valid id", i.PersonID)
	}
	if i.Count < 0 {
		return Errorf(EINVALID, "identity: count %d is negative", i.Count)
	}
	return CheckEmbedding("identity: centroid", i.Centroid)
}

// Validate returns an EINVALID error naming the first bad field of p.
func (p *Person) Validate() error {
	if err := validateOwner("person", p.Namespace); err != nil {
		return err
	}
	if !ValidID(p.ID) {
		return Errorf(EINVALID, "person: id %q is not a valid id", p.ID)
	}
	if err := checkText("person: name", p.Name, MaxShortBytes); err != nil {
		return err
	}
	if len(p.Aliases) > MaxAliases {
		return Errorf(EINVALID, "person: %d aliases, more than the limit of %d", len(p.Aliases), MaxAliases)
	}
	for _, a := range p.Aliases {
		if strings.TrimSpace(a) == "" {
			return Errorf(EINVALID, "person: an alias is empty")
		}
		if err := checkText("person: aliases", a, MaxShortBytes); err != nil {
			return err
		}
	}
	if p.EntityID != "" && !ValidID(p.EntityID) {
		return Errorf(EINVALID, "person: entity_id %q is not a valid id", p.EntityID)
	}
	switch p.Source {
	case PersonStated:
		if !ValidID(p.EpisodeID) {
			return Errorf(EINVALID, "person: source %q needs the episode_id of the episode that states it", p.Source)
		}
	case PersonAsserted:
		if p.EpisodeID != "" && !ValidID(p.EpisodeID) {
			return Errorf(EINVALID, "person: episode_id %q is not a valid id", p.EpisodeID)
		}
	default:
		return Errorf(EINVALID, "person: source %q is not %q or %q", p.Source, PersonStated, PersonAsserted)
	}
	return nil
}

// IdentityFilter narrows a list of identities.
type IdentityFilter struct {
	Modality string `json:"modality,omitempty"`
	PersonID string `json:"person_id,omitempty"`
}

// ObservationFilter selects observations: those of the listed identities,
// or the listed ones; at most Limit (0 means MaxIdentityMembers), newest
// first.
type ObservationFilter struct {
	IdentityIDs []string `json:"identity_ids,omitempty"`
	IDs         []string `json:"ids,omitempty"`
	Limit       int      `json:"limit,omitempty"`
}

// IdentityReader is the capability of a Reader whose store keeps
// identities. Every read is in IdentityScope(s): an id of another tenant
// or user answers like an unknown one. A bad scope or id is EINVALID.
type IdentityReader interface {
	// Modalities returns the modalities declared in the scope, by name.
	Modalities(ctx context.Context, s Scope) ([]EmbeddingModality, error)
	// ListIdentities returns the scope's identities matching f, oldest
	// first, at most MaxLimit.
	ListIdentities(ctx context.Context, s Scope, f IdentityFilter) ([]Identity, error)
	// GetIdentity returns the identity or ENOTFOUND.
	GetIdentity(ctx context.Context, s Scope, id string) (*Identity, error)
	// ListObservations returns the observations f selects, newest first.
	ListObservations(ctx context.Context, s Scope, f ObservationFilter) ([]Observation, error)
	// ListPersons returns the scope's persons, oldest first, at most
	// MaxLimit.
	ListPersons(ctx context.Context, s Scope) ([]Person, error)
	// GetPerson returns the person or ENOTFOUND.
	GetPerson(ctx context.Context, s Scope, id string) (*Person, error)
	// IdentityHistory returns the events naming id (an identity, an
	// observation or a person), oldest first.
	IdentityHistory(ctx context.Context, s Scope, id string) ([]IdentityEvent, error)
}

// IdentityWriter is the capability of a Tx whose store keeps identities.
// Writes name the owner's namespace (IdentityOwner).
type IdentityWriter interface {
	// PutModality declares a modality; ECONFLICT if it is declared.
	PutModality(ctx context.Context, m *EmbeddingModality) error
	// PutIdentity stores i, replacing the identity with its tenant and
	// id; EINVALID for a bad identity, ECONFLICT when the id belongs to
	// another user.
	PutIdentity(ctx context.Context, i *Identity) error
	// DeleteIdentity removes an identity of n's tenant and user with its
	// observations; nothing to delete is not an error.
	DeleteIdentity(ctx context.Context, n Namespace, id string) error
	// InsertObservation stores o; ECONFLICT if its user has an observation
	// with its id in the tenant (another user's is no conflict).
	InsertObservation(ctx context.Context, o *Observation) error
	// MoveObservations gives the listed observations of n's tenant and
	// user the identity identityID; unknown ids are skipped.
	MoveObservations(ctx context.Context, n Namespace, ids []string, identityID string) error
	// PutPerson stores p, replacing the person with its tenant and id;
	// ECONFLICT when the id belongs to another user.
	PutPerson(ctx context.Context, p *Person) error
	// DeletePerson removes a person of n's tenant and user; nothing to
	// delete is not an error.
	DeletePerson(ctx context.Context, n Namespace, id string) error
	// InsertIdentityEvent appends an event to the history.
	InsertIdentityEvent(ctx context.Context, ev *IdentityEvent) error
}

// ObservationInput is one observation a client sends.
type ObservationInput struct {
	ID        string     `json:"id,omitempty"` // default a new id
	Modality  string     `json:"modality"`
	Embedding []float32  `json:"embedding"`
	EpisodeID string     `json:"episode_id,omitempty"`
	Span      *MediaSpan `json:"span,omitempty"`
	At        *time.Time `json:"at,omitempty"` // default now
}

// AddObservationsRequest is a batch of observations for one user.
type AddObservationsRequest struct {
	Namespace    Namespace          `json:"namespace"`
	Observations []ObservationInput `json:"observations"`
}

// AddObservationsResult says which identity each observation went to, in
// request order, and which identities the batch's merge pass absorbed.
type AddObservationsResult struct {
	Observations []Observation `json:"observations"`
	Merged       []string      `json:"merged,omitempty"`
}

// IdentityDetail is an identity with its observations (newest first) and
// the episodes they were observed in that the scope can read.
type IdentityDetail struct {
	Identity     Identity      `json:"identity"`
	Observations []Observation `json:"observations"`
	Episodes     []Episode     `json:"episodes,omitempty"`
}

// LinkRequest asserts or records that identities (a face, a voice) and a
// name are one person. PersonID, when set, adds them to that person.
type LinkRequest struct {
	Identities []string `json:"identities,omitempty"`
	Name       string   `json:"name,omitempty"`
	PersonID   string   `json:"person_id,omitempty"`
	Source     string   `json:"source,omitempty"` // default PersonAsserted
	EpisodeID  string   `json:"episode_id,omitempty"`
}

// IdentityMergeRequest merges identities From into Into.
type IdentityMergeRequest struct {
	Into string   `json:"into"`
	From []string `json:"from"`
}

// IdentitySplitRequest moves observations of an identity to a new one.
type IdentitySplitRequest struct {
	Observations []string `json:"observations"`
	Label        string   `json:"label,omitempty"`
}

// IdentityService is the capability of a Service that keeps identities.
// Errors: EINVALID naming the field for bad input (an embedding of a
// declared modality's other dimension is one), ENOTFOUND for an id outside
// the scope; on any error nothing is stored.
type IdentityService interface {
	// AddObservations clusters a batch of observations into identities.
	AddObservations(ctx context.Context, req AddObservationsRequest) (*AddObservationsResult, error)
	// ListIdentities returns the scope's identities matching f.
	ListIdentities(ctx context.Context, s Scope, f IdentityFilter) ([]Identity, error)
	// GetIdentity returns an identity with its observations and episodes.
	GetIdentity(ctx context.Context, s Scope, id string) (*IdentityDetail, error)
	// DeleteIdentity removes an identity and its observations for good.
	DeleteIdentity(ctx context.Context, s Scope, id string) error
	// LinkIdentities records that identities and a name are one person.
	LinkIdentities(ctx context.Context, s Scope, req LinkRequest) (*Person, error)
	// UnlinkIdentity takes an identity out of its person.
	UnlinkIdentity(ctx context.Context, s Scope, id string) (*Identity, error)
	// MergeIdentities merges identities into one.
	MergeIdentities(ctx context.Context, s Scope, req IdentityMergeRequest) (*Identity, error)
	// SplitIdentity moves observations of an identity to a new identity.
	SplitIdentity(ctx context.Context, s Scope, id string, req IdentitySplitRequest) (*Identity, error)
	// ListPersons returns the scope's persons with their identities.
	ListPersons(ctx context.Context, s Scope) ([]Person, error)
	// IdentityHistory returns the history of an identity or a person.
	IdentityHistory(ctx context.Context, s Scope, id string) ([]IdentityEvent, error)
}

// Subjects returns every id ev names: its identities, observations and
// person.
func (ev *IdentityEvent) Subjects() []string {
	out := append(append([]string{}, ev.Identities...), ev.Observations...)
	if ev.PersonID != "" {
		out = append(out, ev.PersonID)
	}
	return out
}

// Validate returns an EINVALID error naming the first bad field of ev.
func (ev *IdentityEvent) Validate() error {
	if err := validateOwner("identity event", ev.Namespace); err != nil {
		return err
	}
	if !ValidID(ev.ID) {
		return Errorf(EINVALID, "identity event: id %q is not a valid id", ev.ID)
	}
	switch ev.Op {
	case IdentityCreate, IdentityMerge, IdentitySplit, IdentityLink, IdentityUnlink, IdentityDelete:
	default:
		return Errorf(EINVALID, "identity event: op %q is not an identity operation", ev.Op)
	}
	for _, id := range ev.Subjects() {
		if !ValidID(id) {
			return Errorf(EINVALID, "identity event: %q is not a valid id", id)
		}
	}
	return checkText("identity event: actor", ev.Actor, MaxShortBytes)
}

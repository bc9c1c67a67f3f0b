package engram

import (
	"context"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The graph: entities (people, places, things) named in a user's memories,
// the mentions that link each entity to the memories that name it, and the
// relations between entities, with validity in event time (ValidAt,
// InvalidAt) and in transaction time (CreatedAt, ExpiredAt). Entities and
// relations are derived from memories (memories → entities, never back)
// and belong to a tenant and a user: an entity's Namespace has only Org,
// Project and User set. A scope's Agent and Session do not narrow what
// entity reads see (an entity spans the sessions that name it); the
// memories an entity links to are read through the memory reads, which
// they do narrow. IncludeShared additionally admits the project's entities
// (User "").

// Entity types. The extractor sets the cheap ones; a client or an LLM may
// set others.
const (
	EntityPerson = "person"
	EntityPlace  = "place"
	EntityWork   = "work" // a quoted title: a book, a film, a song
	// EntityOrganization is a company or an institution: where someone
	// works.
	EntityOrganization = "organization"
	EntityThing        = "thing" // anything else, or not known
)

// EntityStatus is the lifecycle state of an entity.
type EntityStatus string

// Entity statuses.
const (
	EntityActive EntityStatus = "active"
)

// Entity is a person, place or thing named in memories of one user.
type Entity struct {
	ID        string       `json:"id"`
	Namespace Namespace    `json:"namespace"` // Org, Project and User only
	Name      string       `json:"name"`
	Norm      string       `json:"normalized"` // NormalizeName(Name)
	Type      string       `json:"type"`
	Aliases   []string     `json:"aliases,omitempty"` // other names it was found under
	Summary   string       `json:"summary,omitempty"`
	Status    EntityStatus `json:"status"`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
	// Mentions is how many memories name it; stores compute it on read and
	// ignore it on write.
	Mentions int `json:"mentions"`
	// Community is the id of the community it belongs to; only graph
	// reads (GraphService.Graph) set it, and stores ignore it.
	Community string `json:"community,omitempty"`
}

// MaxAliases is the most aliases an entity keeps.
const MaxAliases = 32

// Validate returns an EINVALID error naming the first bad field of e.
func (e *Entity) Validate() error {
	if err := e.Namespace.Validate(); err != nil {
		return err
	}
	if e.Namespace.Agent != "" || e.Namespace.Session != "" {
		return Errorf(EINVALID, "entity: namespace.agent and namespace.session must be empty: an entity belongs to a user")
	}
	if !ValidID(e.ID) {
		return Errorf(EINVALID, "entity: id %q is not a valid id", e.ID)
	}
	if strings.TrimSpace(e.Name) == "" {
		return Errorf(EINVALID, "entity: name is required")
	}
	if err := checkText("entity: name", e.Name, MaxShortBytes); err != nil {
		return err
	}
	if e.Norm != NormalizeName(e.Name) {
		return Errorf(EINVALID, "entity: normalized %q is not the normalized name %q", e.Norm, NormalizeName(e.Name))
	}
	if err := checkText("entity: type", e.Type, 64); err != nil {
		return err
	}
	if len(e.Aliases) > MaxAliases {
		return Errorf(EINVALID, "entity: %d aliases, more than the limit of %d", len(e.Aliases), MaxAliases)
	}
	for _, a := range e.Aliases {
		if err := checkText("entity: alias", a, MaxShortBytes); err != nil {
			return err
		}
		if NormalizeName(a) == "" {
			return Errorf(EINVALID, "entity: alias %q has no letters or digits", a)
		}
	}
	if err := checkText("entity: summary", e.Summary, MaxShortBytes); err != nil {
		return err
	}
	if e.Status != EntityActive {
		return Errorf(EINVALID, "entity: status %q is not active", e.Status)
	}
	return nil
}

// Keys returns the normalised names an entity is found under: its name's
// and each alias's, each once.
func (e *Entity) Keys() []string {
	keys := []string{NormalizeName(e.Name)}
	for _, a := range e.Aliases {
		if k := NormalizeName(a); k != "" && !containsString(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Mention links an entity to a memory that names it.
type Mention struct {
	EntityID  string    `json:"entity_id"`
	MemoryID  string    `json:"memory_id"`
	Namespace Namespace `json:"namespace"` // the entity's
	// At is the memory's event time (its valid_from, else its creation):
	// mentions ordered by it are the entity's timeline.
	At time.Time `json:"at"`
}

// Relation labels made without an LLM.
const (
	// RelationCoOccurs links two entities named in one memory.
	RelationCoOccurs = "co_occurs"
)

// Relation is a directed, labelled edge between two entities of one user,
// supported by memories. Weight is the sum of its evidence's weights,
// computed by the store on read.
type Relation struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"` // Org, Project and User only
	Source    string    `json:"source"`    // entity id
	Target    string    `json:"target"`    // entity id
	Label     string    `json:"label"`
	Weight    float64   `json:"weight"`
	// Event time: when the relation started and stopped holding in the
	// world. Transaction time: when it was recorded and when it stopped
	// being current (it was invalidated).
	ValidAt   *time.Time `json:"valid_at,omitempty"`
	InvalidAt *time.Time `json:"invalid_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiredAt *time.Time `json:"expired_at,omitempty"`
	// Evidence lists the memories that support it with their weights.
	Evidence []Evidence `json:"evidence"`
}

// Evidence is one memory's support of a relation.
type Evidence struct {
	MemoryID string  `json:"memory_id"`
	Weight   float64 `json:"weight"`
}

// Current reports whether r is still current in transaction time.
func (r *Relation) Current() bool { return r.ExpiredAt == nil }

// KeepEvidence keeps of r's evidence the memories in reads, sets r's
// weight to their sum and reports whether any is left: r as a scope that
// reads only those memories may see it.
func (r *Relation) KeepEvidence(reads map[string]bool) bool {
	var kept []Evidence
	w := 0.0
	for _, ev := range r.Evidence {
		if reads[ev.MemoryID] {
			kept = append(kept, ev)
			w += ev.Weight
		}
	}
	r.Evidence, r.Weight = kept, w
	return len(kept) > 0
}

// Other returns the entity at the other end of r from id.
func (r *Relation) Other(id string) string {
	if r.Source == id {
		return r.Target
	}
	return r.Source
}

// Validate returns an EINVALID error naming the first bad field of r.
func (r *Relation) Validate() error {
	if err := r.Namespace.Validate(); err != nil {
		return err
	}
	if r.Namespace.Agent != "" || r.Namespace.Session != "" {
		return Errorf(EINVALID, "relation: namespace.agent and namespace.session must be empty: a relation belongs to a user")
	}
	for _, f := range []struct{ name, id string }{{"id", r.ID}, {"source", r.Source}, {"target", r.Target}} {
		if !ValidID(f.id) {
			return Errorf(EINVALID, "relation: %s %q is not a valid id", f.name, f.id)
		}
	}
	if r.Source == r.Target {
		return Errorf(EINVALID, "relation: source and target are the same entity")
	}
	if strings.TrimSpace(r.Label) == "" {
		return Errorf(EINVALID, "relation: label is required")
	}
	if err := checkText("relation: label", r.Label, 64); err != nil {
		return err
	}
	if r.ValidAt != nil && r.InvalidAt != nil && r.InvalidAt.Before(*r.ValidAt) {
		return Errorf(EINVALID, "relation: invalid_at is before valid_at")
	}
	if len(r.Evidence) == 0 {
		return Errorf(EINVALID, "relation: evidence is required: a relation is supported by at least one memory")
	}
	if len(r.Evidence) > MaxSources {
		return Errorf(EINVALID, "relation: %d evidence memories, more than the limit of %d", len(r.Evidence), MaxSources)
	}
	for i, ev := range r.Evidence {
		for _, o := range r.Evidence[:i] {
			if o.MemoryID == ev.MemoryID {
				return Errorf(EINVALID, "relation: evidence memory %s is listed twice", ev.MemoryID)
			}
		}
		if !ValidID(ev.MemoryID) {
			return Errorf(EINVALID, "relation: evidence memory %q is not a valid id", ev.MemoryID)
		}
		if ev.Weight <= 0 || ev.Weight > 1 {
			return Errorf(EINVALID, "relation: evidence weight %v is outside (0, 1]", ev.Weight)
		}
	}
	return nil
}

// EntityFilter narrows ListEntities.
type EntityFilter struct {
	Type   string // only entities of this type
	Prefix string // only entities whose normalised name starts with NormalizeName(Prefix)
	Cursor string // from a previous page
	Limit  int    // 0 means the default
}

// Validate returns an EINVALID error naming the first bad field of f: a
// type or prefix that no entity's type or name could be (longer than
// their limits, not valid UTF-8, holding a NUL character).
func (f *EntityFilter) Validate() error {
	if err := checkText("type", f.Type, 64); err != nil {
		return err
	}
	return checkText("prefix", f.Prefix, MaxShortBytes)
}

// RelationFilter narrows Relations.
type RelationFilter struct {
	// All includes relations that are no longer current (expired in
	// transaction time); by default only current ones are returned.
	All bool
	// Memory, when set, keeps only relations this memory supports.
	Memory string
	// With, when set, keeps only relations whose other end (the end that
	// is not among the listed entities) is this entity.
	With string
	// Within keeps only relations both of whose ends are among the listed
	// entities.
	Within bool
	// NoEvidence leaves each relation's Evidence nil (its Weight is
	// still the sum): a cheaper read when the memories are not needed.
	NoEvidence bool
	// Label, when set, keeps only relations with this label.
	Label string
	Limit int // 0 means the default
}

// Validate returns an EINVALID error naming the first bad field of f.
func (f *RelationFilter) Validate() error {
	if f.Memory != "" && !ValidID(f.Memory) {
		return Errorf(EINVALID, "relation filter: memory %q is not a valid id", f.Memory)
	}
	if f.With != "" && !ValidID(f.With) {
		return Errorf(EINVALID, "relation filter: with %q is not a valid id", f.With)
	}
	return checkText("relation filter: label", f.Label, 64)
}

// Graph read limits.
const (
	DefaultEntityLimit = 50
	MaxEntityLimit     = 1000
)

// EntityOwner returns the namespace an entity named in a memory of
// namespace n belongs to: n's tenant and user.
func EntityOwner(n Namespace) Namespace {
	return Namespace{Org: n.Org, Project: n.Project, User: n.User}
}

// EntityScope returns the scope of entity reads that s admits: s's
// tenant, user and IncludeShared (agent and session do not narrow
// entities).
func EntityScope(s Scope) Scope {
	return Scope{Org: s.Org, Project: s.Project, User: s.User, IncludeShared: s.IncludeShared}
}

// GraphReader is the capability of a Reader whose store keeps the entity
// graph. Every method is scoped like the memory reads, with the entity
// rule above: an entity is in scope s when its tenant is s's and its user
// is s.User (or "" with s.IncludeShared). An id outside the scope answers
// like an unknown one. A bad scope, id or filter is EINVALID.
type GraphReader interface {
	// GetEntity returns the entity or an ENOTFOUND error.
	GetEntity(ctx context.Context, s Scope, id string) (*Entity, error)
	// ListEntities returns entities ordered by (normalised name, id), and
	// the cursor of the next page ("" on the last).
	ListEntities(ctx context.Context, s Scope, f EntityFilter) ([]Entity, string, error)
	// FindEntities returns the entities whose normalised name or alias is
	// one of keys (normalise them with NormalizeName), each once, in no
	// particular order. It is the lookup of a query's names.
	FindEntities(ctx context.Context, s Scope, keys []string) ([]Entity, error)
	// EntitiesByToken returns up to limit entities one of whose name or
	// alias words (NameTokens) is among tokens: the candidates of fuzzy
	// resolution. Their Mentions are counted up to 100 only.
	EntitiesByToken(ctx context.Context, s Scope, tokens []string, limit int) ([]Entity, error)
	// EntityMentions returns up to limit mentions of the listed entities,
	// newest At first (a limit below 1 means all).
	EntityMentions(ctx context.Context, s Scope, entityIDs []string, limit int) ([]Mention, error)
	// MemoryMentions returns the mentions of the listed memories.
	MemoryMentions(ctx context.Context, s Scope, memoryIDs []string) ([]Mention, error)
	// Relations returns up to f.Limit relations with an end among
	// entityIDs (every relation of the scope when entityIDs is nil),
	// heaviest first, each with its evidence.
	Relations(ctx context.Context, s Scope, entityIDs []string, f RelationFilter) ([]Relation, error)
}

// GraphWriter is the capability of a Tx whose store keeps the entity
// graph. Writes name the owner's namespace (see EntityOwner).
type GraphWriter interface {
	// PutEntity stores e, replacing the entity with its tenant and id; it
	// ignores e.Mentions. EINVALID for a bad entity; ECONFLICT if the id
	// belongs to an entity of another user.
	PutEntity(ctx context.Context, e *Entity) error
	// DeleteEntity removes the entity of n's tenant and user with id, its
	// mentions and every relation it is an end of. Nothing to delete is
	// not an error.
	DeleteEntity(ctx context.Context, n Namespace, id string) error
	// PutMention links an entity and a memory of n's tenant and user
	// (replacing the link's time); ENOTFOUND when either does not exist
	// there.
	PutMention(ctx context.Context, m Mention) error
	// DeleteMention removes one link; nothing to delete is not an error.
	DeleteMention(ctx context.Context, n Namespace, entityID, memoryID string) error
	// PutRelation stores r with exactly its evidence, replacing the
	// relation with its tenant and id. EINVALID for a bad relation;
	// ENOTFOUND when an end or an evidence memory does not exist under n's
	// tenant and user.
	PutRelation(ctx context.Context, r *Relation) error
	// AddEvidence adds (or re-weighs) one memory's support of the relation
	// of n's tenant and user with id, without rewriting the rest.
	// ENOTFOUND when the relation or the memory does not exist there;
	// EINVALID for a bad id or weight.
	AddEvidence(ctx context.Context, n Namespace, relationID string, ev Evidence) error
}

// RelationsWriter is the capability of a Tx to store many relations in a
// few statements; the graph kept with every write uses it for the
// relations a memory makes.
type RelationsWriter interface {
	// PutRelations stores every relation of rs as PutRelation would. A
	// bad relation or an id given twice is EINVALID with nothing stored;
	// ENOTFOUND and ECONFLICT are as PutRelation's, and may leave some of
	// rs stored: the transaction is then to be abandoned.
	PutRelations(ctx context.Context, rs []*Relation) error
}

// NormalizeName folds a name for matching: Unicode case folded, accents
// and other marks removed, ß as ss, a possessive 's dropped, every run of
// characters other than letters and digits a single space, trimmed. It
// returns "" for a name without letters or digits.
func NormalizeName(name string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFKD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r == 'ß' || r == 'ẞ':
			b.WriteString("ss")
			space = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
			// "Caroline's" → "caroline s": dropped below.
			space = true
		default:
			space = true
		}
	}
	s := b.String()
	s = strings.TrimSuffix(s, " s")
	return s
}

// NameTokens returns the words of a normalised name, each once.
func NameTokens(normalized string) []string {
	var out []string
	for _, w := range strings.Fields(normalized) {
		if !containsString(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// EntityPage is one page of ListEntities.
type EntityPage struct {
	Entities []Entity `json:"entities"`
	Next     string   `json:"next,omitempty"`
}

// EntityDetail is an entity with what links to it: the memories that name
// it (active ones the scope sees, newest first), its relations (current
// and past, heaviest first) and its timeline.
type EntityDetail struct {
	Entity    Entity          `json:"entity"`
	Memories  []Memory        `json:"memories"`
	Relations []Relation      `json:"relations"`
	Timeline  []TimelineEntry `json:"timeline"`
}

// TimelineEntry is one mention of an entity in event-time order.
type TimelineEntry struct {
	At          time.Time `json:"at"`
	MemoryID    string    `json:"memory_id"`
	Abstraction string    `json:"abstraction,omitempty"`
	Status      Status    `json:"status"`
}

// GraphRequest asks for the subgraph of a scope (Entity empty: its
// heaviest relations and their ends) or around one entity (within Hops
// relations of it).
type GraphRequest struct {
	Entity string `json:"entity,omitempty"`
	Hops   int    `json:"hops,omitempty"`  // 1 or 2; 0 means 1
	Limit  int    `json:"limit,omitempty"` // the most edges; 0 means DefaultGraphLimit
}

// Graph limits. MaxGraphLimit bounds a subgraph's edges (and so its
// nodes, at most twice as many): enough for the dashboard's drawing of
// 2,000 entities.
const (
	DefaultGraphLimit = 200
	MaxGraphLimit     = 2000
	MaxGraphHops      = 2
)

// RelationLimit returns the most relations a read asking for n returns:
// DefaultEntityLimit for 0; EINVALID outside 0..MaxGraphLimit.
func RelationLimit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultEntityLimit, nil
	case n < 0 || n > MaxGraphLimit:
		return 0, Errorf(EINVALID, "limit %d is outside 1..%d", n, MaxGraphLimit)
	}
	return n, nil
}

// Validate returns an EINVALID error naming the first bad field of r.
func (r *GraphRequest) Validate() error {
	if r.Entity != "" && !ValidID(r.Entity) {
		return Errorf(EINVALID, "entity %q is not a valid id", r.Entity)
	}
	if r.Hops < 0 || r.Hops > MaxGraphHops {
		return Errorf(EINVALID, "hops %d is outside 1..%d", r.Hops, MaxGraphHops)
	}
	if r.Limit < 0 || r.Limit > MaxGraphLimit {
		return Errorf(EINVALID, "limit %d is outside 1..%d", r.Limit, MaxGraphLimit)
	}
	return nil
}

// Graph is a subgraph: entities and the current relations between them.
type Graph struct {
	Nodes []Entity   `json:"nodes"`
	Edges []Relation `json:"edges"`
}

// GraphService is the capability of a Service that reads and deletes the
// entity graph. Every method fails with EINVALID for a bad scope or
// argument, ENOTFOUND for an entity the scope does not hold, and
// EUNAVAILABLE when the store is down.
type GraphService interface {
	// ListEntities lists the scope's entities by normalised name.
	ListEntities(ctx context.Context, s Scope, f EntityFilter) (*EntityPage, error)
	// GetEntity returns an entity with its memories, relations and
	// timeline.
	GetEntity(ctx context.Context, s Scope, id string) (*EntityDetail, error)
	// Graph returns the subgraph r asks for.
	Graph(ctx context.Context, s Scope, r GraphRequest) (*Graph, error)
	// DeleteEntity removes an entity, its mentions and its relations; the
	// memories stay. Writes never widen through IncludeShared.
	DeleteEntity(ctx context.Context, s Scope, id string) error
}

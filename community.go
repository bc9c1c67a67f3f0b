package engram

import (
	"context"
	"time"
)

// Communities: groups of a user's entities that are more tied to each
// other than to the rest, found by label propagation over the current
// relations (see engine/communities.go). Like entities they belong to a
// tenant's user (Namespace has only Org, Project and User), and like
// entities they are derived: a summary quotes the memories listed in
// Sources, and the store removes a community when one of its sources or
// members goes (a purge leaves no text behind in a summary).

// Community is a group of entities with a summary.
type Community struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"` // Org, Project and User only
	// Members are the entity ids, sorted.
	Members []string `json:"members"`
	// Names are the names of the most central members, most central first.
	Names []string `json:"names"`
	// Summary is extractive: the central names and the sentences of the
	// members' memories that name the most of them.
	Summary string `json:"summary"`
	// Abstract is the LLM's summary when one was configured, else "".
	Abstract string `json:"abstract,omitempty"`
	// Sources are the memories the summary quotes.
	Sources   []string  `json:"sources"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MaxCommunitySize is the most entities one community holds: label
// propagation stops a label from spreading further once it has this many.
const MaxCommunitySize = 50

// Validate returns an EINVALID error naming the first bad field of c.
func (c *Community) Validate() error {
	if err := c.Namespace.Validate(); err != nil {
		return err
	}
	if c.Namespace.Agent != "" || c.Namespace.Session != "" {
		return Errorf(EINVALID, "community: namespace.agent and namespace.session must be empty: a community belongs to a user")
	}
	if !ValidID(c.ID) {
		return Errorf(EINVALID, "community: id %q is not a valid id", c.ID)
	}
	if len(c.Members) < 2 || len(c.Members) > MaxCommunitySize {
		return Errorf(EINVALID, "community: %d members, outside 2..%d", len(c.Members), MaxCommunitySize)
	}
	for i, m := range c.Members {
		if !ValidID(m) {
			return Errorf(EINVALID, "community: member %q is not a valid id", m)
		}
		if i > 0 && c.Members[i-1] >= m {
			return Errorf(EINVALID, "community: members are not sorted and distinct")
		}
	}
	if len(c.Sources) > MaxSources {
		return Errorf(EINVALID, "community: %d sources, more than the limit of %d", len(c.Sources), MaxSources)
	}
	for i, s := range c.Sources {
		if !ValidID(s) {
			return Errorf(EINVALID, "community: source %q is not a valid id", s)
		}
		if containsString(c.Sources[:i], s) {
			return Errorf(EINVALID, "community: source %s is listed twice", s)
		}
	}
	if len(c.Names) > MaxCommunitySize {
		return Errorf(EINVALID, "community: %d names, more than the limit of %d", len(c.Names), MaxCommunitySize)
	}
	for _, n := range c.Names {
		if err := checkText("community: name", n, MaxShortBytes); err != nil {
			return err
		}
	}
	if err := checkText("community: summary", c.Summary, MaxContentBytes); err != nil {
		return err
	}
	return checkText("community: abstract", c.Abstract, MaxContentBytes)
}

// Edge is the current tie between two entities: the summed weight of the
// current relations between them, either way. Source < Target.
type Edge struct {
	Source string
	Target string
	Weight float64
}

// CommunityReader is the capability of a Reader whose store keeps
// communities. Reads are scoped like GraphReader's; a bad scope or id is
// EINVALID.
type CommunityReader interface {
	// GraphEdges returns every Edge between current relations' ends of
	// the user n (exactly its tenant and user), ordered by (Source,
	// Target).
	GraphEdges(ctx context.Context, n Namespace) ([]Edge, error)
	// DirtyEntities returns the entities of n whose relations changed (or
	// whose community a purge removed) since ClearDirty, sorted.
	DirtyEntities(ctx context.Context, n Namespace) ([]string, error)
	// DirtyOwners returns up to limit users (Org, Project, User) of any
	// tenant with a non-empty dirty set: the work of a background
	// refresh, which is no user's read.
	DirtyOwners(ctx context.Context, limit int) ([]Namespace, error)
	// Communities returns the scope's communities ordered by id.
	Communities(ctx context.Context, s Scope) ([]Community, error)
	// GetCommunity returns a community or an ENOTFOUND error.
	GetCommunity(ctx context.Context, s Scope, id string) (*Community, error)
	// EntityCommunities maps each of entityIDs that belongs to a community
	// of the scope to that community's id.
	EntityCommunities(ctx context.Context, s Scope, entityIDs []string) (map[string]string, error)
}

// CommunityWriter is the capability of a Tx whose store keeps
// communities.
type CommunityWriter interface {
	// PutCommunity stores c, replacing the community of its tenant with
	// its id and taking its members from any other community. EINVALID for
	// a bad community; ENOTFOUND when a member or source does not exist
	// under c's tenant and user.
	PutCommunity(ctx context.Context, c *Community) error
	// DeleteCommunity removes one; nothing to delete is not an error.
	DeleteCommunity(ctx context.Context, n Namespace, id string) error
	// ClearDirty empties n's dirty set (see DirtyEntities).
	ClearDirty(ctx context.Context, n Namespace) error
}

// CommunityDetail is a community with its members' entities.
type CommunityDetail struct {
	Community Community `json:"community"`
	Entities  []Entity  `json:"entities"`
}

// CommunityList is the communities of a scope.
type CommunityList struct {
	Communities []Community `json:"communities"`
}

// RefreshResult says what a refresh of communities did.
type RefreshResult struct {
	Full       bool `json:"full"`       // everything was recomputed
	Dirty      int  `json:"dirty"`      // entities whose relations had changed
	Recomputed int  `json:"recomputed"` // entities whose community was recomputed
	Written    int  `json:"written"`    // communities written
	Deleted    int  `json:"deleted"`    // communities removed
	Total      int  `json:"total"`      // communities after the refresh
}

// CommunityService is the capability of a Service that keeps communities.
// Every method fails with EINVALID for a bad scope or argument, ENOTFOUND
// for a community the scope does not hold, and EUNAVAILABLE when the store
// is down.
type CommunityService interface {
	// ListCommunities returns the scope's communities.
	ListCommunities(ctx context.Context, s Scope) (*CommunityList, error)
	// GetCommunity returns a community with its members.
	GetCommunity(ctx context.Context, s Scope, id string) (*CommunityDetail, error)
	// RefreshCommunities recomputes the communities of the scope's user
	// that changed since the last refresh (all of them when full).
	RefreshCommunities(ctx context.Context, s Scope, full bool) (*RefreshResult, error)
}

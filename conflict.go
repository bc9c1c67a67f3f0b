package engram

import "context"

// Conflict is a pair of memories a former found to contradict each other
// without one being newer (OpConflict): both stay active, both carry the
// conflict's id under MetaConflict, until a client resolves it.
type Conflict struct {
	ID       string   `json:"id"`
	Memories []Memory `json:"memories"`
}

// Ways to resolve a conflict: what happens to the side not kept.
const (
	ResolveSupersede = "supersede" // closed at the kept one's valid_from, kept for history
	ResolveDelete    = "delete"    // soft-deleted, restorable
)

// ResolveConflictRequest keeps one side of a conflict.
type ResolveConflictRequest struct {
	Keep string `json:"keep"` // id of the memory that stays current
	// Action is ResolveSupersede (the default) or ResolveDelete.
	Action string `json:"action,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ConflictResolution is both sides of a resolved conflict, as stored.
type ConflictResolution struct {
	Kept  Memory `json:"kept"`
	Other Memory `json:"other"`
}

// ConflictService is the capability of a Service that lists and resolves
// conflicts.
type ConflictService interface {
	// ListConflicts returns the open conflicts of the scope, newest first,
	// each with its active members. A bad scope is EINVALID.
	ListConflicts(ctx context.Context, s Scope) ([]Conflict, error)
	// ResolveConflict keeps req.Keep and supersedes or deletes the other
	// member, with req.Reason in both versions. It fails with ENOTFOUND for
	// a conflict that is not open in the scope, EINVALID for a Keep that is
	// not one of its members or an unknown Action.
	ResolveConflict(ctx context.Context, s Scope, id string, req ResolveConflictRequest) (*ConflictResolution, error)
}

// Metadata keys of a conflict's members.
const (
	// MetaConflict is the id of the conflict a memory is part of.
	MetaConflict = "conflict"
	// MetaConflictState is ConflictOpen until the conflict is resolved,
	// then ConflictResolved.
	MetaConflictState = "conflict_state"
	ConflictOpen      = "open"
	ConflictResolved  = "resolved"
)

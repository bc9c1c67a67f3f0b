package engram

import (
	"context"
	"time"
)

// Locator is the capability of a Reader that answers, within one tenant,
// the two questions a client that names memories by id alone asks (Mem0's
// client does): whose is this memory, and which namespaces hold memories.
// Callers scope the answer themselves (a key bound to a user sees only
// that user's namespaces), so this is not a read of records: it returns
// namespaces, never content.
type Locator interface {
	// LocateMemory returns the namespace of the memory id of tenant's
	// user in its org and project (agent and session are ignored). Memory
	// ids are unique per user, so a caller bound to a user names it and
	// finds only its own; with no user, the tenant's one memory with the
	// id is found, and ECONFLICT says that several users hold it (the
	// caller names the user then). ENOTFOUND when there is no such memory,
	// EINVALID for a bad tenant or id.
	LocateMemory(ctx context.Context, tenant Namespace, id string) (Namespace, error)
	// Namespaces returns the namespaces of the tenant that hold at least
	// one active memory, with how many, ordered by user, agent and
	// session, at most limit of them (ClampLimit rules). EINVALID for a
	// bad tenant or limit.
	Namespaces(ctx context.Context, tenant Namespace, limit int) ([]NamespaceCount, error)
}

// NamespaceCount is one namespace of a tenant with the number of its
// active memories and the latest update time among them (transaction time).
type NamespaceCount struct {
	Namespace    Namespace `json:"namespace"`
	Memories     int       `json:"memories"`
	LastActivity time.Time `json:"last_activity"`
}

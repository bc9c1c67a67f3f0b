package engram

import (
	"context"
	"slices"
	"time"
)

// An entity's history: every change of its name, type, aliases or summary,
// and every merge, split and delete, kept as a version with the actor and
// the time, like a memory's. The stores record it as they write: PutEntity
// records a version when it creates an entity or changes what a version
// holds, DeleteEntity one for the delete. A write that is part of a merge
// or a split says so through the context (WithEntityChange), so the
// version names the operation and the entities it involved.

// Entity history operations.
const (
	EntityCreated = "create"
	EntityRenamed = "rename"
	EntityAliased = "alias"  // an alias added or removed
	EntityRetyped = "type"   // the type changed
	EntityUpdated = "update" // the summary changed
	EntityMerge   = "merge"  // the listed entities were merged into it
	EntityMerged  = "merged" // it was merged into the listed entity and is gone
	EntitySplit   = "split"  // split from (a new entity) or split off (the source) the listed entity
	EntityDeleted = "delete" // it was deleted; the version keeps no name
)

// EntityVersion is one recorded change of an entity.
type EntityVersion struct {
	EntityID  string    `json:"entity_id"`
	Namespace Namespace `json:"namespace"` // the entity's owner
	Version   int       `json:"version"`   // 1, 2, … per entity
	Op        string    `json:"op"`
	// Entity is the entity as the change left it (for a merged one, as it
	// was); nil for a delete, which keeps no name.
	Entity *Entity `json:"entity,omitempty"`
	// Related lists the other entities of a merge or a split.
	Related []string  `json:"related,omitempty"`
	Actor   string    `json:"actor,omitempty"`
	At      time.Time `json:"at"`
}

// EntityChange names the operation a store write of an entity is part of.
type EntityChange struct {
	Op      string
	Related []string
	At      time.Time // of a delete; the zero time means now
}

type entityChangeKey struct{}

// WithEntityChange returns a context under which the entity writes of a
// store record c's operation instead of the one they would infer.
func WithEntityChange(ctx context.Context, c EntityChange) context.Context {
	return context.WithValue(ctx, entityChangeKey{}, c)
}

// EntityChangeOf returns the change a store's PutEntity of e records, with
// old the entity as stored before (nil when it is new): the one set by
// WithEntityChange, else create, rename, type, alias or update as e
// differs from old, else an empty Op (nothing to record).
func EntityChangeOf(ctx context.Context, old, e *Entity) EntityChange {
	if c, ok := ctx.Value(entityChangeKey{}).(EntityChange); ok {
		return c
	}
	switch {
	case old == nil:
		return EntityChange{Op: EntityCreated}
	case old.Name != e.Name:
		return EntityChange{Op: EntityRenamed}
	case old.Type != e.Type:
		return EntityChange{Op: EntityRetyped}
	case !slices.Equal(old.Aliases, e.Aliases):
		return EntityChange{Op: EntityAliased}
	case old.Summary != e.Summary:
		return EntityChange{Op: EntityUpdated}
	}
	return EntityChange{}
}

// DeleteChangeOf returns the change a store's DeleteEntity records: the one
// set by WithEntityChange (a merge), else a delete.
func DeleteChangeOf(ctx context.Context) EntityChange {
	if c, ok := ctx.Value(entityChangeKey{}).(EntityChange); ok {
		return c
	}
	return EntityChange{Op: EntityDeleted}
}

// EntityHistoryReader is the capability of a Reader whose store keeps
// entities' history. A delete removes the entity's earlier versions (they
// hold its names) and leaves one nameless version; a merged entity's
// versions stay while the entity it was merged into does; a purge that
// prunes an entity prunes its history.
type EntityHistoryReader interface {
	// EntityHistory returns the versions of the entity id in scope s
	// (scoped like GraphReader), oldest first; none for an unknown id.
	// EINVALID for a bad scope or id.
	EntityHistory(ctx context.Context, s Scope, id string) ([]EntityVersion, error)
}

// MaxMergeEntities is the most entities one merge takes.
const MaxMergeEntities = 100

// SplitRequest asks to split the mentions of the listed memories off an
// entity into a new entity named Name (of Type, else the source's type).
type SplitRequest struct {
	Name     string   `json:"name"`
	Type     string   `json:"type,omitempty"`
	Memories []string `json:"memories"`
}

// Validate returns an EINVALID error naming the first bad field of r.
func (r *SplitRequest) Validate() error {
	if err := checkText("name", r.Name, MaxShortBytes); err != nil {
		return err
	}
	if NormalizeName(r.Name) == "" {
		return Errorf(EINVALID, "name is required and must have a letter or a digit")
	}
	if err := checkText("type", r.Type, 64); err != nil {
		return err
	}
	return checkIDList("memories", r.Memories, MaxSources)
}

// checkIDList refuses an empty list, one longer than max, a malformed id
// and an id listed twice, naming field.
func checkIDList(field string, ids []string, max int) error {
	if len(ids) == 0 {
		return Errorf(EINVALID, "%s is required: list at least one id", field)
	}
	if len(ids) > max {
		return Errorf(EINVALID, "%s: %d ids, more than the limit of %d", field, len(ids), max)
	}
	for i, id := range ids {
		if !ValidID(id) {
			return Errorf(EINVALID, "%s: %q is not a valid id", field, id)
		}
		if slices.Contains(ids[:i], id) {
			return Errorf(EINVALID, "%s: %s is listed twice", field, id)
		}
	}
	return nil
}

// CheckMerge returns an EINVALID error naming the field when from cannot
// be merged into the entity id.
func CheckMerge(id string, from []string) error {
	if err := CheckID("entity", id); err != nil {
		return err
	}
	if err := checkIDList("from", from, MaxMergeEntities); err != nil {
		return err
	}
	if slices.Contains(from, id) {
		return Errorf(EINVALID, "from: lists the entity %s itself", id)
	}
	return nil
}

// GraphEditor is the capability of a Service that merges and splits
// entities and reads their history. EINVALID names the bad field;
// ENOTFOUND for an entity (or, in a split, a memory) the scope does not
// hold; EUNAVAILABLE when the store is down. Merge and split are each one
// transaction: on an error nothing changed.
type GraphEditor interface {
	// MergeEntities merges the entities from into id: their mentions and
	// relations move to it (duplicate relations joined, self-loops
	// dropped), their names become its aliases, and they are gone but for
	// their history. It returns the merged entity.
	MergeEntities(ctx context.Context, s Scope, id string, from []string) (*Entity, error)
	// SplitEntity moves the mentions of r.Memories off the entity id to a
	// new entity, with the relations those memories support, and returns
	// the new entity.
	SplitEntity(ctx context.Context, s Scope, id string, r SplitRequest) (*Entity, error)
	// EntityHistory returns the entity's versions, oldest first; a merged
	// or deleted entity's too.
	EntityHistory(ctx context.Context, s Scope, id string) ([]EntityVersion, error)
}

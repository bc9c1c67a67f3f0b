package storecheck

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// sideWrites checks the writes of what a store keeps beside the records:
// meta values, vectors and the graph with its communities.
type sideWrites struct {
	engram.MetaWriter
	engram.VectorWriter
	engram.GraphWriter
	engram.RelationsWriter
	engram.CommunityWriter
	c *checks
}

// SetMeta: EINVALID for a bad key.
func (x sideWrites) SetMeta(ctx context.Context, key, value string) error {
	if err := x.c.metaKey(key); err != nil {
		return err
	}
	return x.MetaWriter.SetMeta(ctx, key, value)
}

// PutVectors: storeutil.CheckPutVectors's EINVALID.
func (x sideWrites) PutVectors(ctx context.Context, n engram.Namespace, memoryID, embedder string, vecs []engram.FieldVector) error {
	if err := storeutil.CheckPutVectors(n, memoryID, embedder, vecs, x.c.short, x.c.embedder); err != nil {
		return err
	}
	return x.VectorWriter.PutVectors(ctx, n, memoryID, embedder, vecs)
}

// DeleteVectorsExcept: EINVALID for a bad embedder name (an empty one
// would delete every vector).
func (x sideWrites) DeleteVectorsExcept(ctx context.Context, embedder string) (int, error) {
	if err := x.c.embedder(embedder); err != nil {
		return 0, err
	}
	return x.VectorWriter.DeleteVectorsExcept(ctx, embedder)
}

// PutEntity: EINVALID for a bad entity.
func (x sideWrites) PutEntity(ctx context.Context, e *engram.Entity) error {
	if err := e.Validate(); err != nil {
		return err
	}
	return x.GraphWriter.PutEntity(ctx, e)
}

// DeleteEntity: EINVALID for a bad namespace or id.
func (x sideWrites) DeleteEntity(ctx context.Context, n engram.Namespace, id string) error {
	if err := x.c.namespaceID(n, "entity", id); err != nil {
		return err
	}
	return x.GraphWriter.DeleteEntity(ctx, n, id)
}

// PutMention: EINVALID for a bad namespace, entity id or memory id.
func (x sideWrites) PutMention(ctx context.Context, m engram.Mention) error {
	if err := x.c.mention(m.Namespace, m.EntityID, m.MemoryID); err != nil {
		return err
	}
	return x.GraphWriter.PutMention(ctx, m)
}

// DeleteMention: EINVALID for a bad namespace, entity id or memory id.
func (x sideWrites) DeleteMention(ctx context.Context, n engram.Namespace, entityID, memoryID string) error {
	if err := x.c.mention(n, entityID, memoryID); err != nil {
		return err
	}
	return x.GraphWriter.DeleteMention(ctx, n, entityID, memoryID)
}

// PutRelation: EINVALID for a bad relation.
func (x sideWrites) PutRelation(ctx context.Context, r *engram.Relation) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return x.GraphWriter.PutRelation(ctx, r)
}

// AddEvidence: EINVALID for a bad namespace, relation id, memory id or a
// weight outside (0, 1].
func (x sideWrites) AddEvidence(ctx context.Context, n engram.Namespace, relationID string, ev engram.Evidence) error {
	if err := x.c.namespaceID(n, "relation", relationID); err != nil {
		return err
	}
	if err := x.c.id("memory", ev.MemoryID); err != nil {
		return err
	}
	if ev.Weight <= 0 || ev.Weight > 1 {
		return engram.Errorf(engram.EINVALID, "evidence weight %v is outside (0, 1]", ev.Weight)
	}
	return x.GraphWriter.AddEvidence(ctx, n, relationID, ev)
}

// PutRelations: storeutil.CheckRelations's EINVALID.
func (x sideWrites) PutRelations(ctx context.Context, rs []*engram.Relation) error {
	if err := storeutil.CheckRelations(rs); err != nil {
		return err
	}
	return x.RelationsWriter.PutRelations(ctx, rs)
}

// PutCommunity: EINVALID for a bad community.
func (x sideWrites) PutCommunity(ctx context.Context, c *engram.Community) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return x.CommunityWriter.PutCommunity(ctx, c)
}

// DeleteCommunity: EINVALID for a bad namespace or id.
func (x sideWrites) DeleteCommunity(ctx context.Context, n engram.Namespace, id string) error {
	if err := x.c.namespaceID(n, "community", id); err != nil {
		return err
	}
	return x.CommunityWriter.DeleteCommunity(ctx, n, id)
}

// ClearDirty: EINVALID for a bad namespace.
func (x sideWrites) ClearDirty(ctx context.Context, n engram.Namespace) error {
	if err := n.Validate(); err != nil {
		return err
	}
	return x.CommunityWriter.ClearDirty(ctx, n)
}

// mention checks a mention's namespace, entity id and memory id.
func (c *checks) mention(n engram.Namespace, entityID, memoryID string) error {
	if err := c.namespaceID(n, "entity", entityID); err != nil {
		return err
	}
	return c.id("memory", memoryID)
}

package storecheck

import (
	"context"

	"github.com/engramhq/engram"
)

// graphReads checks the reads of the entity graph, its history and its
// communities.
type graphReads struct {
	graphBackend
	engram.EntityHistoryReader
	engram.CommunityReader
	c *checks
}

// GetEntity: EINVALID for a bad scope or id.
func (x graphReads) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.Entity, error) {
	if err := x.c.scopeID(s, "entity", id); err != nil {
		return nil, err
	}
	return x.graphBackend.GetEntity(ctx, s, id)
}

// ListEntities: EINVALID for a bad scope or limit (EntityLimit); the
// backend is given f.Limit as EntityLimit makes it.
func (x graphReads) ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	limit, err := EntityLimit(f.Limit)
	if err != nil {
		return nil, "", err
	}
	f.Limit = limit
	return x.graphBackend.ListEntities(ctx, s, f)
}

// FindEntities: EINVALID for a bad scope; the backend looks the keys up
// as names, up to MaxEntityLimit entities.
func (x graphReads) FindEntities(ctx context.Context, s engram.Scope, keys []string) ([]engram.Entity, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.EntitiesByKey(ctx, s, EntityName, keys, engram.MaxEntityLimit)
}

// EntitiesByToken: EINVALID for a limit outside 1..MaxEntityLimit or a
// bad scope; the backend looks the tokens up as name words.
func (x graphReads) EntitiesByToken(ctx context.Context, s engram.Scope, tokens []string, limit int) ([]engram.Entity, error) {
	if limit < 1 || limit > engram.MaxEntityLimit {
		return nil, engram.Errorf(engram.EINVALID, "limit %d is outside 1..%d", limit, engram.MaxEntityLimit)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.EntitiesByKey(ctx, s, EntityToken, tokens, limit)
}

// EntityMentions: EINVALID for a bad scope or entity id.
func (x graphReads) EntityMentions(ctx context.Context, s engram.Scope, entityIDs []string, limit int) ([]engram.Mention, error) {
	if err := x.c.scopeIDs(s, "entity", entityIDs); err != nil {
		return nil, err
	}
	return x.Mentions(ctx, s, ByEntity, entityIDs, limit)
}

// MemoryMentions: EINVALID for a bad scope or memory id.
func (x graphReads) MemoryMentions(ctx context.Context, s engram.Scope, memoryIDs []string) ([]engram.Mention, error) {
	if err := x.c.scopeIDs(s, "memory", memoryIDs); err != nil {
		return nil, err
	}
	return x.Mentions(ctx, s, ByMemory, memoryIDs, 0)
}

// Relations: EINVALID for a bad scope, entity id, filter or limit; the
// backend is given f.Limit as RelationLimit makes it.
func (x graphReads) Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error) {
	if err := x.c.scopeIDs(s, "entity", entityIDs); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.RelationLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	f.Limit = limit
	return x.graphBackend.Relations(ctx, s, entityIDs, f)
}

// EntityHistory: EINVALID for a bad scope or id.
func (x graphReads) EntityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.EntityVersion, error) {
	if err := x.c.scopeID(s, "entity", id); err != nil {
		return nil, err
	}
	return x.EntityHistoryReader.EntityHistory(ctx, s, id)
}

// GraphEdges: EINVALID for a bad namespace.
func (x graphReads) GraphEdges(ctx context.Context, n engram.Namespace) ([]engram.Edge, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return x.CommunityReader.GraphEdges(ctx, n)
}

// DirtyEntities: EINVALID for a bad namespace.
func (x graphReads) DirtyEntities(ctx context.Context, n engram.Namespace) ([]string, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return x.CommunityReader.DirtyEntities(ctx, n)
}

// Communities: EINVALID for a bad scope.
func (x graphReads) Communities(ctx context.Context, s engram.Scope) ([]engram.Community, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.CommunityReader.Communities(ctx, s)
}

// GetCommunity: EINVALID for a bad scope or id.
func (x graphReads) GetCommunity(ctx context.Context, s engram.Scope, id string) (*engram.Community, error) {
	if err := x.c.scopeID(s, "community", id); err != nil {
		return nil, err
	}
	return x.CommunityReader.GetCommunity(ctx, s, id)
}

// EntityCommunities: EINVALID for a bad scope or entity id.
func (x graphReads) EntityCommunities(ctx context.Context, s engram.Scope, entityIDs []string) (map[string]string, error) {
	if err := x.c.scopeIDs(s, "entity", entityIDs); err != nil {
		return nil, err
	}
	return x.CommunityReader.EntityCommunities(ctx, s, entityIDs)
}

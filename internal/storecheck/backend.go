package storecheck

import (
	"context"

	"github.com/engramhq/engram"
)

// Reader is what a backend's read transaction implements: engram.Reader,
// but for four graph reads that storecheck makes of two (GraphLookups),
// so that no backend repeats them.
type Reader interface {
	records
	engram.Locator
	engram.TenantLister
	engram.UserLister
	engram.FullTextReader
	engram.MetaReader
	engram.VectorReader
	engram.ChangeLog
	engram.Dumper
	engram.Expirer
	engram.ExportPager
	graphBackend
	engram.EntityHistoryReader
	engram.CommunityReader
	engram.IdentityReader
	engram.IdentityExporter
	engram.ResourceReader
	engram.ResourceFinder
	engram.ResourceDumper
	engram.UploadSweeper
	engram.JobReader
	engram.JobBacklogReader
	engram.KeyReader
	engram.VaultKeyReader
}

// Tx is what a backend's write transaction implements: Reader and every
// write of engram.Tx.
type Tx interface {
	Reader
	recordWriter
	engram.MetaWriter
	engram.VectorWriter
	engram.GraphWriter
	engram.RelationsWriter
	engram.CommunityWriter
	engram.IdentityWriter
	engram.ResourceWriter
	jobWriter
	engram.KeyWriter
	engram.VaultKeyWriter
}

// The kinds of key EntitiesByKey looks entities up by.
const (
	EntityName  = "n" // a normalised name or alias (engram.NormalizeName)
	EntityToken = "t" // a word of one (engram.NameTokens)
)

// The columns Mentions selects mentions by.
const (
	ByEntity = "entity_id"
	ByMemory = "memory_id"
)

// GraphLookups are the graph reads a backend offers in place of
// FindEntities, EntitiesByToken, EntityMentions and MemoryMentions.
type GraphLookups interface {
	// EntitiesByKey returns up to limit entities of s, each once, with a
	// key of kind (EntityName or EntityToken) among keys.
	EntitiesByKey(ctx context.Context, s engram.Scope, kind string, keys []string, limit int) ([]engram.Entity, error)
	// Mentions returns the mentions of s whose column col (ByEntity or
	// ByMemory) is among ids, newest first, at most limit of them (all
	// for a limit below 1).
	Mentions(ctx context.Context, s engram.Scope, col string, ids []string, limit int) ([]engram.Mention, error)
}

// graphBackend is the part of the graph reads a backend implements.
type graphBackend interface {
	GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.Entity, error)
	ListEntities(ctx context.Context, s engram.Scope, f engram.EntityFilter) ([]engram.Entity, string, error)
	Relations(ctx context.Context, s engram.Scope, entityIDs []string, f engram.RelationFilter) ([]engram.Relation, error)
	GraphLookups
}

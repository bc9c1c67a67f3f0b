package engine

import (
	"context"
	"errors"

	"github.com/engramhq/engram/engine/index"
)

// The derived indexes (vectors, full text, cached rows and their files)
// live in package index; the engine hands every write's changes to them
// through a batch and reads them in its channels.

// vecBatch is the vector changes of one write: embedded before its
// transaction, staged inside it and applied to the indexes once it
// committed (see index.Batch). A nil batch (no embedder) stages nothing.
type vecBatch = index.Batch

// DefaultIndexSaveEvery is how often, by default, the indexes that changed
// since they were last saved are written to Options.IndexDir.
const DefaultIndexSaveEvery = index.DefaultIndexSaveEvery

// MetaIndexStore is the store meta key holding a random id of the store,
// written into index files so that a file is only ever loaded for the
// store that it was made from. Copying a store (engram migrate-store)
// must not copy it.
const MetaIndexStore = index.MetaIndexStore

// DefaultTextIndexLimit is how many memories one (tenant, user) may hold
// for its full-text search to use the in-memory index (see
// index.DefaultTextIndexLimit).
const DefaultTextIndexLimit = index.DefaultTextIndexLimit

// DefaultTextIndexBytes bounds the heap all text indexes together take
// (see index.DefaultTextIndexBytes).
const DefaultTextIndexBytes = index.DefaultTextIndexBytes

// DefaultRowCacheBytes bounds the bytes of the memories the text indexes
// cache for searches (see index.DefaultRowCacheBytes).
const DefaultRowCacheBytes = index.DefaultRowCacheBytes

// MaxPendingEmbeds is the most memories whose vectors are pending that
// one search embeds on the fly, the newest first (see index.MaxPendingEmbeds).
const MaxPendingEmbeds = index.MaxPendingEmbeds

// SaveIndexes writes every loaded approximate vector index that changed
// since its last save to Options.IndexDir, caught up with the store and
// after waiting for graphs being built in the background, and every
// loaded text index that changed, caught up with the store first; without an IndexDir it does nothing. The
// engine also saves them periodically and on Close. It fails with ctx's
// error or the file system's.
func (e *admin) SaveIndexes(ctx context.Context) error {
	var err error
	if e.vec != nil {
		e.vec.Refresh(ctx)
		err = e.vec.SaveAll(ctx, true)
	}
	return errors.Join(err, e.text.SaveAll(ctx))
}

package storecheck

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// NewReader returns r with the contract's checks in front of every method
// that takes a scope, a namespace, an id or a limit. r is what a backend's
// View or ReadFresh hands out; the result is no engram.Tx, so a reader
// cannot be type-asserted into writing.
func NewReader(r Reader, o Options) engram.Reader { return newReader(r, o.checks()) }

// reader is the whole engram.Reader: one checking part per concern over r,
// and the concerns that take nothing to check as r itself.
type reader struct {
	recordReads
	tenancyReads
	graphReads
	identityReads
	workReads
	maintReads
	engram.FullTextReader
	engram.ExportPager
	engram.IdentityExporter
	engram.ResourceFinder
	engram.ResourceDumper
	engram.JobBacklogReader
	engram.KeyReader
	engram.VaultKeyReader

	inner Reader // what the checks stand in front of
}

var _ engram.Reader = (*reader)(nil)

// Inner returns the backend's own reader or transaction that r, made by
// NewReader or NewTx, checks in front of, and nil for any other r: for a
// backend's tests that reach past the contract into their own
// transaction.
func Inner(r engram.Reader) Reader {
	switch w := r.(type) {
	case *reader:
		return w.inner
	case *tx:
		return w.inner
	}
	return nil
}

func newReader(r Reader, c *checks) *reader {
	return &reader{
		recordReads:      recordReads{r, c},
		tenancyReads:     tenancyReads{r, r, r, r, r, r, c},
		graphReads:       graphReads{r, r, r, c},
		identityReads:    identityReads{r, c},
		workReads:        workReads{r, r, c},
		FullTextReader:   r,
		maintReads:       maintReads{r, r, r},
		ExportPager:      r,
		IdentityExporter: r,
		ResourceFinder:   r,
		ResourceDumper:   r,
		JobBacklogReader: r,
		KeyReader:        r,
		VaultKeyReader:   r,
		inner:            r,
	}
}

// records is the part of engram.Reader that is its own methods.
type records interface {
	GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error)
	GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error)
	GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error)
	ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) ([]engram.Episode, string, error)
	ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error)
	SearchText(ctx context.Context, s engram.Scope, query string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error)
	Versions(ctx context.Context, s engram.Scope, memoryID string) ([]engram.Version, error)
	Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) ([]engram.AuditEntry, string, error)
	Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error
}

// recordReads checks the reads of episodes, memories, versions and audit.
type recordReads struct {
	r records
	c *checks
}

// GetEpisode: EINVALID for a bad scope or id.
func (x recordReads) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	if err := x.c.scopeID(s, "episode", id); err != nil {
		return nil, err
	}
	return x.r.GetEpisode(ctx, s, id)
}

// GetMemory: EINVALID for a bad scope or id.
func (x recordReads) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	if err := x.c.scopeID(s, "memory", id); err != nil {
		return nil, err
	}
	return x.r.GetMemory(ctx, s, id)
}

// GetMemories: EINVALID for a bad scope; the backend is given the valid
// ids of ids, each once.
func (x recordReads) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.r.GetMemories(ctx, s, storeutil.ValidIDs(ids))
}

// ListEpisodes: EINVALID for a bad scope or filter.
func (x recordReads) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) ([]engram.Episode, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	return x.r.ListEpisodes(ctx, s, f)
}

// ListMemories: EINVALID for a bad scope or filter.
func (x recordReads) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	return x.r.ListMemories(ctx, s, f)
}

// SearchText: EINVALID for a bad scope, limit or filter. The backend is
// given the limit ClampLimit makes of limit, and f without its Limit and
// Cursor, which a search ignores.
func (x recordReads) SearchText(ctx context.Context, s engram.Scope, query string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	f.Limit, f.Cursor = 0, ""
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return x.r.SearchText(ctx, s, query, f, n)
}

// Versions: EINVALID for a bad scope or memory id.
func (x recordReads) Versions(ctx context.Context, s engram.Scope, memoryID string) ([]engram.Version, error) {
	if err := x.c.scopeID(s, "memory", memoryID); err != nil {
		return nil, err
	}
	return x.r.Versions(ctx, s, memoryID)
}

// Audit: EINVALID for a bad scope or limit; the backend is given f.Limit
// as ClampLimit makes it.
func (x recordReads) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) ([]engram.AuditEntry, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	limit, err := engram.ClampLimit(f.Limit)
	if err != nil {
		return nil, "", err
	}
	f.Limit = limit
	return x.r.Audit(ctx, s, f)
}

// Export: EINVALID for a bad scope.
func (x recordReads) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return x.r.Export(ctx, s, fn)
}

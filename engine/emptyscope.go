package engine

import (
	"context"

	"github.com/engramhq/engram"
)

// Search implements engram.Service: the searcher's answer, marked
// EmptyScope when it has no hits and the scope holds nothing.
func (e *Engine) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	res, err := e.searcher.Search(ctx, req)
	if err != nil || len(res.Hits) > 0 {
		return res, err
	}
	res.EmptyScope, err = e.scopeEmpty(ctx, req.Scope)
	return res, err
}

// ListMemories implements engram.Service: the list, its empty first page
// marked EmptyScope when the scope holds nothing.
func (e *Engine) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	page, err := e.memories.ListMemories(ctx, s, f)
	if err != nil || len(page.Memories) > 0 || f.Cursor != "" {
		return page, err
	}
	page.EmptyScope, err = e.scopeEmpty(ctx, s)
	return page, err
}

// ListEpisodes implements engram.Service: the list, its empty first page
// marked EmptyScope when the scope holds nothing.
func (e *Engine) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) (*engram.EpisodePage, error) {
	page, err := e.memories.ListEpisodes(ctx, s, f)
	if err != nil || len(page.Episodes) > 0 || f.Cursor != "" {
		return page, err
	}
	page.EmptyScope, err = e.scopeEmpty(ctx, s)
	return page, err
}

// scopeEmpty reports whether the scope s (exactly the one a read asked
// about, shared level included when it asked for it) holds no episode and
// no current memory: two reads of at most one row each, in s only, so it
// costs little and says nothing of another scope. Vault memories count:
// the scope is not empty, though a read without the vault shows none.
func (e *Engine) scopeEmpty(ctx context.Context, s engram.Scope) (bool, error) {
	empty := false
	err := e.core.store.View(ctx, func(r engram.Reader) error {
		ms, _, err := r.ListMemories(ctx, s, engram.MemoryFilter{Limit: 1, Now: e.clock()})
		if err != nil || len(ms) > 0 {
			return err
		}
		eps, _, err := r.ListEpisodes(ctx, s, engram.EpisodeFilter{Limit: 1})
		empty = len(eps) == 0
		return err
	})
	return empty, err
}

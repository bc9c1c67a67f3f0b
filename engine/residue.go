package engine

import (
	"context"
	"slices"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine/index"
)

// Delete means gone. After a hard delete or a purge commits, the engine
// makes the embedder's cache forget the deleted texts, removes the saved
// vector and text indexes of the partition (Options.IndexDir) and asks the store to
// scrub its files (engram.Store's Scrub). Both run after the commit: the delete
// is acknowledged either way, so their failures are logged, not returned.

// historyTexts returns the embedded texts of m and of every version of it,
// read inside the transaction that purges it: the cache keeps a vector for
// each text the memory ever had.
func historyTexts(ctx context.Context, tx engram.Tx, s engram.Scope, m *engram.Memory) ([]string, error) {
	var texts []string
	add := func(m *engram.Memory) {
		if m == nil {
			return
		}
		for _, ft := range index.FieldTexts(m) {
			if !slices.Contains(texts, ft[1]) {
				texts = append(texts, ft[1])
			}
		}
	}
	add(m)
	vs, err := tx.Versions(ctx, s, m.ID)
	if err != nil && !engram.IsNotFound(err) {
		return nil, err
	}
	for i := range vs {
		add(vs[i].Old)
		add(vs[i].New)
	}
	return texts, nil
}

// afterPurge forgets texts of n's partition in the embedder's cache (every
// partition of n's tenant when tenant is set) and scrubs the store.
func (e *core) afterPurge(ctx context.Context, n engram.Namespace, texts []string, tenant bool) {
	ctx = context.WithoutCancel(ctx)
	// Optional on the embedder: embedcache.Cache keeps what it embedded
	// and forgets it; an embedder that keeps nothing (uselite, openai,
	// embedbatch) lacks it and has nothing to forget.
	if f, ok := e.Embedder().(engram.EmbedForgetter); ok {
		var err error
		if tenant {
			err = f.ForgetTenant(ctx, n)
		} else if len(texts) > 0 {
			err = f.ForgetTexts(ctx, n, texts)
		}
		if err != nil {
			e.log.WarnContext(ctx, "engine: the embedding cache could not forget deleted texts", "tenant", n.Tenant(), "err", err)
		}
	}
	if len(texts) > 0 || tenant {
		if err := e.vec.DropFile(ctx, n); err != nil {
			e.log.WarnContext(ctx, "engine: removing the saved vector index after a delete failed", "tenant", n.Tenant(), "err", err)
		}
		if err := e.text.DropFile(n); err != nil {
			e.log.WarnContext(ctx, "engine: removing the saved text index after a delete failed", "tenant", n.Tenant(), "err", err)
		}
	}
	if err := e.store.Scrub(ctx); err != nil {
		e.log.WarnContext(ctx, "engine: scrubbing the store after a delete failed", "tenant", n.Tenant(), "err", err)
	}
}

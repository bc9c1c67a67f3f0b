package index

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/textindex"
)

// warmSoon fills p's row cache in the background (see warm) after its
// index idx was read from a file, unless the engine caches no memories or
// is closing. A load from the store fills the cache as it reads.
func (t *Texts) warmSoon(k partKey, p *textPart, idx *textindex.Index[memAttr]) {
	if t.rowBudget == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.stop == nil {
		return
	}
	t.warming.Add(1)
	t.wg.Go(func() {
		defer t.warming.Done()
		t.warm(k, p, idx)
	})
}

// warm reads the active memories of partition k into p's row cache, a
// page at a time, each page in a read transaction of its own; without it,
// the searches after a restart read their candidates from the store until
// the cache has filled. A page is kept under the rules a search's reads
// are kept by (see textView.Remember). It stops at nine tenths of the
// budget, never making room by dropping what searches cached; when p no
// longer holds idx (reloaded or dropped); when the engine closes; and at
// the store's first error, which it logs: searches then fill the cache
// as before.
func (t *Texts) warm(k partKey, p *textPart, idx *textindex.Index[memAttr]) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-t.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	scope := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	f := engram.MemoryFilter{Statuses: []engram.Status{engram.StatusActive}, Limit: engram.MaxLimit}
	for !t.rowsNearFull() {
		epoch := t.Epoch()
		var (
			ms   []engram.Memory
			seen int64
			next string
		)
		err := t.store.View(ctx, func(r engram.Reader) error {
			var err error
			if _, seen, err = r.Changes(ctx, scope, -1); err != nil {
				return err
			}
			ms, next, err = r.ListMemories(ctx, scope, f)
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				t.log.Warn("engine: warming a row cache failed; searches fill it", "tenant", k.org+"/"+k.project, "err", err)
			}
			return
		}
		if !t.keepWarm(p, idx, k.user, ms, seen, epoch) || next == "" {
			return
		}
		f.Cursor = next
	}
}

// rowsNearFull reports whether the cached memories are at nine tenths of
// the budget, where makeRoom brings them back to.
func (t *Texts) rowsNearFull() bool {
	return t.rowTotal.Load() >= t.rowBudget*9/10
}

// keepWarm caches the memories of ms that belong to user, read in a
// transaction that saw change sequence seen and began after epoch, if p
// has changed no later than seen; a page that p changed after is
// skipped. It reports false when warming should stop: p no longer holds
// idx, or the budget is near.
func (t *Texts) keepWarm(p *textPart, idx *textindex.Index[memAttr], user string, ms []engram.Memory, seen, epoch int64) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.loaded || p.tooLarge || p.idx != idx {
		return false
	}
	if p.changed > seen {
		return true
	}
	for i := range ms {
		if t.rowsNearFull() {
			return false
		}
		if ms[i].Namespace.User == user {
			t.cacheRow(p, &ms[i], epoch)
		}
	}
	return true
}

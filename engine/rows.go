package engine

import (
	"cmp"
	"slices"
	"sync"

	"github.com/engramhq/engram"
)

// DefaultRowCacheBytes bounds the memories the text indexes' partitions
// cache for searches, all together, as rowBytes estimates them.
const DefaultRowCacheBytes = 512 << 20

// rowCache holds memories of one text partition as they are at the
// partition's change sequence, so that a search reads from the store only
// the candidates it lacks (reading about two hundred rows by id was the
// larger part of a search's time at 100k memories). It stays exact
// through three rules:
//   - catchUp drops every memory the change log names, and a reload or an
//     eviction drops them all;
//   - a memory read in a search's transaction is kept only if no change
//     was applied to the partition after the sequence that transaction
//     sees (p.changed <= seen), so it is what the partition's sequence
//     says it is;
//   - access counts are not in the change log: an access flush drops the
//     memories it touched and ticks texts.touches, and a memory read by a
//     search that began before a tick is not kept.
//
// Access counts written by other servers on the same database are seen
// when the memory next changes, its partition reloads, or this server's
// own reads of it are flushed.
//
// Memories with a TTL (judged by the store's clock) and vault memories
// are never kept.
type rowCache struct {
	mu    sync.RWMutex
	m     map[string]*engram.Memory
	bytes int64
}

// rowBytes estimates the heap a cached memory takes: the struct, its
// strings, cues, sources and metadata, and its map entry.
func rowBytes(m *engram.Memory) int64 {
	n := 420 + len(m.ID)*2 + len(m.Namespace.Org) + len(m.Namespace.Project) + len(m.Namespace.User) +
		len(m.Namespace.Agent) + len(m.Namespace.Session) + len(m.Abstraction) + len(m.Value) +
		len(m.Language) + len(m.SupersededBy)
	for _, c := range m.Cues {
		n += 16 + len(c)
	}
	for _, s := range m.Sources {
		n += 16 + len(s)
	}
	if m.Metadata != nil {
		n += 48 + valueBytes(m.Metadata)
	}
	return int64(n)
}

// valueBytes estimates the heap of a decoded JSON value.
func valueBytes(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 48
		for k, x := range v {
			n += 32 + len(k) + valueBytes(x)
		}
		return n
	case []any:
		n := 24
		for _, x := range v {
			n += 16 + valueBytes(x)
		}
		return n
	case string:
		return 16 + len(v)
	}
	return 16
}

// cacheable reports whether m may be kept.
func cacheable(m *engram.Memory) bool {
	return m.ExpiresAt == nil && m.Kind != engram.KindVault
}

// cacheRow keeps a copy of m, which must be current at p's sequence, in
// p's cache, within the budget, unless an access flush came after epoch.
// The caller holds p.mu (for reading at least).
func (t *texts) cacheRow(p *textPart, m *engram.Memory, epoch int64) {
	if t.rowBudget == 0 || !cacheable(m) {
		return
	}
	b := rowBytes(m)
	p.rows.mu.Lock()
	// Checked under the lock touched takes after its tick: either this
	// sees the tick, or touched drops m after it.
	if t.touches.Load() != epoch {
		p.rows.mu.Unlock()
		return
	}
	if old := p.rows.m[m.ID]; old != nil {
		t.forgetLocked(p, m.ID, old)
	}
	if p.rows.m == nil {
		p.rows.m = map[string]*engram.Memory{}
	}
	p.rows.m[m.ID] = m.Clone()
	p.rows.bytes += b
	over := t.rowTotal.Add(b) > t.rowBudget
	p.rows.mu.Unlock()
	if over {
		t.makeRoom(p, m.ID)
	}
}

// makeRoom brings the cached memories back under nine tenths of the
// budget (so that it is not over again at the next memory) after p cached
// keep: the partitions searched less recently than p drop all theirs
// first, then p drops some of its own, any of them but keep (a map's
// order).
func (t *texts) makeRoom(p *textPart, keep string) {
	t.mu.Lock()
	var older []*textPart
	for _, o := range t.parts {
		if o != p && o.used.Load() <= p.used.Load() {
			older = append(older, o)
		}
	}
	t.mu.Unlock()
	slices.SortFunc(older, func(a, b *textPart) int { return cmp.Compare(a.used.Load(), b.used.Load()) })
	for _, o := range older {
		if t.rowTotal.Load() <= t.rowBudget*9/10 {
			return
		}
		t.dropRows(o)
	}
	p.rows.mu.Lock()
	defer p.rows.mu.Unlock()
	for id, old := range p.rows.m {
		if t.rowTotal.Load() <= t.rowBudget*9/10 {
			return
		}
		if id != keep {
			t.forgetLocked(p, id, old)
		}
	}
}

// dropRows empties p's cache.
func (t *texts) dropRows(p *textPart) {
	p.rows.mu.Lock()
	t.rowTotal.Add(-p.rows.bytes)
	p.rows.m, p.rows.bytes = nil, 0
	p.rows.mu.Unlock()
}

// forgetRows drops the memories ids from p's cache.
func (t *texts) forgetRows(p *textPart, ids []string) {
	p.rows.mu.Lock()
	defer p.rows.mu.Unlock()
	for _, id := range ids {
		if m := p.rows.m[id]; m != nil {
			t.forgetLocked(p, id, m)
		}
	}
}

// forgetLocked drops m, cached under id, from p's cache; the caller
// holds p.rows.mu.
func (t *texts) forgetLocked(p *textPart, id string, m *engram.Memory) {
	b := rowBytes(m)
	delete(p.rows.m, id)
	p.rows.bytes -= b
	t.rowTotal.Add(-b)
}

// touched is told, after an access flush committed, which memories of a
// tenant it touched: they are dropped from the caches of the tenant's
// partitions, and searches that began before are kept from caching what
// they read.
func (t *texts) touched(tenant engram.Namespace, ids []string) {
	if t == nil || t.rowBudget == 0 {
		return
	}
	t.touches.Add(1)
	t.mu.Lock()
	var parts []*textPart
	for k, p := range t.parts {
		if k.org == tenant.Org && k.project == tenant.Project {
			parts = append(parts, p)
		}
	}
	t.mu.Unlock()
	for _, p := range parts {
		t.forgetRows(p, ids)
	}
}

// Memories implements retrieval.RowCache: the memories among ids that
// the view's partitions cache and its scope contains (an agent or session
// scope sees only its own). They are the cache's own: the search copies
// its hits before it returns them (see search.result). One partition's
// lock is held at a time.
func (v *textView) Memories(ids []string, into map[string]*engram.Memory) (miss []string) {
	for _, p := range v.parts {
		miss = miss[:0]
		p.rows.mu.RLock()
		for _, id := range ids {
			if m := p.rows.m[id]; m != nil && v.scope.Contains(m.Namespace) {
				into[id] = m
			} else {
				miss = append(miss, id)
			}
		}
		p.rows.mu.RUnlock()
		ids = slices.Clone(miss)
	}
	return ids
}

// Remember implements retrieval.RowCache: the memories read in the
// search's transaction are kept in their partition's cache when nothing
// changed there since that transaction's sequence and no access flush
// came after the search began.
func (v *textView) Remember(ms []engram.Memory) {
	if v.t.rowBudget == 0 {
		return
	}
	for i, p := range v.parts {
		p.mu.RLock()
		if p.changed <= v.seen[i] && p.loaded && !p.tooLarge {
			user := v.parts[0] == p
			for j := range ms {
				m := &ms[j]
				mine := (user && m.Namespace.User == v.scope.User) || (!user && m.Namespace.User == "")
				if mine {
					v.t.cacheRow(p, m, v.epoch)
				}
			}
		}
		p.mu.RUnlock()
	}
}

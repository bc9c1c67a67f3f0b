package index

import (
	"cmp"
	"slices"
	"sync"

	"github.com/engramhq/engram"
)

// DefaultRowCacheBytes bounds the memories the text indexes' partitions
// cache for searches, all together, as rowBytes estimates them.
const DefaultRowCacheBytes = 512 << 20

// rowCache holds memories of one text partition, packed (see packedRow),
// as they are at the partition's change sequence, so that a search reads
// from the store only the candidates it lacks (reading about two hundred
// rows by id was the larger part of a search's time at 100k memories).
// It stays exact through three rules:
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
	m     map[string]*packedRow // by id
	bytes int64
}

// rowBytes estimates the heap m takes packed in a cache (see packedRow):
// the struct, its text, its map entry, its optional times and metadata.
func rowBytes(m *engram.Memory) int64 {
	n := int64(112 + 64) // packedRow, and its entry in the cache's map
	text := 0
	for _, f := range []string{m.ID, m.Namespace.Org, m.Namespace.Project, m.Namespace.User, m.Namespace.Agent,
		m.Namespace.Session, string(m.Kind), string(m.Status), m.Language, m.SupersededBy, m.Abstraction, m.Value} {
		text += uvarintLen(len(f)) + len(f)
	}
	for _, l := range [][]string{m.Cues, m.Sources} {
		text += uvarintLen(len(l) + 1)
		for _, s := range l {
			text += uvarintLen(len(s)) + len(s)
		}
	}
	n += int64(text+15) &^ 15
	if m.ValidFrom != nil || m.ValidTo != nil || m.ExpiredAt != nil || m.ExpiresAt != nil || m.LastAccessed != nil {
		n += 128
	}
	if m.Metadata != nil {
		n += 48 + int64(valueBytes(m.Metadata))
	}
	return n
}

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int {
	k := 1
	for ; n >= 0x80; n >>= 7 {
		k++
	}
	return k
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
func (t *Texts) cacheRow(p *textPart, m *engram.Memory, epoch int64) {
	if t.rowBudget == 0 || !cacheable(m) {
		return
	}
	r, ok := packRow(m)
	if !ok {
		return
	}
	b := int64(r.size)
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
		p.rows.m = map[string]*packedRow{}
	}
	p.rows.m[r.id()] = r
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
func (t *Texts) makeRoom(p *textPart, keep string) {
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
func (t *Texts) dropRows(p *textPart) {
	p.rows.mu.Lock()
	t.rowTotal.Add(-p.rows.bytes)
	p.rows.m, p.rows.bytes = nil, 0
	p.rows.mu.Unlock()
}

// forgetRows drops the memories ids from p's cache.
func (t *Texts) forgetRows(p *textPart, ids []string) {
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
func (t *Texts) forgetLocked(p *textPart, id string, r *packedRow) {
	b := int64(r.size)
	delete(p.rows.m, id)
	p.rows.bytes -= b
	t.rowTotal.Add(-b)
}

// Touched is told, after an access flush committed, which memories of a
// tenant it touched: they are dropped from the caches of the tenant's
// partitions, and searches that began before are kept from caching what
// they read.
func (t *Texts) Touched(tenant engram.Namespace, ids []string) {
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

// Memories implements retrieval.TextIndex: the memories among ids that
// the view's partitions cache and its scope contains (an agent or session
// scope sees only its own). They share their strings, lists, metadata
// and times with the cache: the search copies its hits before it returns
// them (see search.result). One partition's lock is held at a time.
func (v *textView) Memories(ids []string, into map[string]*engram.Memory) (miss []string) {
	// The memories unpacked, in one allocation: at most one per id.
	ms := make([]engram.Memory, 0, len(ids))
	var strs []string
	for _, p := range v.parts {
		miss = miss[:0]
		p.rows.mu.RLock()
		for _, id := range ids {
			if r := p.rows.m[id]; r != nil {
				ms = append(ms, engram.Memory{})
				m := &ms[len(ms)-1]
				if rest := r.unpackInto(m, strs); v.scope.Contains(m.Namespace) {
					into[id], strs = m, rest
					continue
				}
				ms = ms[:len(ms)-1]
			}
			miss = append(miss, id)
		}
		p.rows.mu.RUnlock()
		ids = slices.Clone(miss)
	}
	return ids
}

// Remember implements retrieval.TextIndex: the memories read in the
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

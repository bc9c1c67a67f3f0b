package embedcache

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/engramhq/engram"
)

// Defaults for zero Options fields.
const (
	DefaultMaxEntries = 100_000
	DefaultMaxBytes   = 256 << 20
)

// entryOverhead approximates the memory an LRU entry takes besides its
// vector: the key, the list element and the map slot.
const entryOverhead = 128

// Options configure a Cache.
type Options struct {
	// Path is the SQLite file of the disk store, e.g.
	// "<data dir>/embeddings-cache.db"; its directory is created if needed.
	// Empty keeps the cache in memory only.
	Path string
	// MaxEntries bounds the in-memory LRU by entries. Zero means
	// DefaultMaxEntries; a negative value disables the memory tier.
	MaxEntries int
	// MaxBytes bounds the in-memory LRU by approximate bytes (vectors plus
	// a fixed overhead per entry). Zero means DefaultMaxBytes.
	MaxBytes int64
	// Logger receives disk store failures. Default slog.Default().
	Logger *slog.Logger
	// Variant tells apart vectors that one model (one Name) computes in
	// different ways, e.g. "int8" for a quantized encoder: it joins the
	// name in every key, so one variant's vectors never answer the other's
	// calls. Empty keys by the name alone.
	Variant string
}

// Stats counts what a Cache has done since New. Hits and misses count
// distinct texts per call: a text repeated within one call counts once.
type Stats struct {
	MemoryHits int64 // found in the LRU
	DiskHits   int64 // found in the disk store
	Misses     int64 // embedded by the inner embedder
	Shared     int64 // embedded by a concurrent call's inner call and shared
	InnerCalls int64 // calls made to the inner embedder
	Corrupt    int64 // disk entries of the wrong length, treated as misses
	DiskErrors int64 // failed disk reads or writes (logged)
	Entries    int   // entries now in the LRU
	Bytes      int64 // approximate bytes now in the LRU
}

type key [sha256.Size]byte

type entry struct {
	k      key
	tenant key // tenantKey of the entry's partition; zero for the shared one
	vec    []float32
}

// call is an inner embedding of one text in progress, which concurrent
// callers missing the same text wait for.
type call struct {
	done chan struct{}
	vec  []float32
	err  error
}

// Cache is an engram.Embedder that remembers the vectors of its inner
// embedder. It is safe for concurrent use.
type Cache struct {
	inner  engram.Embedder
	keyTag string // the name keys are made with: Name, and Variant if set
	db     *disk  // nil without Options.Path
	logger *slog.Logger

	maxEntries int
	maxBytes   int64

	mu       sync.Mutex
	lru      *list.List // of *entry, most recently used first
	items    map[key]*list.Element
	bytes    int64
	inflight map[key]*call

	memHits, diskHits, misses, shared, innerCalls, corrupt, diskErrors atomic.Int64

	closed atomic.Bool
}

var _ engram.Embedder = (*Cache)(nil)

// New returns a Cache over inner. With Options.Path set it opens (creating
// if needed) the disk store and fails with EINVALID for an unusable path or
// EUNAVAILABLE when the file cannot be opened as a cache database.
func New(inner engram.Embedder, opts Options) (*Cache, error) {
	if inner == nil {
		return nil, engram.Errorf(engram.EINVALID, "embedcache: inner embedder is nil")
	}
	if opts.MaxBytes < 0 {
		return nil, engram.Errorf(engram.EINVALID, "embedcache: MaxBytes %d is negative", opts.MaxBytes)
	}
	c := &Cache{
		inner:      inner,
		keyTag:     inner.Name(),
		logger:     opts.Logger,
		maxEntries: opts.MaxEntries,
		maxBytes:   opts.MaxBytes,
		lru:        list.New(),
		items:      make(map[key]*list.Element),
		inflight:   make(map[key]*call),
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.maxEntries == 0 {
		c.maxEntries = DefaultMaxEntries
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if opts.Variant != "" {
		c.keyTag += "\x00" + opts.Variant
	}
	if opts.Path != "" {
		d, err := openDisk(opts.Path)
		if err != nil {
			return nil, err
		}
		c.db = d
	}
	return c, nil
}

// Name returns the inner embedder's Name.
func (c *Cache) Name() string { return c.inner.Name() }

// Dim returns the inner embedder's Dim.
func (c *Cache) Dim() int { return c.inner.Dim() }

// Languages implements engram.LanguageCoverer with the inner embedder's
// languages, or nil (every language) when it declares none or lacks the
// optional capability (openai does).
func (c *Cache) Languages() []string {
	if lc, ok := c.inner.(engram.LanguageCoverer); ok {
		return lc.Languages()
	}
	return nil
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	entries, bytes := c.lru.Len(), c.bytes
	c.mu.Unlock()
	return Stats{
		MemoryHits: c.memHits.Load(),
		DiskHits:   c.diskHits.Load(),
		Misses:     c.misses.Load(),
		Shared:     c.shared.Load(),
		InnerCalls: c.innerCalls.Load(),
		Corrupt:    c.corrupt.Load(),
		DiskErrors: c.diskErrors.Load(),
		Entries:    entries,
		Bytes:      bytes,
	}
}

// Close closes the disk store. Later calls to Embed fail; Close is safe to
// call more than once.
func (c *Cache) Close() error {
	if c.closed.Swap(true) || c.db == nil {
		return nil
	}
	if err := c.db.close(); err != nil {
		return fmt.Errorf("embedcache: close: %w", err)
	}
	return nil
}

// Embed returns one vector per text, in order, from the cache where it can
// and from one call to the inner embedder for the rest. It fails as a whole,
// with the inner embedder's error (code kept) when that call fails,
// EINTERNAL when the inner embedder breaks its contract, EUNAVAILABLE after
// Close, or the context's error. The returned vectors are the caller's to
// modify.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.closed.Load() {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "embedcache: the cache is closed")
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	name := c.keyTag
	want := c.inner.Dim()
	part := engram.EmbedPartitionFrom(ctx)
	tenant := tenantKey(part)

	// Work on distinct texts; slot maps each input to its distinct one.
	slot := make([]int, len(texts))
	var keys []key
	var uniq []string
	seen := make(map[key]int, len(texts))
	var kbuf []byte
	for i, t := range texts {
		var k key
		k, kbuf = keyOf(kbuf, part, name, t)
		j, ok := seen[k]
		if !ok {
			j = len(keys)
			seen[k] = j
			keys = append(keys, k)
			uniq = append(uniq, t)
		}
		slot[i] = j
	}
	res := make([][]float32, len(keys))

	var missing []int
	c.mu.Lock()
	for i, k := range keys {
		if v, ok := c.getLocked(k, want); ok {
			res[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	c.memHits.Add(int64(len(keys) - len(missing)))

	if len(missing) > 0 && c.db != nil {
		var err error
		if missing, err = c.fromDisk(ctx, tenant, keys, missing, res, want); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		if err := c.fill(ctx, tenant, keys, uniq, missing, res, want); err != nil {
			return nil, err
		}
	}

	// Hand out copies, in one allocation, so callers cannot alter the
	// cached vectors.
	total := 0
	for _, j := range slot {
		total += len(res[j])
	}
	buf := make([]float32, total)
	out := make([][]float32, len(texts))
	for i, j := range slot {
		n := copy(buf, res[j])
		out[i], buf = buf[:n:n], buf[n:]
	}
	return out, nil
}

// fromDisk fills res for the missing keys found on disk and returns those
// still missing. Disk failures other than the context's are logged and
// leave every key missing.
func (c *Cache) fromDisk(ctx context.Context, tenant key, keys []key, missing []int, res [][]float32, want int) ([]int, error) {
	ks := make([]key, len(missing))
	for j, i := range missing {
		ks[j] = keys[i]
	}
	found, bad, err := c.db.get(ctx, ks, want)
	c.corrupt.Add(int64(bad))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embedcache: %w", ctx.Err())
		}
		c.diskErrors.Add(1)
		c.logger.Warn("embedcache: disk lookup failed; embedding instead", "err", err)
		return missing, nil
	}
	if len(found) == 0 {
		return missing, nil
	}
	still := missing[:0:0]
	c.mu.Lock()
	for _, i := range missing {
		if v, ok := found[keys[i]]; ok {
			res[i] = v
			c.putLocked(keys[i], tenant, v)
		} else {
			still = append(still, i)
		}
	}
	c.mu.Unlock()
	c.diskHits.Add(int64(len(missing) - len(still)))
	return still, nil
}

// fill resolves the missing keys through the inner embedder, joining calls
// already in flight for some of them and making one call for the others.
func (c *Cache) fill(ctx context.Context, tenant key, keys []key, texts []string, missing []int, res [][]float32, want int) error {
	pending := missing
	for len(pending) > 0 {
		var own, waits []int
		var ownCalls, waitCalls []*call
		recheck := 0
		c.mu.Lock()
		for _, i := range pending {
			k := keys[i]
			// Another call may have finished this key since our lookup;
			// it publishes to memory and leaves inflight under mu.
			if v, ok := c.getLocked(k, want); ok {
				res[i] = v
				recheck++
				continue
			}
			if cl, ok := c.inflight[k]; ok {
				waits, waitCalls = append(waits, i), append(waitCalls, cl)
				continue
			}
			cl := &call{done: make(chan struct{})}
			c.inflight[k] = cl
			own, ownCalls = append(own, i), append(ownCalls, cl)
		}
		c.mu.Unlock()
		c.shared.Add(int64(recheck))

		if len(own) > 0 {
			if err := c.embedOwn(ctx, tenant, keys, texts, own, ownCalls, res); err != nil {
				return err
			}
		}

		var again []int
		for j, i := range waits {
			cl := waitCalls[j]
			select {
			case <-cl.done:
			case <-ctx.Done():
				return fmt.Errorf("embedcache: %w", ctx.Err())
			}
			if cl.err != nil {
				// The other caller failed, perhaps only because its own
				// context ended; try these texts ourselves.
				again = append(again, i)
				continue
			}
			res[i] = cl.vec
			c.shared.Add(1)
		}
		pending = again
	}
	return nil
}

// embedOwn embeds the texts this caller registered in inflight, stores the
// vectors and wakes the callers waiting for them.
func (c *Cache) embedOwn(ctx context.Context, tenant key, keys []key, texts []string, own []int, calls []*call, res [][]float32) (err error) {
	// Waiters must be woken however this ends, a panic in the inner
	// embedder included, or they would wait forever.
	published := false
	defer func() {
		if published {
			return
		}
		failure := err
		if failure == nil {
			failure = engram.Errorf(engram.EINTERNAL, "embedcache: embedder %q panicked", c.inner.Name())
		}
		c.mu.Lock()
		for j, i := range own {
			delete(c.inflight, keys[i])
			calls[j].err = failure
			close(calls[j].done)
		}
		c.mu.Unlock()
	}()

	batch := make([]string, len(own))
	for j, i := range own {
		batch[j] = texts[i]
	}
	c.innerCalls.Add(1)
	vecs, err := c.inner.Embed(ctx, batch)
	if err == nil {
		err = c.checkInner(vecs, len(batch))
	}
	if err != nil {
		return fmt.Errorf("embedcache: %w", err)
	}
	c.misses.Add(int64(len(own)))

	if c.db != nil {
		ks := make([]key, len(own))
		for j, i := range own {
			ks[j] = keys[i]
		}
		// Persist even if the caller gives up now: the vectors are paid for.
		if err := c.db.put(context.WithoutCancel(ctx), tenant, ks, vecs); err != nil {
			c.diskErrors.Add(1)
			c.logger.Warn("embedcache: disk write failed; vectors are cached in memory only", "err", err)
		}
	}

	c.mu.Lock()
	for j, i := range own {
		c.putLocked(keys[i], tenant, vecs[j])
		delete(c.inflight, keys[i])
		calls[j].vec = vecs[j]
		close(calls[j].done)
		res[i] = vecs[j]
	}
	published = true
	c.mu.Unlock()
	return nil
}

// checkInner verifies that the inner embedder kept its contract, so that a
// broken answer is never cached for good.
func (c *Cache) checkInner(vecs [][]float32, n int) error {
	if len(vecs) != n {
		return engram.Errorf(engram.EINTERNAL, "embedcache: embedder %q returned %d vectors for %d texts", c.inner.Name(), len(vecs), n)
	}
	want := c.inner.Dim()
	for i, v := range vecs {
		if len(v) == 0 || (want > 0 && len(v) != want) || len(v) != len(vecs[0]) {
			return engram.Errorf(engram.EINTERNAL, "embedcache: embedder %q returned a vector of length %d (Dim %d) for text %d",
				c.inner.Name(), len(v), want, i)
		}
	}
	return nil
}

// getLocked returns the cached vector for k and marks it recently used.
// An entry of a length other than want (when known) is dropped.
func (c *Cache) getLocked(k key, want int) ([]float32, bool) {
	el, ok := c.items[k]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if want > 0 && len(e.vec) != want {
		c.removeLocked(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.vec, true
}

// putLocked adds or refreshes k and evicts the least recently used entries
// beyond the bounds.
func (c *Cache) putLocked(k, tenant key, vec []float32) {
	if c.maxEntries < 0 {
		return
	}
	size := int64(4*len(vec) + entryOverhead)
	if size > c.maxBytes {
		return
	}
	if el, ok := c.items[k]; ok {
		e := el.Value.(*entry)
		c.bytes += size - int64(4*len(e.vec)+entryOverhead)
		e.vec = vec
		c.lru.MoveToFront(el)
	} else {
		c.items[k] = c.lru.PushFront(&entry{k: k, tenant: tenant, vec: vec})
		c.bytes += size
	}
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.lru.Back())
	}
}

func (c *Cache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*entry)
	delete(c.items, e.k)
	c.bytes -= int64(4*len(e.vec) + entryOverhead)
}

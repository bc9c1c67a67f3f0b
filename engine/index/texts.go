package index

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/textindex"
)

// DefaultTextIndexLimit is how many memories one (tenant, user) may hold
// for its full-text search to use the in-memory index; above it the
// store's index serves. At about 600 bytes per conversational memory
// (TestBytesPerMemory in package textindex) it bounds one namespace's
// index near 600 MB.
const DefaultTextIndexLimit = 1_000_000

// DefaultTextIndexBytes bounds the heap all text indexes together take
// (as textindex.Index.Bytes estimates it): past it, the indexes searched
// least recently are dropped, to be loaded again from the store when next
// searched.
const DefaultTextIndexBytes = 1 << 30

// Texts keeps one in-memory full-text index per (tenant, user), like the
// vector indexes: derived data, loaded from the store on first use and
// brought up to date from the store's change log before every search, so
// writes by this engine and by other servers on the same database are
// seen. Each index has its own statistics, so one tenant's writes never
// move another's scores.
type Texts struct {
	limit  int
	budget int64        // bytes; 0 for no bound
	total  atomic.Int64 // bytes of the loaded indexes
	clock  atomic.Int64 // ticks once a search, for least-recent use

	rowBudget int64        // bytes of cached memories, all partitions together; 0 caches none
	rowTotal  atomic.Int64 // bytes of the cached memories
	touches   atomic.Int64 // ticks once per access flush (see Touched)

	mu     sync.Mutex
	parts  map[partKey]*textPart
	closed bool // no more background saves

	// With the index directory (see SetUpFiles); files is nil without.
	files   *textFiles
	store   engram.Store
	log     *slog.Logger
	saveMu  sync.Mutex // one save or file removal at a time
	stop    chan struct{}
	wg      sync.WaitGroup
	warming sync.WaitGroup // the warm goroutines, also in wg
}

type textPart struct {
	used  atomic.Int64 // Texts.clock when last searched
	bytes atomic.Int64 // idx.Bytes() as counted in Texts.total

	mu       sync.RWMutex
	loaded   bool
	tooLarge bool // more memories than the limit, or no change log: the store's index serves
	// unbounded is set when the partition held more memories than the
	// limit but the store had no full-text index to serve it (see
	// tooMany): the in-memory index keeps serving until it is loaded again.
	unbounded bool
	warned    bool  // warnOverBudget has logged it
	seq       int64 // the store's change sequence the index reflects
	dirty     bool  // changed since it was last saved to its file
	idx       *textindex.Index[memAttr]
	names     map[string]string // one copy of each agent, session, kind and status

	// rows are memories of the partition as they are at seq (see
	// rowCache); changed is the sequence of the last change applied to
	// the partition, or of its load.
	rows    rowCache
	changed int64

	// early is a read of the partition's file begun before a search took
	// p.mu to load it (see ReadEarly); loadFile takes it.
	earlyMu sync.Mutex
	early   *earlyRead
}

// memAttr is what a search's filter looks at in the index: everything of
// a memory that MemoryFilter narrows by, except metadata, text and
// sources, which the store checks.
type memAttr struct {
	user, agent, session string
	kind                 engram.Kind
	status               engram.Status
	created              time.Time
	validFrom            *time.Time
	validTo              *time.Time
	expires              bool // has a TTL: a store may count it expired before it says so
}

// NewTexts returns the text indexes of a store, or nil when limit is
// negative (the store's index serves). budget bounds their bytes
// together: zero means DefaultTextIndexBytes, negative no bound. rows
// bounds the bytes of the memories they cache: zero means
// DefaultRowCacheBytes, negative caches none. It logs to log (nil: the
// default logger).
func NewTexts(limit int, budget, rows int64, log *slog.Logger) *Texts {
	if limit < 0 {
		return nil
	}
	if limit == 0 {
		limit = DefaultTextIndexLimit
	}
	switch {
	case budget == 0:
		budget = DefaultTextIndexBytes
	case budget < 0:
		budget = 0
	}
	switch {
	case rows == 0:
		rows = DefaultRowCacheBytes
	case rows < 0:
		rows = 0
	}
	if log == nil {
		log = slog.Default()
	}
	return &Texts{limit: limit, budget: budget, rowBudget: rows, parts: map[partKey]*textPart{}, log: log}
}

// WaitWarming waits until the row caches t began to warm in the
// background are warm (see warm).
func (t *Texts) WaitWarming() {
	if t != nil {
		t.warming.Wait()
	}
}

// CachedRows returns how many memories the row cache of n's user holds,
// and the bytes all row caches hold together.
func (t *Texts) CachedRows(n engram.Namespace) (int, int64) {
	if t == nil {
		return 0, 0
	}
	t.mu.Lock()
	p := t.parts[partKey{n.Org, n.Project, n.User}]
	t.mu.Unlock()
	if p == nil {
		return 0, t.rowTotal.Load()
	}
	p.rows.mu.RLock()
	defer p.rows.mu.RUnlock()
	return len(p.rows.m), t.rowTotal.Load()
}

// Attach gives g the text index of its scope (see open); epoch is what
// Epoch returned before r's transaction began. It fails with the store's
// error.
func (t *Texts) Attach(ctx context.Context, r engram.Reader, g *retrieval.Gathering, epoch int64) error {
	text, err := t.open(ctx, r, g.Scope, epoch)
	g.Text = text
	return err
}

// Epoch returns the count of access flushes so far, which a search reads
// before its transaction begins: a memory it reads may be cached only if
// no flush changed access counts since (see rowCache).
func (t *Texts) Epoch() int64 {
	if t == nil {
		return 0
	}
	return t.touches.Load()
}

// open returns the index of the scope, brought up to date with what r,
// the search's read transaction, sees, or nil when a namespace of the
// scope is too large for memory and the store's index must serve. It
// fails with the store's error.
func (t *Texts) open(ctx context.Context, r engram.Reader, s engram.Scope, epoch int64) (retrieval.TextIndex, error) {
	if t == nil {
		return nil, nil
	}
	keys := []partKey{{s.Org, s.Project, s.User}}
	if s.IncludeShared && s.User != "" {
		keys = append(keys, partKey{s.Org, s.Project, ""})
	}
	v := &textView{scope: s, t: t, epoch: epoch}
	defer func() { t.evict(v.parts) }()
	now := t.clock.Add(1)
	for _, k := range keys {
		p, idx, seen, err := t.partition(ctx, r, k, epoch)
		if err != nil {
			return nil, err
		}
		p.used.Store(now)
		if idx == nil {
			return nil, nil
		}
		// A reload replaces p.idx and leaves this one as it was: the
		// search reads a consistent, if a moment older, index.
		v.parts = append(v.parts, p)
		v.idxs = append(v.idxs, idx)
		v.seen = append(v.seen, seen)
	}
	return v, nil
}

// partition returns the partition of one (tenant, user) and its index,
// loaded on first use and caught up with the change log since, and the
// change sequence r's transaction sees; the index is nil when the store's
// must serve. It is the index as it was when caught up: evict may drop it
// from the partition a moment later, and the search that has it goes on
// with it. A load caches the memories it reads if no access flush came
// after epoch.
func (t *Texts) partition(ctx context.Context, r engram.Reader, k partKey, epoch int64) (*textPart, *textindex.Index[memAttr], int64, error) {
	t.mu.Lock()
	p := t.parts[k]
	if p == nil {
		p = &textPart{}
		t.parts[k] = p
	}
	t.mu.Unlock()
	scope := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded && p.tooLarge {
		// Until a restart the store's index serves, unless it was dropped.
		if on, err := r.FullTextIndexed(ctx); err != nil || on {
			return p, nil, 0, err
		}
		p.loaded = false
	}
	if p.loaded {
		seen, err := t.catchUp(ctx, r, p, scope)
		if engram.ErrorCode(err) != engram.ECONFLICT {
			return p, p.idx, seen, err
		}
		p.loaded = false // the store forgot changes we missed: reload
	}
	err := t.load(ctx, r, p, k, epoch)
	return p, p.idx, p.seq, err
}

// load reads partition k's saved file (see loadFile) or else every memory
// of its scope, in any status (the statistics count them all, as the
// stores' indexes do), into a new index, which is then saved in the
// background. The caller holds p.mu.
func (t *Texts) load(ctx context.Context, r engram.Reader, p *textPart, k partKey, epoch int64) error {
	t.dropRows(p)
	p.unbounded = false
	if ok, err := t.loadFile(ctx, r, p, k); ok || err != nil {
		p.changed = p.seq
		if ok {
			t.warmSoon(k, p, p.idx)
		}
		return err
	}
	scope := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	idx := textindex.New[memAttr]()
	p.names = map[string]string{}
	var seq int64
	tooLarge := false
	err := func() error {
		var err error
		if _, seq, err = r.Changes(ctx, scope, -1); err != nil {
			return err
		}
		f := engram.MemoryFilter{Statuses: allStatuses, Limit: engram.MaxLimit}
		for {
			ms, next, err := r.ListMemories(ctx, scope, f)
			if err != nil {
				return err
			}
			for i := range ms {
				if ms[i].Namespace.User == scope.User {
					p.index(idx, &ms[i])
					t.cacheRow(p, &ms[i], epoch)
				}
			}
			if over, err := t.tooMany(ctx, r, p, idx.Len()); err != nil || over {
				tooLarge = over
				return err
			}
			if next == "" {
				return nil
			}
			f.Cursor = next
		}
	}()
	if err != nil {
		return err
	}
	if tooLarge {
		idx = nil
		t.dropRows(p)
	}
	p.idx, p.seq, p.loaded, p.tooLarge, p.dirty = idx, seq, true, tooLarge, !tooLarge
	p.changed = seq
	t.count(p)
	if p.dirty && t.files != nil {
		t.saveSoon(k)
	}
	return nil
}

// count brings p's bytes, and the total, up to date with its index. The
// caller holds p.mu.
func (t *Texts) count(p *textPart) {
	var n int64
	if p.idx != nil {
		n = p.idx.Bytes()
	}
	t.total.Add(n - p.bytes.Swap(n))
}

// evict drops the least recently searched indexes, other than those of
// in, until the total is back under nine tenths of the budget (so that
// it is not over again at the next search). A dropped index is loaded
// again from the store when next searched; a search holding it finishes
// with it first. A namespace found too large keeps its mark.
func (t *Texts) evict(in []*textPart) {
	if t.budget == 0 || t.total.Load() <= t.budget {
		return
	}
	t.mu.Lock()
	var loaded []*textPart
	for _, p := range t.parts {
		if p.bytes.Load() > 0 && !slices.Contains(in, p) {
			loaded = append(loaded, p)
		}
	}
	t.mu.Unlock()
	slices.SortFunc(loaded, func(a, b *textPart) int { return cmp.Compare(a.used.Load(), b.used.Load()) })
	for _, p := range loaded {
		if t.total.Load() <= t.budget*9/10 {
			return
		}
		p.mu.Lock()
		if !p.tooLarge {
			t.warnOverBudget(p)
			p.idx, p.names, p.loaded = nil, nil, false
			t.count(p)
			t.dropRows(p)
		}
		p.mu.Unlock()
	}
}

// warnOverBudget logs, once per partition, that p is being dropped while
// larger than the whole budget: it will be read from the store again at
// its next search, and again after every search of another user. The
// caller holds p.mu.
func (t *Texts) warnOverBudget(p *textPart) {
	if p.bytes.Load() <= t.budget || p.warned {
		return
	}
	p.warned = true
	t.log.Warn("engine: a text index larger than the text-index budget was dropped; it is read from the store again at its next search (raise serve --text-index-mb)",
		"index_mb", p.bytes.Load()>>20, "budget_mb", t.budget>>20, "memories", p.idx.Len())
}

var allStatuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}

// index adds m to idx, replacing its earlier version. The caller holds
// p.mu.
func (p *textPart) index(idx *textindex.Index[memAttr], m *engram.Memory) {
	idx.Add(m.ID, m.Value, m.Abstraction, m.Cues, attrOf(m, p.name))
}

// attrOf returns the attributes of m, its names passed through name.
func attrOf(m *engram.Memory, name func(string) string) memAttr {
	return memAttr{
		user: name(m.Namespace.User), agent: name(m.Namespace.Agent), session: name(m.Namespace.Session),
		kind: engram.Kind(name(string(m.Kind))), status: engram.Status(name(string(m.Status))),
		created: m.CreatedAt, validFrom: m.ValidFrom, validTo: m.ValidTo, expires: m.ExpiresAt != nil,
	}
}

// name returns the partition's copy of s, so that the many memories of one
// session or status share one string.
func (p *textPart) name(s string) string {
	if c, ok := p.names[s]; ok {
		return c
	}
	p.names[s] = s
	return s
}

// interner returns a function that gives one copy of each name, made
// from its bytes the first time, kept in names.
func interner(names map[string]string) func([]byte) string {
	return func(b []byte) string {
		if c, ok := names[string(b)]; ok {
			return c
		}
		s := string(b)
		names[s] = s
		return s
	}
}

// catchUp applies the store's changes since p.seq: changed memories are
// indexed again and dropped from the row cache, purged ones removed. A
// namespace that grew past the limit is reloaded, which marks it too
// large. It returns the change sequence r's transaction sees, which is
// below p.seq when another search caught p up further. The caller holds
// p.mu.
func (t *Texts) catchUp(ctx context.Context, r engram.Reader, p *textPart, scope engram.Scope) (int64, error) {
	var (
		ids []string
		seq int64
		ms  []engram.Memory
	)
	err := func() error {
		var err error
		if ids, seq, err = r.Changes(ctx, scope, p.seq); err != nil || len(ids) == 0 {
			return err
		}
		for chunk := range slices.Chunk(ids, 500) {
			got, err := r.GetMemories(ctx, scope, chunk)
			if err != nil {
				return err
			}
			ms = append(ms, got...)
		}
		return nil
	}()
	if err != nil || len(ids) == 0 {
		if err == nil {
			p.seq = max(p.seq, seq)
		}
		return seq, err
	}
	if p.tooLarge {
		p.seq = seq
		return seq, nil
	}
	for _, id := range ids {
		p.idx.Remove(id)
	}
	t.forgetRows(p, ids)
	for i := range ms {
		if ms[i].Namespace.User == scope.User {
			p.index(p.idx, &ms[i])
		}
	}
	p.seq, p.changed, p.dirty = seq, seq, true
	t.count(p)
	if over, err := t.tooMany(ctx, r, p, p.idx.Len()); err != nil {
		return seq, err
	} else if over {
		return seq, engram.Errorf(engram.ECONFLICT, "the text index of %s outgrew its limit", scope.Tenant())
	}
	return seq, nil
}

// tooMany reports whether p's index, of n memories, should give way to
// the store's own full-text index: n is over the limit and the store has
// an index (engram.FullTextReader). Once the store was found without
// one, p keeps its in-memory index whatever its size until it is loaded
// again.
// It fails with the store's error. The caller holds p.mu.
func (t *Texts) tooMany(ctx context.Context, r engram.Reader, p *textPart, n int) (bool, error) {
	if n <= t.limit || p.unbounded {
		return false, nil
	}
	on, err := r.FullTextIndexed(ctx)
	if err != nil || on {
		return on, err
	}
	p.unbounded = true
	return false, nil
}

// textView is the text index of one search's scope: the partitions of its
// user and, with IncludeShared, of the project's shared memories, whose
// statistics a search combines.
type textView struct {
	scope engram.Scope
	parts []*textPart
	idxs  []*textindex.Index[memAttr] // of parts, as they were at open
	seen  []int64                     // of parts, the change sequence the search's transaction sees
	t     *Texts
	epoch int64 // t.touches before the search's transaction began
}

// SearchText implements retrieval.TextIndex.
func (v *textView) SearchText(query string, f engram.MemoryFilter, limit int) []retrieval.TextScore {
	for _, p := range v.parts { // always in the same order: the user's, then the shared
		p.mu.RLock()
		defer p.mu.RUnlock()
	}
	hits := textindex.Search(v.idxs, query, limit, keeper(v.scope, &f))
	out := make([]retrieval.TextScore, len(hits))
	for i, h := range hits {
		out[i] = retrieval.TextScore{ID: h.ID, Score: h.Score}
	}
	return out
}

// Judge implements retrieval.TextIndex: m is tested as the index tests
// what it holds of m; a memory with a TTL is left to the store.
func (v *textView) Judge(m *engram.Memory, f engram.MemoryFilter) (keep, sure bool) {
	if m.ExpiresAt != nil {
		return false, false
	}
	k := newFilterKeeper(v.scope, &f)
	a := attrOf(m, func(s string) string { return s })
	return k.keep(m.ID, &a), true
}

// keeper returns the test of a memory's attributes against the scope's
// agent and session and the filter's kinds, statuses, ids and times, as
// the stores apply them. It keeps more rather than less: an active memory
// with a TTL may count as expired, and the store, which reads the hits
// with the whole filter, decides.
func keeper(s engram.Scope, f *engram.MemoryFilter) func(string, *memAttr) bool {
	k := newFilterKeeper(s, f)
	return k.keep
}

// filterKeeper is keeper's test.
type filterKeeper struct {
	s        engram.Scope
	f        *engram.MemoryFilter
	statuses []engram.Status
	ids      map[string]bool
}

func newFilterKeeper(s engram.Scope, f *engram.MemoryFilter) filterKeeper {
	k := filterKeeper{s: s, f: f, statuses: f.Statuses}
	if len(k.statuses) == 0 {
		k.statuses = activeOnly
	}
	if len(f.IDs) > 0 {
		k.ids = map[string]bool{}
		for _, id := range f.IDs {
			k.ids[id] = true
		}
	}
	return k
}

var activeOnly = []engram.Status{engram.StatusActive}

func (k *filterKeeper) keep(id string, a *memAttr) bool {
	s, f := &k.s, k.f
	switch {
	case k.ids != nil && !k.ids[id]:
		return false
	case !s.Contains(engram.Namespace{Org: s.Org, Project: s.Project, User: a.user, Agent: a.agent, Session: a.session}):
		return false
	case !slices.Contains(k.statuses, a.status) &&
		!(a.expires && a.status == engram.StatusActive && slices.Contains(k.statuses, engram.StatusExpired)):
		return false
	case len(f.Kinds) > 0 && !slices.Contains(f.Kinds, a.kind):
		return false
	case f.CreatedAfter != nil && a.created.Before(*f.CreatedAfter),
		f.CreatedBefore != nil && !a.created.Before(*f.CreatedBefore):
		return false
	}
	return validIn(a, f)
}

// validIn reports whether a's validity interval [from, to) holds f.ValidAt
// and overlaps [f.ValidAfter, f.ValidBefore).
func validIn(a *memAttr, f *engram.MemoryFilter) bool {
	if t := f.ValidAt; t != nil {
		if (a.validFrom != nil && a.validFrom.After(*t)) || (a.validTo != nil && !a.validTo.After(*t)) {
			return false
		}
	}
	if t := f.ValidAfter; t != nil && a.validTo != nil && !a.validTo.After(*t) {
		return false
	}
	if t := f.ValidBefore; t != nil && a.validFrom != nil && !a.validFrom.Before(*t) {
		return false
	}
	return true
}

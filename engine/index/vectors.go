package index

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vector"
)

// Vectors keeps one in-memory vector index per (tenant, user): derived
// data, loaded on first use and kept current by every write committed
// through a Batch, optionally saved to files (annsave.go). A user is the hard isolation boundary, so no search
// ever scans another user's vectors.
type Vectors struct {
	emb      engram.Embedder
	obs      EmbedObserver // told of every call to emb
	store    engram.Store
	newIndex func(dim int) vector.Index

	mu     sync.Mutex
	parts  map[partKey]*partition
	closed bool // no more background saves start

	// Saved indexes (see annsave.go); files is nil without the index directory.
	files  *annFiles
	log    *slog.Logger
	saveMu sync.Mutex // one save or file removal at a time
	stop   chan struct{}
	wg     sync.WaitGroup
}

type partKey struct{ org, project, user string }

type partition struct {
	mu     sync.RWMutex
	loaded bool
	seq    int64 // the store's change sequence the index reflects
	idx    vector.Index
	ns     map[string]engram.Namespace // memory id -> namespace, for agent/session narrowing
	dirty  bool                        // changed since it was last saved
	gone   bool                        // purged: never saved again
	// pending holds the memories that changed in the store without
	// vectors since the index loaded: most wait for an embed job (see
	// pending.go), the others (gone, not active, vault) are forgotten when
	// a search finds so.
	pending map[string]bool
}

// EmbedObserver is told of every call to the embedder (metrics, logs).
type EmbedObserver interface {
	Embed(texts int, d time.Duration, err error)
}

// NewVectors returns the vector indexes of store's memories as emb embeds
// them, each made by newIndex (nil: a vector.Auto), telling obs (nil:
// nobody) of every call to emb. It reads nothing yet: a partition loads
// when first searched. Files are kept only after SetUpFiles.
func NewVectors(emb engram.Embedder, store engram.Store, newIndex func(int) vector.Index, obs EmbedObserver) *Vectors {
	if newIndex == nil {
		newIndex = func(dim int) vector.Index { return vector.NewAuto(dim, vector.AutoConfig{}) }
	}
	if obs == nil {
		obs = nopObserver{}
	}
	return &Vectors{emb: emb, obs: obs, store: store, newIndex: newIndex, parts: map[partKey]*partition{}, log: slog.Default()}
}

// nopObserver tells nobody.
type nopObserver struct{}

func (nopObserver) Embed(int, time.Duration, error) {}

// Embedder returns the embedder whose vectors v indexes.
func (v *Vectors) Embedder() engram.Embedder { return v.emb }

// Covers reports whether the embedder declares the language tag (see
// engram.LanguageCoverer, an optional capability: uselite has it, and
// embedcache and embedbatch pass it on); one that lacks it (openai) or
// declares none covers every language.
func (v *Vectors) Covers(tag string) bool {
	lc, ok := v.emb.(engram.LanguageCoverer)
	if !ok {
		return true
	}
	langs := lc.Languages()
	return len(langs) == 0 || slices.Contains(langs, tag)
}

// item ids in an index: the memory id and one letter for the field.
func itemID(memID, field string) string { return memID + ":" + field[:1] }
func memOf(item string) string          { return item[:strings.IndexByte(item, ':')] }

// vecChange is what a committed write did to one memory's vectors.
type vecChange struct {
	ns     engram.Namespace
	id     string
	active bool
	vecs   []engram.FieldVector // when active
}

// Batch collects embeddings computed before a transaction and the
// changes made inside it, applied to the indexes after commit.
type Batch struct {
	v       *Vectors
	pre     map[string][]float32 // text -> vector
	changes []vecChange
	// Later, when set, leaves the embedding to an embed job: Stage only
	// lists the memories whose texts need vectors.
	Later *Later
}

// Batch returns a batch for one write, or nil when v is nil (no
// embedder): a nil batch stages nothing.
func (v *Vectors) Batch() *Batch {
	if v == nil {
		return nil
	}
	return &Batch{v: v, pre: map[string][]float32{}}
}

// Later lists, in order and once each, the memories a batch left for an
// embed job, and the updates the engine holds back for that job.
type Later struct {
	IDs  []string
	Ops  []engram.MemoryOp
	seen map[string]bool
}

// Add lists memory id for the job, once.
func (l *Later) Add(id string) {
	if l.seen[id] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[id] = true
	l.IDs = append(l.IDs, id)
}

// Listed reports whether memory id is listed for the job.
func (l *Later) Listed(id string) bool { return l.seen[id] }

// Reset forgets the embeddings and changes b holds, to be used again for
// another transaction.
func (b *Batch) Reset() { b.pre, b.changes = map[string][]float32{}, nil }

// FieldTexts returns the texts of m that are embedded, by field. An
// abstraction equal to the value adds nothing and is not embedded.
func FieldTexts(m *engram.Memory) [][2]string {
	if m.Kind == engram.KindVault {
		return nil // never embedded: a vector, and the embedding cache, would leak the text
	}
	out := [][2]string{{engram.FieldValue, m.Value}}
	if a := strings.TrimSpace(m.Abstraction); a != "" && a != strings.TrimSpace(m.Value) {
		out = append(out, [2]string{engram.FieldAbstraction, m.Abstraction})
	}
	return out
}

// Prepare embeds the texts of the memories in one batched call, before the
// transaction, so the store's writer is not held while the model runs.
func (b *Batch) Prepare(ctx context.Context, ms []engram.Memory) error {
	if b == nil || b.Later != nil {
		return nil
	}
	// One call per embedding partition (tenant and user), in the order
	// they first appear, so a cache keeps each user's texts apart.
	var order []engram.Namespace
	texts := map[engram.Namespace][]string{}
	for i := range ms {
		p := partitionOf(ms[i].Namespace)
		for _, ft := range FieldTexts(&ms[i]) {
			if _, ok := b.pre[ft[1]]; !ok {
				b.pre[ft[1]] = nil
				if texts[p] == nil {
					order = append(order, p)
				}
				texts[p] = append(texts[p], ft[1])
			}
		}
	}
	for _, p := range order {
		vs, err := b.v.Embed(engram.WithEmbedPartition(ctx, p), texts[p])
		if err != nil {
			return fmt.Errorf("embed memories: %w", err)
		}
		for i, t := range texts[p] {
			b.pre[t] = vs[i]
		}
	}
	return nil
}

// partitionOf returns the embedding partition of n: its tenant and user.
func partitionOf(n engram.Namespace) engram.Namespace {
	return engram.Namespace{Org: n.Org, Project: n.Project, User: n.User}
}

// Stage stores m's vectors inside tx (when active) and remembers the change
// for the index. Texts not prepared before the transaction are embedded now.
// A batch that leaves embedding for later only lists an active m for its
// embed job: its stored vectors, if any, stay until the job replaces them.
func (b *Batch) Stage(ctx context.Context, tx engram.Tx, m *engram.Memory) error {
	if b == nil {
		return nil
	}
	if m.Status != engram.StatusActive || m.Kind == engram.KindVault {
		b.changes = append(b.changes, vecChange{ns: m.Namespace, id: m.ID})
		return nil
	}
	fts := FieldTexts(m)
	if b.Later != nil {
		b.Later.Add(m.ID)
		return nil
	}
	var missing []string
	for _, ft := range fts {
		if b.pre[ft[1]] == nil {
			missing = append(missing, ft[1])
		}
	}
	if len(missing) > 0 {
		vs, err := b.v.Embed(engram.WithEmbedPartition(ctx, m.Namespace), missing)
		if err != nil {
			return fmt.Errorf("embed memory %s: %w", m.ID, err)
		}
		for i, t := range missing {
			b.pre[t] = vs[i]
		}
	}
	fvs := make([]engram.FieldVector, len(fts))
	for i, ft := range fts {
		fvs[i] = engram.FieldVector{Field: ft[0], Vec: b.pre[ft[1]]}
	}
	if err := tx.PutVectors(ctx, m.Namespace, m.ID, b.v.emb.Name(), fvs); err != nil {
		return err
	}
	b.changes = append(b.changes, vecChange{ns: m.Namespace, id: m.ID, active: true, vecs: fvs})
	return nil
}

// Purged remembers that a memory left the store.
func (b *Batch) Purged(n engram.Namespace, id string) {
	if b != nil {
		b.changes = append(b.changes, vecChange{ns: n, id: id})
	}
}

// Commit applies the staged changes to loaded indexes. Call it only after
// the transaction committed.
func (b *Batch) Commit() {
	if b == nil {
		return
	}
	for _, c := range b.changes {
		b.v.apply(c)
	}
}

func (v *Vectors) apply(c vecChange) {
	v.mu.Lock()
	p := v.parts[partKey{c.ns.Org, c.ns.Project, c.ns.User}]
	v.mu.Unlock()
	if p == nil {
		return // not loaded: a later load reads the committed state
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded {
		p.applyLocked(c)
	}
}

// applyLocked makes the index hold exactly c's vectors for its memory. The
// caller holds p.mu.
func (p *partition) applyLocked(c vecChange) {
	for _, f := range []string{engram.FieldValue, engram.FieldAbstraction} {
		p.idx.Delete(itemID(c.id, f))
	}
	delete(p.ns, c.id)
	delete(p.pending, c.id)
	p.dirty = true
	if !c.active {
		return
	}
	for _, fv := range c.vecs {
		if err := p.idx.Add(itemID(c.id, fv.Field), fv.Vec); err == nil {
			p.ns[c.id] = c.ns
		}
	}
}

// Forget drops the loaded index of the scope's tenant and user, and its
// saved file, so the next search reloads it from the store (after a purge
// of a whole scope).
func (v *Vectors) Forget(s engram.Scope) {
	if v == nil {
		return
	}
	k := partKey{s.Org, s.Project, s.User}
	v.mu.Lock()
	p := v.parts[k]
	delete(v.parts, k)
	v.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.gone = true
		p.mu.Unlock()
	}
	if err := v.DropFile(context.Background(), s.Namespace()); err != nil {
		v.log.Warn("engine: removing the saved vector index of a purged scope failed", "tenant", s.Tenant(), "err", err)
	}
}

// partition returns the index of one (tenant, user), loaded on first use
// (from its saved file when one is usable, see loadFile, else from the
// store's vectors) and brought up to date with every change committed
// since, by this engine or by another process writing to the same store.
// An index loaded from the store is saved once its graph is built. It
// reads through the store's FreshReader when it has one: a catch-up reads
// again whatever changes after the sequence it records, so its reads need
// no common snapshot, and on PostgreSQL a search saves two round trips.
func (v *Vectors) partition(ctx context.Context, k partKey) (*partition, error) {
	var p *partition
	err := engram.ReadFresh(ctx, v.store, func(r engram.Reader) error {
		var err error
		p, err = v.partitionIn(ctx, r, k)
		return err
	})
	return p, err
}

// partitionIn is partition, reading the store through r, a Reader that
// has read nothing yet. Its connection is taken before p.mu, so that no
// one holding p.mu waits for a connection (a pool whose connections are
// held by searches waiting for p.mu would never give one); what it reads
// is taken at its first read or later, under p.mu, so it holds every
// write already applied to the index in memory (Batch.commit applies
// a write once it has committed). Catching up through a transaction that
// had read before, such as a search's, could go back to an older state of
// a memory and put a deleted vector back.
func (v *Vectors) partitionIn(ctx context.Context, r engram.Reader, k partKey) (*partition, error) {
	v.mu.Lock()
	p := v.parts[k]
	if p == nil {
		p = &partition{}
		v.parts[k] = p
	}
	v.mu.Unlock()
	scope := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded {
		err := v.catchUp(ctx, r, p, scope)
		if engram.ErrorCode(err) != engram.ECONFLICT {
			return p, err
		}
		p.loaded = false // the store forgot changes we missed: reload
	}
	if ok, err := v.loadFile(ctx, r, k, p); ok || err != nil {
		if err == nil {
			err = seedPending(ctx, r, k, p)
		}
		return p, err
	}
	if err := v.load(ctx, r, k, p); err != nil {
		return nil, err
	}
	if err := seedPending(ctx, r, k, p); err != nil {
		return nil, err
	}
	if a, ok := p.idx.(*vector.Auto); ok && v.files != nil {
		p.dirty = true
		v.saveAfterBuild(k, p, a)
	}
	return p, nil
}

// holder is an index that can defer its own rebuilds while it is filled
// (vector.Auto).
type holder interface {
	Hold()
	Release()
}

// load fills p from the store's vectors of partition k, read through r.
// The caller holds p.mu.
func (v *Vectors) load(ctx context.Context, r engram.Reader, k partKey, p *partition) error {
	scope := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	idx := v.newIndex(v.emb.Dim())
	if h, ok := idx.(holder); ok {
		h.Hold() // one graph build from all the vectors, once read
		defer h.Release()
	}
	ns := map[string]engram.Namespace{}
	var seq int64
	err := func(r engram.Reader) error {
		var err error
		if _, seq, err = r.Changes(ctx, scope, -1); err != nil {
			return err
		}
		return r.ScanVectors(ctx, scope, v.emb.Name(), func(rec engram.VectorRecord) error {
			if rec.Namespace.User != k.user {
				return nil // shared records are in their own partition
			}
			if err := idx.Add(itemID(rec.MemoryID, rec.Field), rec.Vec); err != nil {
				return fmt.Errorf("load vector of memory %s: %w", rec.MemoryID, err)
			}
			ns[rec.MemoryID] = rec.Namespace
			return nil
		})
	}(r)
	if err != nil {
		return err
	}
	p.idx, p.ns, p.seq, p.loaded = idx, ns, seq, true
	return nil
}

// catchUp applies the store's changes since p.seq to p, read through r.
// The caller holds p.mu.
func (v *Vectors) catchUp(ctx context.Context, r engram.Reader, p *partition, scope engram.Scope) error {
	var (
		ids  []string
		seq  int64
		recs []engram.VectorRecord
	)
	err := func(r engram.Reader) error {
		var err error
		if ids, seq, err = r.Changes(ctx, scope, p.seq); err != nil || len(ids) == 0 {
			return err
		}
		recs, err = r.GetVectors(ctx, scope.Namespace(), v.emb.Name(), ids)
		return err
	}(r)
	if err != nil {
		return err
	}
	byID := map[string][]engram.FieldVector{}
	nsOf := map[string]engram.Namespace{}
	for _, rec := range recs {
		if rec.Namespace.User != scope.User {
			continue
		}
		byID[rec.MemoryID] = append(byID[rec.MemoryID], engram.FieldVector{Field: rec.Field, Vec: rec.Vec})
		nsOf[rec.MemoryID] = rec.Namespace
	}
	for _, id := range ids {
		fvs, active := byID[id]
		p.applyLocked(vecChange{ns: nsOf[id], id: id, active: active, vecs: fvs})
		p.notePending(id, !active)
	}
	p.seq = seq
	return nil
}

// Hit is one memory found in a vector index, with its best cosine.
type Hit struct {
	ID    string
	Score float32
}

// Parts is the vector partitions one search's scope reads, each
// with the test of the namespaces it keeps (nil: all).
type Parts []scopePart

type scopePart struct {
	p    *partition
	keep func(engram.Namespace) bool
}

// Open returns the partitions of scope s, each caught up in a read
// transaction of its own (see partition). It fails with the store's error.
func (v *Vectors) Open(ctx context.Context, s engram.Scope) (Parts, error) {
	// A user's own partition holds only that user's memories: a scope that
	// does not narrow to an agent or a session keeps all of them, and the
	// index needs no filter (the store checks the scope of every
	// candidate it loads anyway).
	own := s.Contains
	if s.AllAgents() && s.Session == "" {
		own = nil
	}
	keys := []partKey{{s.Org, s.Project, s.User}}
	keeps := []func(engram.Namespace) bool{own}
	if s.IncludeShared && s.User != "" {
		keys = append(keys, partKey{s.Org, s.Project, ""})
		keeps = append(keeps, s.Contains)
	}
	var out Parts
	for i, k := range keys {
		p, err := v.partition(ctx, k)
		if err != nil {
			return nil, err
		}
		out = append(out, scopePart{p, keeps[i]})
	}
	return out, nil
}

// Search returns the k memories of the partitions nearest any of the
// queries qs, by their best field, best first. It reads no store, so it
// may run while the search holds its read transaction.
func (ps Parts) Search(qs [][]float32, k int) []Hit {
	best := map[string]float32{}
	for _, pt := range ps {
		p := pt.p
		var keep func(string) bool
		if pt.keep != nil {
			keep = func(item string) bool {
				n, ok := p.ns[memOf(item)]
				return ok && pt.keep(n)
			}
		}
		p.mu.RLock()
		for _, q := range qs {
			// Two fields per memory: ask for twice as many items.
			for _, r := range p.idx.Search(q, 2*k, keep) {
				id := memOf(r.ID)
				if sc, ok := best[id]; !ok || r.Score > sc {
					best[id] = r.Score
				}
			}
		}
		p.mu.RUnlock()
	}
	return rankHits(best, k)
}

// rankHits returns the best k of the memories' scores, best first, equal
// scores by id.
func rankHits(best map[string]float32, k int) []Hit {
	out := make([]Hit, 0, len(best))
	for id, sc := range best {
		out = append(out, Hit{ID: id, Score: sc})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > k {
		out = out[:k]
	}
	return slices.Clip(out)
}

// Done applies the staged changes when the transaction committed (err is
// nil) and returns err unchanged.
func (b *Batch) Done(err error) error {
	if err == nil {
		b.Commit()
	}
	return err
}

// Embed embeds texts with the embedder and tells the observer of the call.
func (v *Vectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	vs, err := v.emb.Embed(ctx, texts)
	v.obs.Embed(len(texts), time.Since(start), err)
	return vs, err
}

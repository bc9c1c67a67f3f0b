package engine

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine/index"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/vault"
	"github.com/engramhq/engram/vector"
)

// Options configure an Engine. Zero values give the defaults.
type Options struct {
	// Former turns episodes into memory operations; default DefaultFormer().
	Former engram.Former
	// Logger receives operational logs; default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now. Tests set it.
	Now func() time.Time
	// AccessFlush is how often recorded reads are written back as
	// access_count/last_accessed; default one second.
	AccessFlush time.Duration
	// Embedder, when set, embeds every memory's abstraction and value on
	// write and adds the dense channel to search. The store records its
	// name and dimension; a store made with another embedder is refused.
	// An embedder that declares its languages (engram.LanguageCoverer) has
	// a warning logged, once per tenant and user, when most of the recent
	// memories written there are in other languages.
	Embedder engram.Embedder
	// Retrieval weighs the parts of the search pipeline; the zero value
	// means retrieval.DefaultConfig().
	Retrieval *retrieval.Config
	// TextIndexLimit is how many memories one (tenant, user) may hold for
	// its full-text search to use the in-memory index (see package
	// textindex), whose statistics are that namespace's own; above it the
	// store's full-text index serves. Zero means DefaultTextIndexLimit; a
	// negative value always uses the store's index. A store without a
	// change log (engram.ChangeLog) always uses its own index.
	TextIndexLimit int
	// TextIndexBytes bounds the heap the in-memory text indexes of all
	// namespaces take together, as they estimate it: past it, those
	// searched least recently are dropped and loaded again from the store
	// when next searched. Zero means DefaultTextIndexBytes; a negative
	// value sets no bound.
	TextIndexBytes int64
	// RowCacheBytes bounds the memories the in-memory text indexes keep
	// for searches, all namespaces together, so that a search reads from
	// the store only the candidates they lack (see the row cache in
	// package index). Zero means DefaultRowCacheBytes; a negative value
	// keeps none.
	RowCacheBytes int64
	// Channels are retrieval channels run after the built-in ones (dense,
	// bm25, temporal), in order. A channel the retrieval configuration
	// does not weigh gets weight 1.
	Channels []retrieval.Channel
	// NewIndex makes the in-memory vector index of one (tenant, user);
	// default vector.NewAuto (exact below a size threshold, HNSW above).
	NewIndex func(dim int) vector.Index
	// Vault, when set, encrypts memories of kind vault at rest and lets
	// reads that carry engram.WithVault see them (see package vault).
	// Without it, adding a vault memory is EUNAVAILABLE. New checks that
	// its master key opens every data key the store holds.
	Vault *vault.Vault
	// Sensitive is the server's default treatment of the secrets and
	// personal data found in what is written (see engram.Treatment);
	// groups it leaves empty take engram.DefaultSensitivePolicy's. A
	// tenant's administrator may set its own (SetSensitivePolicy). Seal
	// without a Vault is done as redact, logged and said in the answer.
	Sensitive engram.SensitivePolicy
	// DetectOff (SensitiveOff in flags) turns the scan of writes for secrets and personal data
	// off: every text is stored as sent, whatever Sensitive and the
	// tenants' own policies say, and no answer or audit entry reports a
	// finding. ScanSensitive (engram scan) still finds what is stored. It is for deployments that scrub what they send upstream,
	// and for measuring what detection costs (engram serve and engram
	// eval --sensitive off).
	DetectOff bool
	// IndexDir keeps each (tenant, user)'s in-memory full-text index
	// and, with an Embedder, its approximate vector index in files under
	// IndexDir/<store id>/, so
	// that a restart loads it and catches it up from the store's change
	// log instead of building it again (see SaveIndexes). A file is
	// written after a graph is built, every IndexSaveEvery while it
	// changes, and on Close; a hard delete or purge removes it. A
	// directory that cannot be written is logged and the indexes are
	// built at each start, as without it.
	IndexDir string
	// IndexSaveEvery is how often changed indexes are saved; default
	// DefaultIndexSaveEvery.
	IndexSaveEvery time.Duration
	// LLM, when set, is the chat model an agentic search asks to choose
	// its steps (see searchAgentic); without it rules choose.
	LLM Chat
	// Agent weighs the steps of agentic searches; nil means
	// DefaultAgentConfig().
	Agent *AgentConfig
	// Expanders are followed by an agentic search's EXPAND step after the
	// built-in conversation neighbours and shared cues (a graph of
	// entities and relations plugs in here).
	Expanders []retrieval.Expander
	// CommunityRefresh, when positive, refreshes the communities of every
	// user whose entity graph changed this often in the background (see
	// StartCommunityRefresher) until Close.
	CommunityRefresh time.Duration
	// CloseStore makes Close close the store too, for an engine that owns
	// the store it was given (see package storeopen).
	CloseStore bool

	// Workers is how many goroutines run background jobs (asynchronous
	// formation) until Close; 0 runs none, and queued jobs wait in the
	// store for an engine that does (or for RunJobs). Workers need a store
	// with a job queue (engram.JobQueue); without one none start.
	Workers int
	// JobLease is how long a worker holds a job before another may take it
	// over, and the most one run of a job may take; default one minute.
	JobLease time.Duration
	// JobBackoff is the wait before a failed job's first retry, doubled for
	// each later one up to 64 times; default two seconds.
	JobBackoff time.Duration
	// JobAttempts is how often a job is tried before it is marked failed;
	// default 5. A run the former could not make because its model is held
	// off (its error has a RetryIn() time.Duration method, as
	// llmformer.HeldOffError does) is not counted: the job is put off,
	// retrying, for that long.
	JobAttempts int
	// JobsPerTenant is the most jobs of one tenant (org/project) this
	// engine's workers run at once, so that one tenant with slow
	// formations leaves workers to the others; default Workers-1 (no cap
	// with one worker). Jobs of one namespace run one at a time whatever
	// it is.
	JobsPerTenant int
	// JobPoll is how often an idle worker looks for jobs other engines
	// enqueued; default half a second.
	JobPoll time.Duration
	// Provisional, when set, forms the episodes of an asynchronous add at
	// once, within the batch alone (no stored memory is read or changed),
	// while their job waits for Former: the add returns those memories,
	// marked engram.MetaProvisional, and search finds them meanwhile. The
	// job retires them (a soft delete) when it applies Former's memories
	// of the same episodes; a job that fails for good leaves them. engram
	// serve sets the rules former when it forms with an LLM.
	Provisional engram.Former
	// EmbedInline makes AddEpisodes embed the memories it stores before it
	// answers. Without it, an engine with an Embedder, Workers and a store
	// with a job queue answers once the episodes and memories are stored
	// (full-text search finds them at once) and embeds them in a
	// background embed job (engram.JobEmbed, returned as the result's
	// EmbedJob); the dense channel finds them once it is done. Engines
	// without workers always embed inline.
	EmbedInline bool
	// AsyncByDefault makes AddEpisodes asynchronous (as if the request set
	// async: true) unless the request says otherwise, when the store keeps
	// a job queue. An engine whose former is slow (an LLM) sets it.
	AsyncByDefault bool
	// ResourceQuota is the most bytes of resources (engram.ResourceService)
	// one tenant may store; an upload that would pass it fails with
	// ETOOLARGE and keeps nothing. 0 means no quota.
	ResourceQuota int64
	// Describer makes captions and transcripts of media that episodes
	// bring without one, in the background job that forms them (see
	// engram.Media); nil: such media are stored and not formed.
	Describer engram.MediaDescriber
	// Observer is told of memory operations, search stages and channels,
	// background jobs and embedder calls, for metrics and operation logs;
	// nil observes nothing.
	Observer Observer
}

// Engine implements engram.Service over an engram.Store. It is an
// assembly of capability services (see services.go), each owning one
// capability over the state they share (core); their methods are the
// Engine's.
type Engine struct {
	*core
	*memories
	*ingest
	*searcher
	*graphs
	*media
	*admin
}

// core is the state the services share: the store, clock and log, the
// in-memory text and vector indexes, the recorded reads, the vault and the
// configuration of formation and search. It answers for the engine's
// lifecycle (Ready, FlushAccess, Close).
type core struct {
	store  engram.Store
	former engram.Former
	log    *slog.Logger
	now    func() time.Time
	closer func() error

	vec            *index.Vectors // nil without an embedder
	coverage       *coverage      // nil unless the embedder declares its languages
	vault          *vault.Vault   // nil: vault memories cannot be written or read
	redact         *redactor      // treats secrets and personal data at the write entry
	retrieval      retrieval.Config
	chat           Chat        // nil: agentic searches follow rules
	agentCfg       AgentConfig // weighs agentic searches
	extraExpanders []retrieval.Expander
	channels       []retrieval.Channel // in the order they gather
	text           *index.Texts        // nil when the store's full-text index serves
	access         *accessRecorder
	jobs           *jobRunner
	embedLater     bool // adds of episodes leave embedding to embed jobs
	once           sync.Once

	resourceQuota int64 // 0: none
	noGraph       bool  // keep no entity graph; set by tests only (export_test.go)
	describer     engram.MediaDescriber
	provisional   engram.Former // nil: asynchronous adds form nothing at once
	obs           Observer      // never nil; nopObserver without Options.Observer
	observed      bool          // Options.Observer was set

	sweepMu sync.Mutex
	sweeper *sweeper // nil until StartSweeper
	// refresher is nil until StartCommunityRefresher.
	refresher *sweeper
}

var _ engram.Service = (*Engine)(nil)

// New returns an Engine over store. It fails with EMISMATCH if the store's
// vectors were made by an embedder other than opts.Embedder, with EINVALID
// naming the missing capability if opts.Embedder is set and the store
// cannot keep vectors (its transactions lack engram.VectorReader,
// engram.ChangeLog, engram.MetaReader or engram.Dumper), and with the
// store's error if it cannot be read. With opts.Vault it fails when the
// master key does not open the data keys the store holds (another key).
// With opts.IndexDir it fails when the store's id cannot be read or
// recorded (see MetaIndexStore). Closing the Engine closes the store
// only when opts.CloseStore is set; New never closes it.
func New(ctx context.Context, store engram.Store, opts Options) (*Engine, error) {
	if err := checkEmbedder(ctx, store, opts.Embedder); err != nil {
		return nil, err
	}
	if err := opts.Sensitive.Validate(); err != nil {
		return nil, err
	}
	if opts.Vault != nil {
		if err := opts.Vault.Check(ctx, store); err != nil {
			return nil, err
		}
	}
	e := assemble(&core{store: store, former: opts.Former, log: opts.Logger, now: opts.Now, vault: opts.Vault, resourceQuota: opts.ResourceQuota,
		describer: opts.Describer, provisional: opts.Provisional})
	if opts.CloseStore {
		e.closer = store.Close
	}
	e.obs, e.observed = opts.Observer, opts.Observer != nil
	if e.obs == nil {
		e.obs = nopObserver{}
	}
	if opts.Embedder != nil {
		e.vec = index.NewVectors(opts.Embedder, store, opts.NewIndex, e.obs)
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.redact = newRedactor(opts.Sensitive, store, opts.Vault != nil, opts.DetectOff, e.log)
	if e.vec != nil && opts.IndexDir != "" {
		if err := e.vec.SetUpFiles(ctx, opts.IndexDir, opts.IndexSaveEvery, e.log); err != nil {
			return nil, err
		}
	}
	e.text = index.NewTexts(opts.TextIndexLimit, opts.TextIndexBytes, opts.RowCacheBytes, e.log)
	if e.text == nil {
		e.warnNoTextIndex(ctx)
	}
	if opts.IndexDir != "" {
		if err := e.text.SetUpFiles(ctx, store, opts.IndexDir, opts.IndexSaveEvery, e.log); err != nil {
			e.vec.Close()
			return nil, err
		}
	}
	if e.former == nil {
		e.former = DefaultFormer()
	}
	e.retrieval = retrieval.DefaultConfig()
	if opts.Retrieval != nil {
		e.retrieval = *opts.Retrieval
	}
	e.register(opts.Channels)
	e.chat, e.agentCfg, e.extraExpanders = opts.LLM, DefaultAgentConfig(), opts.Expanders
	if opts.Agent != nil {
		e.agentCfg = *opts.Agent
	}
	e.coverage = newCoverage(e.vec, e.log)
	if e.now == nil {
		e.now = time.Now
	}
	flush := opts.AccessFlush
	if flush <= 0 {
		flush = time.Second
	}
	e.access = newAccessRecorder(store, flush, e.log, e.text.Touched)
	e.setUpJobs(opts)
	e.StartCommunityRefresher(opts.CommunityRefresh)
	return e, nil
}

// warnNoTextIndex logs a warning when the store has no full-text index of
// its own (engram fulltext off) for an engine that searches text only
// with it (a negative TextIndexLimit): every search's full-text channel
// would fail. A store that cannot be read is left for the first request
// to report.
func (e *core) warnNoTextIndex(ctx context.Context) {
	on := true
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		on, err = r.FullTextIndexed(ctx)
		return err
	})
	if err == nil && !on {
		e.log.Warn("engine: full-text search uses only the store's index (text index limit below zero), but the store has none; searches will fail until `engram fulltext on` builds it or the limit is raised")
	}
}

// setUpJobs makes the engine's job runner and starts the workers opts
// asks for; an engine with workers and an embedder leaves embedding to
// embed jobs unless opts.EmbedInline.
func (e *Engine) setUpJobs(opts Options) {
	e.jobs = newJobRunner(opts)
	if opts.Workers > 0 {
		e.embedLater = e.vec != nil && !opts.EmbedInline
		e.startWorkers(opts.Workers)
	}
}

// register sets up the retrieval channels: dense first (the full-text
// query leaves out the names of the speakers it found), then full text,
// time and identities (which finds nothing until a person is linked), then
// extra. It gives an extra channel that the configuration does
// not weigh weight 1.
func (e *core) register(extra []retrieval.Channel) {
	if e.vec != nil {
		e.channels = append(e.channels, dense{e.vec})
	}
	e.channels = append(e.channels, retrieval.BM25{}, retrieval.Temporal{}, retrieval.Identity{})
	e.retrieval.Weights = maps.Clone(e.retrieval.Weights)
	if e.retrieval.Weights == nil {
		e.retrieval.Weights = map[string]float64{}
	}
	for _, c := range extra {
		if _, ok := e.retrieval.Weights[c.Name()]; !ok {
			e.retrieval.Weights[c.Name()] = 1
		}
		e.channels = append(e.channels, c)
	}
}

// Embedder returns the engine's embedder, or nil if it has none.
func (e *core) Embedder() engram.Embedder {
	if e.vec == nil {
		return nil
	}
	return e.vec.Embedder()
}

// Store returns the store the engine writes to.
func (e *core) Store() engram.Store { return e.store }

// Ready reports whether the engine can serve: nil, or an EUNAVAILABLE error.
func (e *core) Ready(ctx context.Context) error { return e.store.Ready(ctx) }

// FlushAccess writes recorded reads to the store now: when it returns,
// every read recorded before the call is stored (a background flush under
// way is waited for) and the caches holding those memories are dropped.
// It fails with the store's error; the reads of a failed flush are lost,
// as only counters are.
func (e *core) FlushAccess(ctx context.Context) error { return e.access.flush(ctx) }

// Close stops the sweeper (see StartSweeper), flushes recorded reads and closes the store if Options.CloseStore
// was set, returning the store's error.
func (e *Engine) Close() error {
	var err error
	e.once.Do(func() {
		e.stopWorkers()
		e.stopTicking(&e.sweeper)
		e.stopTicking(&e.refresher)
		if verr := e.vec.Close(); verr != nil {
			e.log.Warn("engine: saving the vector indexes on close failed", "err", verr)
		}
		if terr := e.text.Close(); terr != nil {
			e.log.Warn("engine: saving the text indexes on close failed", "err", terr)
		}
		e.access.stop()
		if e.closer != nil {
			err = e.closer()
		}
	})
	return err
}

// clock returns the current time in the form stores keep: UTC, microseconds.
func (e *core) clock() time.Time { return norm(e.now()) }

func norm(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func normPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	n := norm(*t)
	return &n
}

// prefixed returns err with prefix put before its message, keeping its code.
func prefixed(prefix string, err error) error {
	if err == nil {
		return nil
	}
	return &engram.Error{Code: engram.ErrorCode(err), Message: prefix + ": " + engram.ErrorMessage(err)}
}

// readScope validates a scope for reading.
func readScope(s engram.Scope) (engram.Scope, error) {
	return s, s.Validate()
}

// writeScope validates a scope for a targeted write; IncludeShared never
// widens a write.
func writeScope(s engram.Scope) (engram.Scope, error) {
	s.IncludeShared = false
	return s, s.Validate()
}

// readTarget validates a scope and the id of the what (memory, episode…)
// a read targets; EINVALID names the one at fault.
func readTarget(s engram.Scope, what, id string) (engram.Scope, error) {
	if err := s.Validate(); err != nil {
		return s, err
	}
	return s, engram.CheckID(what, id)
}

// writeTarget is readTarget for a targeted write; IncludeShared never
// widens a write.
func writeTarget(s engram.Scope, what, id string) (engram.Scope, error) {
	s.IncludeShared = false
	return readTarget(s, what, id)
}

// accessRecorder batches access-count updates so reads never wait on a
// write transaction: reads count in memory, per tenant, and a flush writes
// the counts in one transaction.
type accessRecorder struct {
	store engram.Store
	log   *slog.Logger
	// flushed, when set, is told each tenant's touched ids after a flush
	// committed.
	flushed func(tenant engram.Namespace, ids []string)

	mu      sync.Mutex
	pending map[engram.Namespace]map[string]access // tenant -> id -> accesses since the last flush

	// flushing is held by a flush from taking the pending reads until the
	// caches have been told: a flush called while the ticker's is writing
	// waits for it, so that when it returns every read recorded before the
	// call is in the store.
	flushing sync.Mutex

	stopc chan struct{}
	done  chan struct{}
}

// access is what a flush writes for one memory: how many reads, and when
// the last was.
type access struct {
	n  int
	at time.Time
}

// maxAccessesPerFlush bounds the accesses one flush adds to one memory, so
// a memory read in a tight loop costs a bounded write.
const maxAccessesPerFlush = 64

func newAccessRecorder(store engram.Store, every time.Duration, log *slog.Logger, flushed func(engram.Namespace, []string)) *accessRecorder {
	a := &accessRecorder{store: store, log: log, flushed: flushed, pending: map[engram.Namespace]map[string]access{},
		stopc: make(chan struct{}), done: make(chan struct{})}
	go a.loop(every)
	return a
}

// record counts one access at time at of each of ids, memories of n's
// tenant and user, unless ctx was made by engram.WithoutAccess.
func (a *accessRecorder) record(ctx context.Context, n engram.Namespace, at time.Time, ids ...string) {
	if len(ids) == 0 || !engram.AccessCounted(ctx) {
		return
	}
	// Memory ids are unique per user, so accesses are kept per user.
	t := engram.Namespace{Org: n.Org, Project: n.Project, User: n.User}
	a.mu.Lock()
	m := a.pending[t]
	if m == nil {
		m = map[string]access{}
		a.pending[t] = m
	}
	for _, id := range ids {
		c := m[id]
		m[id] = access{n: min(c.n+1, maxAccessesPerFlush), at: at}
	}
	a.mu.Unlock()
}

// recordHits records an access to each hit's memory under its own user: a
// scope that includes shared records finds the project's memories too.
func (a *accessRecorder) recordHits(ctx context.Context, at time.Time, hits []engram.Hit) {
	byUser := map[engram.Namespace][]string{}
	for i := range hits {
		n := hits[i].Memory.Namespace
		byUser[n] = append(byUser[n], hits[i].Memory.ID)
	}
	for n, ids := range byUser {
		a.record(ctx, n, at, ids...)
	}
}

func (a *accessRecorder) loop(every time.Duration) {
	defer close(a.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := a.flush(context.Background()); err != nil {
				a.log.Warn("record memory access", "err", err)
			}
		case <-a.stopc:
			if err := a.flush(context.Background()); err != nil {
				a.log.Warn("record memory access", "err", err)
			}
			return
		}
	}
}

func (a *accessRecorder) flush(ctx context.Context) error {
	a.flushing.Lock()
	defer a.flushing.Unlock()
	a.mu.Lock()
	pending := a.pending
	a.pending = map[engram.Namespace]map[string]access{}
	a.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	err := a.store.Update(ctx, func(tx engram.Tx) error {
		for tenant, ids := range pending {
			// One Touch per user: an id read n times is listed n times,
			// and every id takes the time of the user's latest read in
			// this flush, so last_accessed is exact to the flush interval.
			// A statement per distinct time cost one UPDATE per search.
			var list []string
			var at time.Time
			for id, c := range ids {
				for range c.n {
					list = append(list, id)
				}
				if c.at.After(at) {
					at = c.at
				}
			}
			if err := tx.Touch(ctx, tenant, list, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || a.flushed == nil {
		return err
	}
	for tenant, ids := range pending {
		a.flushed(tenant, slices.Collect(maps.Keys(ids)))
	}
	return nil
}

func (a *accessRecorder) stop() {
	close(a.stopc)
	<-a.done
}

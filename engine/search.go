package engine

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine/index"
	"github.com/engramhq/engram/retrieval"
)

// DefaultK is the number of hits a search returns when K is zero.
const DefaultK = 10

// Retrieval channels a SearchRequest may name.
const (
	ChannelBM25     = retrieval.ChannelBM25
	ChannelDense    = retrieval.ChannelDense
	ChannelTemporal = retrieval.ChannelTemporal
)

// search is one search request on its way through the pipeline.
type search struct {
	req      engram.SearchRequest
	scope    engram.Scope
	k        int
	now      time.Time
	cfg      retrieval.Config
	channels []retrieval.Channel
	query    *retrieval.Query
	cands    []*retrieval.Candidate
	profile  *engram.Memory // put first in an assembled context
}

// Search implements engram.Service as a pipeline of named steps: the
// request is checked, the query analysed (names, time expressions, whom it
// asks about, its language), the registered channels gather candidates
// within the scope and filter (full text, dense, temporal and any channel
// added with Options.Channels), their rankings are fused and reranked,
// the first places spread over conversations for a question that gathers,
// and the hits cut to k or assembled within the token budget (see package
// retrieval). A search that names its channels gets their plain
// ranking instead: the query as typed, no reranking (see
// retrieval.Config.Plain). Every hit counts as an access. Vault memories
// are never among the hits; a request with Vault set searches the vault
// instead (see searchVault).
func (e *searcher) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	if req.Vault {
		return e.searchVault(ctx, req)
	}
	var err error
	if req.Filter, err = hideVault(req.Filter); err != nil {
		return nil, err
	}
	s, err := e.plan(req)
	if err != nil {
		return nil, err
	}
	if req.Mode == engram.ModeAgentic {
		defer e.stageDone(StageAgentic, time.Now())
		return e.searchAgentic(ctx, s)
	}
	if err := e.rank(ctx, s); err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := s.result()
	if err != nil {
		return nil, err
	}
	e.stageDone(StageAssemble, start)
	e.recordHits(ctx, s, res)
	return res, nil
}

// rank runs one pass of the pipeline for a planned search: the query
// analysed, the channels' candidates gathered, fused, reranked and spread
// into s.cands, best first.
func (e *searcher) rank(ctx context.Context, s *search) error {
	start := time.Now()
	s.query = retrieval.Analyze(s.req.Query, s.now)
	e.weighLanguage(s)
	e.stageDone(StageAnalyze, start)
	start = time.Now()
	if err := e.gather(ctx, s); err != nil {
		return err
	}
	e.stageDone(StageGather, start)
	start = time.Now()
	retrieval.Fuse(s.cands, s.cfg)
	e.stageDone(StageFuse, start)
	start = time.Now()
	retrieval.Rerank(s.query, s.cands, s.cfg, s.now)
	retrieval.Spread(s.query, s.cands, s.cfg.SpreadPool, s.cfg.SpreadDepth, s.cfg.Spread)
	retrieval.Current(s.query, s.cands, s.cfg)
	e.stageDone(StageRerank, start)
	return nil
}

// recordHits counts every hit of a search's result as an access, unless
// ctx was made by engram.WithoutAccess.
func (e *searcher) recordHits(ctx context.Context, s *search, res *engram.SearchResult) {
	e.access.recordHits(ctx, e.clock(), res.Hits)
}

// plan checks a request and settles what the search will do: its scope,
// k, reference time, configuration and channels. It fails with EINVALID
// naming the field at fault.
func (e *searcher) plan(req engram.SearchRequest) (*search, error) {
	scope, err := readScope(req.Scope)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query is required")
	}
	if err := engram.CheckText("query", req.Query, engram.MaxContentBytes); err != nil {
		return nil, err
	}
	k, err := searchK(req)
	if err != nil {
		return nil, err
	}
	if err := checkMode(req); err != nil {
		return nil, err
	}
	if err := req.Filter.Validate(); err != nil {
		return nil, err
	}
	req.Filter = asOf(req.Filter)
	s := &search{req: req, scope: scope, k: k, now: e.clock(), cfg: e.retrieval}
	// TTLs are judged at the clock, not at the query's reference time.
	s.req.Filter.Now = s.now
	if req.Now != nil {
		s.now = norm(*req.Now)
	}
	if len(req.Channels) > 0 {
		s.cfg = s.cfg.Plain()
	}
	s.cfg.Clock = s.req.Filter.Now
	s.cfg.AsOf = s.req.Filter.ValidAt
	if req.Decay != nil && !*req.Decay {
		s.cfg.Recency, s.cfg.Access = 0, 0
	}
	s.cfg.Weights = maps.Clone(s.cfg.Weights)
	if s.channels, err = e.pick(req.Channels, s.cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// searchK returns the number of hits a request asks for, checked.
func searchK(req engram.SearchRequest) (int, error) {
	if req.Budget < 0 || req.Budget > engram.MaxBudget {
		return 0, engram.Errorf(engram.EINVALID, "budget %d is outside 0..%d tokens", req.Budget, engram.MaxBudget)
	}
	switch k := req.K; {
	case k < 0:
		return 0, engram.Errorf(engram.EINVALID, "k %d is negative", k)
	case k == 0 && req.Budget > 0:
		return engram.MaxK, nil
	case k == 0:
		return DefaultK, nil
	case k > engram.MaxK:
		return 0, engram.Errorf(engram.EINVALID, "k %d is above the maximum of %d", k, engram.MaxK)
	default:
		return k, nil
	}
}

// pick returns the channels a search runs: those named, in registration
// order, or else every registered channel the configuration weighs.
func (e *searcher) pick(names []string, cfg retrieval.Config) ([]retrieval.Channel, error) {
	if len(names) == 0 {
		return slices.DeleteFunc(slices.Clone(e.channels), func(c retrieval.Channel) bool { return cfg.Weights[c.Name()] == 0 }), nil
	}
	for _, n := range names {
		if !slices.ContainsFunc(e.channels, func(c retrieval.Channel) bool { return c.Name() == n }) {
			if n == ChannelDense {
				return nil, engram.Errorf(engram.EINVALID, "channel %q needs an embedder, and this engine has none configured", n)
			}
			return nil, engram.Errorf(engram.EINVALID, "channel %q is not one of %s", n, strings.Join(e.channelNames(), ", "))
		}
	}
	return slices.DeleteFunc(slices.Clone(e.channels), func(c retrieval.Channel) bool { return !slices.Contains(names, c.Name()) }), nil
}

func (e *searcher) channelNames() []string {
	out := make([]string, len(e.channels))
	for i, c := range e.channels {
		out[i] = c.Name()
	}
	return out
}

// gather runs the search's channels in stages (see retrieval.Channel):
// their preparations first, then, in one read transaction, the in-memory
// text index of the scope brought up to date with it, their prefetches
// (which run beside the rest, as the dense channel's index search does)
// and their reads of the store, each channel's finds joining the
// candidates before the next one gathers.
func (e *searcher) gather(ctx context.Context, s *search) error {
	pool := max(s.cfg.Pool, s.k)
	g := retrieval.NewGathering(nil, s.scope, s.req.Filter, s.query, &s.cfg, pool)
	e.text.ReadEarly(s.scope) // while the vector index loads, if it must
	steps := make([]retrieval.Gatherer, len(s.channels))
	for i, c := range s.channels {
		var err error
		if steps[i], err = c.Prepare(ctx, g); err != nil {
			return err
		}
	}
	epoch := e.text.Epoch()
	return e.store.View(ctx, func(r engram.Reader) error {
		g.SetReader(r)
		if err := e.text.Attach(ctx, r, g, epoch); err != nil {
			return err
		}
		for _, st := range steps {
			st.Prefetch(g)
		}
		for i, st := range steps {
			start := time.Now()
			finds, err := st.Gather(ctx, g)
			if err != nil {
				return err
			}
			g.Add(s.channels[i].Name(), finds)
			if e.observed {
				e.obs.SearchChannel(s.channels[i].Name(), time.Since(start))
			}
		}
		s.cands = g.Candidates()
		if s.req.Filter.ValidAt != nil {
			// The profile says what is true now: neither a hit nor a
			// line of an as-of search.
			s.cands = slices.DeleteFunc(s.cands, func(c *retrieval.Candidate) bool { return c.Memory.Metadata[engram.MetaProfile] == true })
			return nil
		}
		if s.req.Budget == 0 {
			return nil
		}
		var err error
		s.profile, err = readProfile(ctx, r, s.scope)
		return err
	})
}

// result gives each source turn one place (see retrieval.Collapse), fills
// k places or the token budget in rank order, and returns the hits.
func (s *search) result() (*engram.SearchResult, error) {
	var asm *retrieval.Assembler
	var fit func(*retrieval.Candidate) bool
	lines := 0 // lines of the context before the hits': the profile's
	if s.req.Budget > 0 {
		counter, err := retrieval.CL100K()
		if err != nil {
			return nil, err
		}
		asm, lines = withProfile(s.profile, s.req.Budget, counter)
		fit = func(c *retrieval.Candidate) bool { return asm.Add(c.Memory) }
	}
	places := s.places(fit)
	res := &engram.SearchResult{}
	if asm != nil {
		res.Context, res.Tokens = asm.Context()
	}
	res.Hits = make([]engram.Hit, len(places))
	for i, p := range places {
		// A copy of its own: candidates share their slices, maps and
		// times with the row cache (package index).
		h := engram.Hit{Memory: *p.Memory.Clone(), Score: p.Score, Collapsed: p.Collapsed}
		h.Memory.Lapse(s.req.Filter.Now)
		if s.req.Explain {
			h.Explain, h.Factors = p.Ranks, p.Factors
		}
		if asm != nil {
			h.Tokens = asm.Pieces()[lines+i].Tokens
		}
		res.Hits[i] = h
	}
	return res, nil
}

// places fills the search's k places from its ranking: one per source
// turn with Config.Collapse, else every candidate; fit, when set, accepts
// the candidates that fit in the context.
func (s *search) places(fit func(*retrieval.Candidate) bool) []retrieval.Place {
	if s.cfg.Collapse {
		return retrieval.Collapse(s.cands, s.k, fit)
	}
	var out []retrieval.Place
	for _, c := range s.cands {
		if len(out) < s.k && (fit == nil || fit(c)) {
			out = append(out, retrieval.Place{Candidate: c})
		}
	}
	return out
}

// weighLanguage lowers the dense channel's weight for a query in a
// language the embedder does not cover (see DenseOtherLanguage).
func (e *searcher) weighLanguage(s *search) {
	if e.vec == nil || s.query.Lang == "" || e.vec.Covers(s.query.Lang) {
		return
	}
	if w, ok := s.cfg.Weights[ChannelDense]; ok {
		s.cfg.Weights[ChannelDense] = w * DenseOtherLanguage
	}
}

// DenseOtherLanguage is the share of its weight the dense channel keeps for
// a query, or a memory, in a language its embedder does not declare: an
// English-only model embeds unrelated sentences of other languages close
// together, and fusion would scale that noise up to full weight.
const DenseOtherLanguage = 0.2

// dense is the channel of embeddings: the query embedded as the mean of
// its phrasings and, for a comparison, each occasion it names on its own
// too (see retrieval.Query), searched in the scope's vector index.
type dense struct{ vec *index.Vectors }

// Name implements retrieval.Channel.
func (dense) Name() string { return ChannelDense }

// Prepare implements retrieval.Channel: it embeds the query and brings
// the scope's vector indexes up to date, in a read transaction of its own
// (see index.Vectors.Open), before the search's, and embeds the newest
// memories of the scope still waiting for their embed job (see
// index.Vectors.PendingHits); their search then runs beside the search's reads of the
// store, and the denseSearch it returns waits for it. It fails with the
// embedder's or the store's error.
func (d dense) Prepare(ctx context.Context, g *retrieval.Gathering) (retrieval.Gatherer, error) {
	views, parts := g.Query.Views, g.Query.Parts
	if g.Config.Raw || len(views) == 0 {
		views, parts = []string{g.Query.Text}, nil
	}
	vs, err := d.vec.Embed(engram.WithEmbedPartition(ctx, g.Scope.Namespace()), append(slices.Clip(views), parts...))
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	queries := append([][]float32{mean(vs[:len(views)])}, vs[len(views):]...)
	ps, err := d.vec.Open(ctx, g.Scope)
	if err != nil {
		return nil, err
	}
	var pending []index.Hit
	if ids := ps.PendingIDs(MaxPendingEmbeds); slices.ContainsFunc(ids, func(s []string) bool { return len(s) > 0 }) {
		if pending, err = d.vec.PendingHits(ctx, g.Scope, ps, ids, queries); err != nil {
			return nil, err
		}
	}
	found := make(chan []index.Hit, 1)
	pool := g.Pool
	go func() { found <- index.WithPending(ps.Search(queries, pool), pending, pool) }()
	return denseSearch{vec: d.vec, found: found}, nil
}

// denseSearch is the dense channel prepared for one search: the search of
// its vector index, running.
type denseSearch struct {
	vec   *index.Vectors
	found <-chan []index.Hit // the index's hits, once
}

// Prefetch implements retrieval.Gatherer; the index search started in
// Prepare.
func (denseSearch) Prefetch(*retrieval.Gathering) {}

// Gather implements retrieval.Gatherer: the prepared hits that the scope
// and filter keep, ranked by cosine. A memory in a language the embedder
// does not cover keeps DenseOtherLanguage of the channel's weight. It fails
// with the store's error.
func (d denseSearch) Gather(ctx context.Context, g *retrieval.Gathering) ([]retrieval.Find, error) {
	hits := <-d.found
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	ms, err := g.Load(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]retrieval.Find, 0, len(ms))
	for _, h := range hits {
		m := ms[h.ID]
		if m == nil {
			continue
		}
		f := retrieval.Find{Memory: m, Rank: len(out) + 1, Score: float64(h.Score)}
		if m.Language != "" && !d.vec.Covers(m.Language) {
			f.Trust = DenseOtherLanguage
		}
		out = append(out, f)
	}
	return out, nil
}

// mean returns the unit-length mean of unit vectors, or the one vector
// when there is only one. Opposite vectors average to zero, which stays
// zero.
func mean(vs [][]float32) []float32 {
	if len(vs) == 1 {
		return vs[0]
	}
	out := make([]float32, len(vs[0]))
	for _, v := range vs {
		for i, x := range v {
			out[i] += x
		}
	}
	var n float64
	for _, x := range out {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		f := float32(1 / math.Sqrt(n))
		for i := range out {
			out[i] *= f
		}
	}
	return out
}

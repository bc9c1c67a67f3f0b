package retrieval

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/engramhq/engram"
)

// Channel is one way of finding candidates for an analysed query: full
// text, embeddings, time, and whatever joins them (a graph, a profile).
// A search runs its channels in stages, each stage for every channel in
// the order they were registered: Prepare, before the store is read;
// then, in one read transaction, Prefetch and Gather of what Prepare
// returned. Each channel's finds join the candidates before the next
// channel gathers, and fusion reads them all (see Find and Candidate).
type Channel interface {
	// Name names the channel in SearchRequest.Channels, Config.Weights
	// and explanations.
	Name() string
	// Prepare does the channel's work that needs no store (embedding the
	// query, searching an in-memory index), so that a read transaction is
	// not held open for it. It runs with g.Reader nil and returns the
	// channel's Gatherer for this search, which holds what it prepared in
	// fields of its own; a channel with nothing to prepare returns itself.
	// An error fails the search.
	Prepare(ctx context.Context, g *Gathering) (Gatherer, error)
}

// Gatherer is one channel's part in one search once it is prepared (see
// Channel.Prepare). Both methods run with g.Reader set to the search's
// read transaction and g.Text to the scope's in-memory text index, if any.
type Gatherer interface {
	// Prefetch starts work on the in-memory indexes that may run beside
	// the other channels, before any channel gathers (see
	// Gathering.PrefetchText); a channel with none does nothing.
	Prefetch(g *Gathering)
	// Gather returns the channel's ranked finds within g.Scope and
	// g.Filter (see Gathering.Pool). It fails with the error of the store
	// or provider it reads; the search then fails.
	Gather(ctx context.Context, g *Gathering) ([]Find, error)
}

// Find is one memory a channel found: what the channel hands to fusion.
type Find struct {
	// Memory is the memory as the search read it; it must not change
	// afterwards (the candidate keeps it, not a copy).
	Memory *engram.Memory
	// Rank is its place in the channel's ranking, from 1; a channel that
	// ranks several times (the temporal channel, once per period) starts
	// each ranking at 1.
	Rank int
	// Score is the channel's score of it, higher is better.
	Score float64
	// Trust is the share of the channel's weight fusion gives this find,
	// for one the channel itself trusts less (a memory in a language its
	// model does not cover); 0 gives it the whole weight.
	Trust float64
}

// Gathering is one search's state while its channels gather candidates:
// what they may read and what was found so far. Channels run one after
// another, so a later one may use what an earlier one found (the full-text
// query leaves out the names of speakers the dense channel's candidates
// have).
type Gathering struct {
	Reader engram.Reader
	Scope  engram.Scope
	Filter engram.MemoryFilter
	Query  *Query
	Config *Config
	// Pool is how many candidates each channel contributes at most.
	Pool int
	// Text, when set, is the in-memory full-text index of the scope that
	// SearchText ranks with instead of the store's index.
	Text TextIndex

	byID     map[string]*Candidate
	cands    []*Candidate
	slab     []Candidate // where Add makes candidates
	lexical  *string
	prefetch *textPrefetch

	// rows holds the memories read by id through Reader, so that channels
	// finding the same memory read it once per transaction; nil for an id
	// the store does not have in the scope. SetReader empties it.
	rows map[string]*engram.Memory
}

// SetReader makes the gathering read through r, a new transaction,
// forgetting the memories read through the one before.
func (g *Gathering) SetReader(r engram.Reader) { g.Reader, g.rows = r, nil }

// NewGathering starts a gathering.
func NewGathering(r engram.Reader, s engram.Scope, f engram.MemoryFilter, q *Query, cfg *Config, pool int) *Gathering {
	return &Gathering{Reader: r, Scope: s, Filter: f, Query: q, Config: cfg, Pool: pool, byID: make(map[string]*Candidate, 2*pool)}
}

// Add records the finds of channel, in order. A memory found by several
// channels is one candidate with a rank from each (and one for each time
// a channel found it). The candidate keeps a find's memory itself, not a
// copy.
func (g *Gathering) Add(channel string, finds []Find) {
	for _, f := range finds {
		c := g.candidate(f.Memory)
		c.Ranks = append(c.Ranks, engram.ChannelHit{Channel: channel, Rank: f.Rank, Score: f.Score})
		if f.Trust != 0 {
			if c.trust == nil {
				c.trust = map[string]float64{}
			}
			c.trust[channel] = f.Trust
		}
	}
}

// candidate returns the candidate of m, made the first time m is found.
func (g *Gathering) candidate(m *engram.Memory) *Candidate {
	c := g.byID[m.ID]
	if c == nil {
		// Candidates come from a slab: one allocation for many.
		if len(g.slab) == cap(g.slab) {
			g.slab = make([]Candidate, 0, max(2*g.Pool, 16))
		}
		g.slab = append(g.slab, Candidate{Memory: m})
		c = &g.slab[len(g.slab)-1]
		g.byID[m.ID] = c
		g.cands = append(g.cands, c)
	}
	return c
}

// Candidates returns what the channels found, in order of first finding.
func (g *Gathering) Candidates() []*Candidate { return g.cands }

// Lexical returns the full-text query (see Query.Lexical), made once, the
// first time a channel asks: with Config.DropSpeakers it leaves out the
// names of the speakers of the candidates found by then.
func (g *Gathering) Lexical() string {
	if g.lexical == nil {
		text := g.lexicalAfter(g.cands)
		g.lexical = &text
	}
	return *g.lexical
}

// lexicalAfter is the full-text query once cands are found.
func (g *Gathering) lexicalAfter(cands []*Candidate) string {
	if g.Config.Raw {
		return g.Query.Text
	}
	var drop func(string) bool
	if g.Config.DropSpeakers {
		speakers := Speakers{}
		for _, c := range cands {
			speakers.Add(c.Memory)
		}
		drop = speakers.Named
	}
	return g.Query.Lexical(g.Config.Inflect, drop)
}

// textPrefetch is a ranking of the in-memory text index started before
// the channels gather (see PrefetchText).
type textPrefetch struct {
	query string
	limit int
	found chan []TextScore
}

// PrefetchText starts, on a goroutine of its own, the ranking of the
// in-memory text index that the full-text channel asks for first: with
// the query as it reads before any candidate is found, g.Filter and
// g.Pool. SearchText takes it when the channel's query turns out the same
// (no speaker of the candidates found first is named in it); else it is
// dropped. Without an in-memory index it does nothing.
func (g *Gathering) PrefetchText() {
	if g.Text == nil || g.lexical != nil {
		return
	}
	text := g.lexicalAfter(nil)
	if text == "" {
		return
	}
	pf := &textPrefetch{query: text, limit: g.Pool, found: make(chan []TextScore, 1)}
	idx, f := g.Text, g.Filter
	go func() { pf.found <- idx.SearchText(text, f, pf.limit) }()
	g.prefetch = pf
}

// prefetched returns the prefetched ranking when it is the one asked
// for, once.
func (g *Gathering) prefetched(query string, limit int) ([]TextScore, bool) {
	pf := g.prefetch
	if pf == nil || pf.query != query || pf.limit != limit {
		return nil, false
	}
	g.prefetch = nil
	return <-pf.found, true
}

// Load returns the memories among ids that the scope holds and the
// caller's filter keeps, by id. The filter's own ids, when it has some,
// still bound the result. With an in-memory text index it reads by id and
// judges there (see loadFound). It fails with the store's error.
func (g *Gathering) Load(ctx context.Context, ids []string) (map[string]*engram.Memory, error) {
	if g.Text != nil {
		return g.loadFound(ctx, g.Filter, ids)
	}
	return g.load(ctx, g.Filter, ids)
}

// getMemories returns the memories among ids that the scope holds, read
// by id in g.Reader's transaction, or taken from the rows g.Text keeps
// (see TextIndex.Memories); each id is read from the store once per
// transaction, whichever channel asks. g.Text must be set.
func (g *Gathering) getMemories(ctx context.Context, ids []string) ([]*engram.Memory, error) {
	if g.rows == nil {
		g.rows = make(map[string]*engram.Memory, 2*g.Pool) // the dense and full-text channels' candidates
	}
	var miss []string
	for _, id := range ids {
		if _, ok := g.rows[id]; !ok {
			miss = append(miss, id)
		}
	}
	if len(miss) > 0 {
		miss = g.Text.Memories(miss, g.rows)
	}
	if len(miss) > 0 {
		ms, err := g.Reader.GetMemories(ctx, g.Scope, miss)
		if err != nil {
			return nil, err
		}
		for _, id := range miss {
			g.rows[id] = nil
		}
		for i := range ms {
			g.rows[ms[i].ID] = &ms[i]
		}
		g.Text.Remember(ms)
	}
	out := make([]*engram.Memory, 0, len(ids))
	for _, id := range ids {
		if m := g.rows[id]; m != nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// load is Load with the filter f.
func (g *Gathering) load(ctx context.Context, f engram.MemoryFilter, ids []string) (map[string]*engram.Memory, error) {
	if len(f.IDs) > 0 {
		ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !slices.Contains(f.IDs, id) })
	}
	out := make(map[string]*engram.Memory, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	f.IDs, f.Limit, f.Cursor = ids, len(ids), ""
	ms, _, err := g.Reader.ListMemories(ctx, g.Scope, f)
	if err != nil {
		return nil, err
	}
	for i := range ms {
		out[ms[i].ID] = &ms[i]
	}
	return out, nil
}

// TextIndex is an in-memory full-text index over the memories of one
// search's scope (see package textindex), whose statistics come from the
// scope's namespaces alone.
type TextIndex interface {
	// SearchText ranks the memories of the scope matching query by BM25,
	// best first, at most limit of them, leaving out those that f rules
	// out by kind, status, id, or creation or validity time; the rest of f
	// (metadata, contains, sources) is not checked.
	SearchText(query string, f engram.MemoryFilter, limit int) []TextScore
	// Judge reports whether m, as read now, passes the parts of f that
	// SearchText checks (keep), and whether that settles it (sure); when
	// it does not (a memory with a TTL, which a store judges by its own
	// clock), the store reads m with f.
	Judge(m *engram.Memory, f engram.MemoryFilter) (keep, sure bool)

	// The index keeps memories of its scope in memory too, as recent as
	// the index itself, so that a search reads from the store only those
	// it lacks; an index with no room for them (or none kept yet) holds
	// none and remembers nothing.

	// Memories puts into into, by id, each memory among ids that the
	// index holds and the search's scope contains, and returns the ids it
	// does not hold. The memories are shared with the index: a search
	// never changes them and copies those it returns.
	Memories(ids []string, into map[string]*engram.Memory) (miss []string)
	// Remember offers the index memories the search read from the store
	// in its transaction; it keeps copies of those it can prove current.
	Remember(ms []engram.Memory)
}

// TextScore is one memory a TextIndex found.
type TextScore struct {
	ID    string
	Score float64
}

// SearchText ranks the memories of the scope that f keeps matching query,
// best first, at most limit of them: with the in-memory index (Text) when
// there is one, else with the store's. It fails with the store's error.
func (g *Gathering) SearchText(ctx context.Context, query string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	return g.searchText(ctx, query, f, limit, false)
}

// searchText is SearchText; with filtered, f is g.Filter and the ranking
// PrefetchText started may serve.
func (g *Gathering) searchText(ctx context.Context, query string, f engram.MemoryFilter, limit int, filtered bool) ([]engram.TextHit, error) {
	if g.Text == nil {
		return g.Reader.SearchText(ctx, g.Scope, query, f, limit)
	}
	// The store checks what the index cannot (metadata, contains,
	// sources) and drops what changed since the index caught up; ask the
	// index for more until enough are left or it has no more.
	for k := limit; ; k *= 4 {
		found, ok := []TextScore(nil), false
		if filtered && k == limit {
			found, ok = g.prefetched(query, k)
		}
		if !ok {
			found = g.Text.SearchText(query, f, k)
		}
		ids := make([]string, len(found))
		for i, h := range found {
			ids[i] = h.ID
		}
		ms, err := g.loadFound(ctx, f, ids)
		if err != nil {
			return nil, err
		}
		hits := make([]engram.TextHit, 0, min(limit, len(ms)))
		for _, h := range found {
			if m := ms[h.ID]; m != nil && len(hits) < limit {
				hits = append(hits, engram.TextHit{Memory: *m, Score: h.Score})
			}
		}
		if len(hits) == limit || len(found) < k || k >= engram.MaxLimit*16 {
			return hits, nil
		}
	}
}

// loadFound returns the memories among ids, found by the in-memory index,
// that f keeps as they are now. They are read by id and judged by the
// index (a list with an id filter can make PostgreSQL walk the whole
// namespace in id order); the store checks those the index cannot judge,
// and all of them when f has parts the index does not check (metadata,
// contains, sources).
func (g *Gathering) loadFound(ctx context.Context, f engram.MemoryFilter, ids []string) (map[string]*engram.Memory, error) {
	if len(f.Metadata) > 0 || len(f.MetadataIn) > 0 || f.Contains != "" || len(f.Sources) > 0 {
		return g.load(ctx, f, ids)
	}
	ms, err := g.getMemories(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*engram.Memory, len(ms))
	var ask []string
	for _, m := range ms {
		switch keep, sure := g.Text.Judge(m, f); {
		case !sure:
			ask = append(ask, m.ID)
		case keep:
			out[m.ID] = m
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	more, err := g.load(ctx, f, ask)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, more)
	return out, nil
}

// BM25 is the full-text channel: ranked text search over value,
// abstraction and cues with the query's Lexical text, in the scope's
// in-memory index or the store's (see Gathering.SearchText).
type BM25 struct{}

// Name implements Channel.
func (BM25) Name() string { return ChannelBM25 }

// Prepare implements Channel: the full-text channel has nothing to
// prepare.
func (b BM25) Prepare(context.Context, *Gathering) (Gatherer, error) { return b, nil }

// Prefetch implements Gatherer: the in-memory index's ranking starts
// (see Gathering.PrefetchText).
func (BM25) Prefetch(g *Gathering) { g.PrefetchText() }

// Gather implements Gatherer; it fails with the store's error.
func (BM25) Gather(ctx context.Context, g *Gathering) ([]Find, error) {
	text := g.Lexical()
	if text == "" {
		return nil, nil // the query named a time and nothing else to match
	}
	hits, err := g.searchText(ctx, text, g.Filter, g.Pool, true)
	if err != nil {
		return nil, err
	}
	return textFinds(hits), nil
}

// textFinds ranks full-text hits in their order, scored by BM25.
func textFinds(hits []engram.TextHit) []Find {
	out := make([]Find, len(hits))
	for i := range hits {
		out[i] = Find{Memory: &hits[i].Memory, Rank: i + 1, Score: hits[i].Score}
	}
	return out
}

// Temporal is the channel of the periods a query names: the memories of
// those periods are candidates even when no word of theirs matches ("what
// did I do last weekend?"), ordered and scored within a period by the
// full-text match they have there, so the query's words pick among the
// period's memories when they rank too low in the whole store. A memory
// said in the days after a period about something in it ("yesterday I
// went to the zoo") belongs to the period too: formation recorded when it
// happened (engram.Memory.EventPeriod).
type Temporal struct{}

// Retold is how long after a period the channel looks for memories that
// tell of it.
const Retold = 7 * 24 * time.Hour

// Name implements Channel.
func (Temporal) Name() string { return ChannelTemporal }

// Prepare implements Channel: the temporal channel has nothing to
// prepare.
func (t Temporal) Prepare(context.Context, *Gathering) (Gatherer, error) { return t, nil }

// Prefetch implements Gatherer; the temporal channel has nothing to
// prefetch.
func (Temporal) Prefetch(*Gathering) {}

// Gather implements Gatherer: one ranking per period the query names. It
// fails with the store's error.
func (Temporal) Gather(ctx context.Context, g *Gathering) ([]Find, error) {
	var out []Find
	for _, p := range g.Query.Periods {
		ms, lex, err := periodMemories(ctx, g, p.From, p.To)
		if err != nil {
			return nil, err
		}
		slices.SortStableFunc(ms, func(a, b engram.Memory) int { return cmp.Compare(lex[b.ID], lex[a.ID]) })
		for i := range ms {
			out = append(out, Find{Memory: &ms[i], Rank: i + 1, Score: lex[ms[i].ID]})
		}
	}
	return out, nil
}

// periodMemories returns the memories of the period [from, to) that the
// caller's filter keeps: those that happened in it, said in it or told in
// the Retold after it, and the full-text scores of those that match the
// query. A filter on validity also keeps every open-ended memory that began
// before a window, so each window is listed on its own, newest first, and
// the list trimmed to what happened in the period; one full-text search
// over both windows scores them.
func periodMemories(ctx context.Context, g *Gathering, from, to time.Time) ([]engram.Memory, map[string]float64, error) {
	var ms []engram.Memory
	seen := map[string]bool{}
	for _, w := range [][2]time.Time{{from, to}, {to, to.Add(Retold)}} {
		f, ok := withinPeriod(g.Filter, w[0], w[1])
		if !ok {
			continue
		}
		f.Limit = g.Pool
		page, _, err := g.Reader.ListMemories(ctx, g.Scope, f)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range page {
			if !seen[m.ID] && InPeriod(g.Query, &m) {
				seen[m.ID] = true
				ms = append(ms, m)
			}
		}
	}
	lex := map[string]float64{}
	f, ok := withinPeriod(g.Filter, from, to.Add(Retold))
	text := g.Lexical()
	if !ok || text == "" {
		return ms, lex, nil
	}
	// The open-ended memories would crowd a page of the usual pool's
	// length: ask for a longer one.
	hits, err := g.SearchText(ctx, text, f, min(4*g.Pool, engram.MaxLimit))
	if err != nil {
		return nil, nil, err
	}
	for i := range hits {
		if m := &hits[i].Memory; InPeriod(g.Query, m) {
			lex[m.ID] = hits[i].Score
			if !seen[m.ID] {
				seen[m.ID] = true
				ms = append(ms, *m)
			}
		}
	}
	return ms, lex, nil
}

// withinPeriod narrows f to memories valid at some time in [from, to); it
// reports false when f's own validity window leaves nothing of the period.
func withinPeriod(f engram.MemoryFilter, from, to time.Time) (engram.MemoryFilter, bool) {
	if f.ValidAfter == nil || f.ValidAfter.Before(from) {
		f.ValidAfter = &from
	}
	if f.ValidBefore == nil || f.ValidBefore.After(to) {
		f.ValidBefore = &to
	}
	f.Cursor = ""
	return f, f.ValidAfter.Before(*f.ValidBefore)
}

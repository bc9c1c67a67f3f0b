package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// DefaultK is the number of hits a search returns when K is zero.
const DefaultK = 10

// Retrieval channels a SearchRequest may name.
const (
	ChannelBM25  = retrieval.ChannelBM25
	ChannelDense = retrieval.ChannelDense
)

// Search implements engram.Service. The query is analysed (names, time
// expressions, whom it asks about); each channel (BM25 over value,
// abstraction and cues; dense over the embeddings of abstraction and value
// when the engine has an embedder, the query embedded as the mean of its
// phrasings and, for a comparison, each occasion it names searched on its
// own too: see retrieval.Query) ranks a pool of candidates; the pools are
// fused by weighted reciprocal rank fusion and reranked, neighbours and
// budget applied as configured (see package retrieval). A search that names
// its channels gets their plain ranking instead: the query as typed, no
// reranking (see retrieval.Config.Plain). Every hit counts as an access.
func (e *Engine) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	s, err := readScope(req.Scope)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query is required")
	}
	if len(req.Query) > engram.MaxContentBytes {
		return nil, engram.Errorf(engram.EINVALID, "query is %d bytes, longer than the limit of %d", len(req.Query), engram.MaxContentBytes)
	}
	k := req.K
	switch {
	case k < 0:
		return nil, engram.Errorf(engram.EINVALID, "k %d is negative", k)
	case k == 0 && req.Budget > 0:
		k = engram.MaxK
	case k == 0:
		k = DefaultK
	case k > engram.MaxK:
		return nil, engram.Errorf(engram.EINVALID, "k %d is above the maximum of %d", k, engram.MaxK)
	}
	if req.Budget < 0 || req.Budget > engram.MaxBudget {
		return nil, engram.Errorf(engram.EINVALID, "budget %d is outside 0..%d tokens", req.Budget, engram.MaxBudget)
	}
	if err := req.Filter.Validate(); err != nil {
		return nil, err
	}
	useBM25, useDense, err := e.channels(req.Channels)
	if err != nil {
		return nil, err
	}
	now := e.clock()
	if req.Now != nil {
		now = norm(*req.Now)
	}
	cfg := e.retrieval
	if len(req.Channels) > 0 {
		cfg = cfg.Plain()
	}
	q := retrieval.Analyze(req.Query, now)
	pool := max(cfg.Pool, k)

	var dense []denseHit
	if useDense {
		views, parts := q.Views, q.Parts
		if cfg.Raw {
			views, parts = []string{req.Query}, nil
		}
		vs, err := e.vec.emb.Embed(ctx, append(slices.Clip(views), parts...))
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		queries := append([][]float32{mean(vs[:len(views)])}, vs[len(views):]...)
		if dense, err = e.vec.search(ctx, s, queries, pool); err != nil {
			return nil, err
		}
	}

	byID := map[string]*retrieval.Candidate{}
	var cands []*retrieval.Candidate
	add := func(m *engram.Memory, channel string, rank int, score float64) {
		c := byID[m.ID]
		if c == nil {
			c = &retrieval.Candidate{Memory: *m}
			byID[m.ID] = c
			cands = append(cands, c)
		}
		c.Ranks = append(c.Ranks, engram.ChannelHit{Channel: channel, Rank: rank, Score: score})
	}
	err = e.store.View(ctx, func(r engram.Reader) error {
		speakers := retrieval.Speakers{}
		if len(dense) > 0 {
			ms, err := e.listByID(ctx, r, s, req.Filter, denseIDs(dense))
			if err != nil {
				return err
			}
			rank := 0
			for _, d := range dense {
				if m := ms[d.id]; m != nil {
					rank++
					add(m, ChannelDense, rank, float64(d.score))
					speakers.Add(m)
				}
			}
		}
		var text string // the full-text query
		if useBM25 {
			var drop func(string) bool
			if cfg.DropSpeakers {
				drop = speakers.Named
			}
			text = q.Lexical(cfg.Inflect, drop)
			if cfg.Raw {
				text = req.Query
			}
			hits, err := r.SearchText(ctx, s, text, req.Filter, pool)
			if err != nil {
				return err
			}
			for i := range hits {
				add(&hits[i].Memory, ChannelBM25, i+1, hits[i].Score)
			}
		}
		if cfg.Temporal {
			// The memories of the periods the query names are candidates
			// even when no word of theirs matches ("what did I do last
			// weekend?"); the period boost ranks them. Within a period
			// they are ordered, and scored, by the full-text match they
			// have there, so the words of the query pick among the
			// period's memories when they rank too low in the whole store.
			for _, p := range q.Periods {
				f, ok := withinPeriod(req.Filter, p.From, p.To)
				if !ok {
					continue
				}
				f.Limit = pool
				ms, _, err := r.ListMemories(ctx, s, f)
				if err != nil {
					return err
				}
				// The filter keeps what is valid during the period, which
				// includes every open-ended memory that began before it;
				// only what happened in it counts.
				ms = slices.DeleteFunc(ms, func(m engram.Memory) bool { return !retrieval.InPeriod(q, &m) })
				lex := map[string]float64{}
				if text != "" {
					// Those open-ended memories would crowd a page of
					// the usual pool's length: ask for a longer one.
					hits, err := r.SearchText(ctx, s, text, f, min(4*pool, engram.MaxLimit))
					if err != nil {
						return err
					}
					listed := make(map[string]bool, len(ms))
					for i := range ms {
						listed[ms[i].ID] = true
					}
					for i := range hits {
						if m := &hits[i].Memory; retrieval.InPeriod(q, m) {
							lex[m.ID] = hits[i].Score
							if !listed[m.ID] {
								ms = append(ms, *m)
							}
						}
					}
				}
				slices.SortStableFunc(ms, func(a, b engram.Memory) int { return cmp.Compare(lex[b.ID], lex[a.ID]) })
				for i := range ms {
					add(&ms[i], retrieval.ChannelTemporal, i+1, lex[ms[i].ID])
				}
			}
		}
		retrieval.Fuse(cands, cfg)
		retrieval.Rerank(q, cands, cfg, now)
		retrieval.MMR(cands, cfg.MMRDepth, cfg.MMR, cfg.MMRSameConversation)
		retrieval.Spread(q, cands, cfg.MMRDepth, cfg.SpreadDepth, cfg.Spread, cfg.SpreadOther)
		if cfg.NeighbourTop > 0 {
			ids := retrieval.NeighbourIDs(cands, cfg.NeighbourTop)
			ms, err := e.listByID(ctx, r, s, req.Filter, ids)
			if err != nil {
				return err
			}
			extra := make([]engram.Memory, 0, len(ms))
			for _, id := range ids {
				if m := ms[id]; m != nil {
					extra = append(extra, *m)
				}
			}
			cands = retrieval.Expand(cands, extra, cfg.NeighbourTop, cfg.NeighbourDecay)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	if cfg.Dedup {
		cands = retrieval.Dedup(cands)
	}
	if len(cands) > k {
		cands = cands[:k]
	}
	res := &engram.SearchResult{}
	var pieces []retrieval.Piece
	if req.Budget > 0 {
		counter, err := retrieval.CL100K()
		if err != nil {
			return nil, err
		}
		ms := make([]*engram.Memory, len(cands))
		for i, c := range cands {
			ms[i] = &c.Memory
		}
		var taken []int
		taken, pieces, res.Context, res.Tokens = retrieval.Assemble(ms, req.Budget, counter)
		kept := make([]*retrieval.Candidate, len(taken))
		for i, j := range taken {
			kept[i] = cands[j]
		}
		cands = kept
	}
	res.Hits = make([]engram.Hit, len(cands))
	ids := make([]string, len(cands))
	for i, c := range cands {
		h := engram.Hit{Memory: c.Memory, Score: c.Score}
		if req.Explain {
			h.Explain, h.Factors = c.Ranks, c.Factors
		}
		if pieces != nil {
			h.Tokens = pieces[i].Tokens
		}
		res.Hits[i] = h
		ids[i] = c.Memory.ID
	}
	e.access.record(s.Namespace(), e.clock(), ids...)
	return res, nil
}

// channels resolves the channels a search asked for.
func (e *Engine) channels(names []string) (bm25, dense bool, err error) {
	if len(names) == 0 {
		return true, e.vec != nil, nil
	}
	for _, n := range names {
		switch n {
		case ChannelBM25:
			bm25 = true
		case ChannelDense:
			if e.vec == nil {
				return false, false, engram.Errorf(engram.EINVALID, "channel %q needs an embedder, and this engine has none configured", n)
			}
			dense = true
		default:
			return false, false, engram.Errorf(engram.EINVALID, "channel %q is not one of %s, %s", n, ChannelBM25, ChannelDense)
		}
	}
	return bm25, dense, nil
}

func denseIDs(ds []denseHit) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.id
	}
	return ids
}

// listByID loads the memories among ids that the scope holds and the
// filter keeps, by id.
func (e *Engine) listByID(ctx context.Context, r engram.Reader, s engram.Scope, f engram.MemoryFilter, ids []string) (map[string]*engram.Memory, error) {
	out := make(map[string]*engram.Memory, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	f.IDs, f.Limit, f.Cursor = ids, len(ids), ""
	ms, _, err := r.ListMemories(ctx, s, f)
	if err != nil {
		return nil, err
	}
	for i := range ms {
		out[ms[i].ID] = &ms[i]
	}
	return out, nil
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

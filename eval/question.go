package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// hayCtx is what scoring needs to know about the current haystack.
type hayCtx struct {
	h          *haystack
	byEpisode  map[string]int
	textOf     map[string]string
	sessionOf  map[string]string
	fullPieces []piece
	fullTokens int
}

// render is how a hit or a history turn appears in an assembled context.
func render(at time.Time, who, text string) string {
	var b strings.Builder
	if !at.IsZero() {
		b.WriteString("[" + at.UTC().Format("2006-01-02 15:04") + "] ")
	}
	if who != "" {
		b.WriteString(who + ": ")
	}
	b.WriteString(text)
	return b.String()
}

func name(speaker, role string) string {
	if speaker != "" {
		return speaker
	}
	return role
}

// hitPieces renders hits and resolves their citations to turn keys.
func (r *runner) hitPieces(hc *hayCtx, hits []engram.Hit) []piece {
	ps := make([]piece, len(hits))
	for i, h := range hits {
		m := &h.Memory
		var at time.Time
		if m.ValidFrom != nil {
			at = *m.ValidFrom
		}
		speaker := m.Speaker()
		role := m.Role()
		text := render(at, name(speaker, role), m.Value)
		var units []string
		for _, src := range m.Sources {
			if ti, ok := hc.byEpisode[src]; ok {
				k := hc.h.turns[ti].key
				if !slices.Contains(units, k) {
					units = append(units, k)
				}
			}
		}
		ps[i] = piece{text: text, tokens: r.tok.count(text), turns: units}
	}
	return ps
}

// question searches one question with every system and scores it.
func (r *runner) question(ctx context.Context, ns engram.Namespace, hc *hayCtx, q question) error {
	lab := r.ds.labels[q.id]
	qr := QuestionResult{ID: q.id, Haystack: hc.h.id, Category: lab.category, Skip: lab.skip, Systems: map[string]*QuestionSystem{}}

	// "Now" is when the question is asked, as a client would send it.
	now := hc.h.now(q)
	for _, s := range r.askOrder() {
		qs, err := r.searchQuestion(ctx, ns, hc, q, lab, s, now)
		if err != nil {
			return err
		}
		qr.Systems[s.name] = qs
	}
	if r.full != nil {
		qr.Systems[SystemFull] = r.fullQuestion(hc, q, lab)
	}
	r.countQuestion(lab)
	r.questions = append(r.questions, qr)
	return nil
}

// askOrder lists the available search systems in the order the next
// question asks them: the ablations first, each question starting with
// the next in turn so background work (GC) does not always tax the same
// one, and engram last. Only engram's searches count as reads (the
// ablations search under engram.WithoutAccess), so every system of every
// question sees exactly the reads of engram's earlier searches, as a
// client would leave them, whichever systems run.
func (r *runner) askOrder() []*searchSystem {
	var ablations []*searchSystem
	var last *searchSystem
	for _, s := range r.systems {
		switch {
		case s.unavailable != "":
		case s.name == SystemEngram:
			last = s
		default:
			ablations = append(ablations, s)
		}
	}
	if n := len(ablations); n > 0 {
		start := r.asked % n
		ablations = append(ablations[start:], ablations[:start]...)
	}
	r.asked++
	if last != nil {
		ablations = append(ablations, last)
	}
	return ablations
}

// searchQuestion asks q of the search system s, once at depth K to rank
// and once at the pool's depth to fill the budgets, times both and scores
// the answers at every level the question has evidence for.
func (r *runner) searchQuestion(ctx context.Context, ns engram.Namespace, hc *hayCtx, q question, lab *label, s *searchSystem, now time.Time) (*QuestionSystem, error) {
	req := engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: q.text, K: r.cfg.K, Channels: s.channels, Now: &now, Mode: r.cfg.Mode}
	if s.name != SystemEngram {
		ctx = engram.WithoutAccess(ctx)
	}
	t0 := time.Now()
	res, err := r.svc.Search(ctx, req)
	lat := time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", s.name, err)
	}
	req.K = r.cfg.PoolK
	t0 = time.Now()
	pool, err := r.svc.Search(ctx, req)
	poolLat := time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("%s pool search: %w", s.name, err)
	}
	s.latency = append(s.latency, float64(lat.Microseconds())/1000)
	s.poolLatency = append(s.poolLatency, float64(poolLat.Microseconds())/1000)

	top := r.hitPieces(hc, res.Hits)
	pps := r.hitPieces(hc, pool.Hits)
	ranked := make([][]string, len(top))
	for i, p := range top {
		ranked[i] = p.turns
	}
	qs := &QuestionSystem{Ranked: ranked, Scores: map[string]map[string]float64{}}
	for _, level := range r.levels {
		ev := r.evidence(lab, level)
		if lab.skip != "" || len(ev) == 0 {
			continue
		}
		m := r.scoreSearch(hc, level, ev, ranked, top, pps)
		s.levels[level].add(lab.category, m)
		qs.Scores[level] = m
	}
	if r.cfg.LLM != nil && slices.Contains(r.cfg.LLM.Systems, s.name) && lab.skip != "adversarial" {
		r.llmJobs = append(r.llmJobs, r.newLLMJob(s.name, q, lab, pps, false))
	}
	return qs, nil
}

// scoreSearch scores a search's top hits and pool at one level against
// the evidence ev: the ranking (ranked: the turns each top hit cites), the
// budgets and the tokens of hits and of the assembled context.
func (r *runner) scoreSearch(hc *hayCtx, level string, ev []string, ranked [][]string, top, pool []piece) map[string]float64 {
	m := map[string]float64{}
	lr := ranked
	if level == LevelSession {
		lr = sessionsOf(lr, hc.sessionOf)
	}
	scoreRanked(m, lr, ev)
	r.scoreBudgets(m, pool, ev, level, hc, false)
	ht, n := 0, 0
	for _, p := range top {
		ht += p.tokens
		n++
	}
	if n > 0 {
		m[metricHitTokens] = float64(ht) / float64(n)
	}
	_, ct := assembleTop(top[:min(contextK, len(top))], 1<<62)
	m[metricContextTokens] = float64(ct)
	return m
}

// fullQuestion scores q for the full history, the whole haystack in order
// as the context.
func (r *runner) fullQuestion(hc *hayCtx, q question, lab *label) *QuestionSystem {
	qs := &QuestionSystem{Scores: map[string]map[string]float64{}}
	for _, level := range r.levels {
		ev := r.evidence(lab, level)
		if lab.skip != "" || len(ev) == 0 {
			continue
		}
		m := map[string]float64{}
		r.scoreBudgets(m, hc.fullPieces, ev, level, hc, true)
		m[metricContextTokens] = float64(hc.fullTokens)
		r.full[level].add(lab.category, m)
		qs.Scores[level] = m
	}
	if r.cfg.LLM != nil && slices.Contains(r.cfg.LLM.Systems, SystemFull) && lab.skip != "adversarial" {
		r.llmJobs = append(r.llmJobs, r.newLLMJob(SystemFull, q, lab, hc.fullPieces, true))
	}
	return qs
}

// countQuestion counts the question as scored or skipped (and why) at
// every level.
func (r *runner) countQuestion(lab *label) {
	for _, level := range r.levels {
		ev := r.evidence(lab, level)
		switch {
		case lab.skip != "":
			r.skip(level, lab.skip)
		case len(ev) == 0:
			r.skip(level, "no_evidence")
		default:
			r.scored[level]++
		}
	}
}

func (r *runner) skip(level, reason string) {
	m := r.skipped[level]
	if m == nil {
		m = map[string]int{}
		r.skipped[level] = m
	}
	m[reason]++
}

func (r *runner) evidence(l *label, level string) []string {
	if level == LevelSession {
		return l.sessions
	}
	return l.turns
}

// scoreBudgets fills recall_tokens@B and context_tokens_mean@B. For the
// full history (recent) the window is the most recent pieces that fit.
func (r *runner) scoreBudgets(m map[string]float64, ps []piece, ev []string, level string, hc *hayCtx, recent bool) {
	for _, b := range budgets {
		var in []piece
		var tokens int
		if recent {
			var start int
			start, tokens = assembleRecent(ps, b)
			in = ps[start:]
		} else {
			var n int
			n, tokens = assembleTop(ps, b)
			in = ps[:n]
		}
		var found int
		if level == LevelSession {
			found = foundSessions(in, ev, hc.textOf, hc.sessionOf)
		} else {
			found = foundTurns(in, ev, hc.textOf)
		}
		m[budgetRecallName(b)] = float64(found) / float64(len(ev))
		m[budgetTokensName(b)] = float64(tokens)
	}
}

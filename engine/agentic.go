package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// AgentConfig weighs the steps of an agentic search (see searchAgentic).
// DefaultAgentConfig holds the values measured with the evaluation harness
// (docs/retrieval-tuning.md).
type AgentConfig struct {
	// PartWeight and AnchorWeight weigh the rankings of a refined search
	// against the first search's (weight 1) when they are merged: the
	// parts of a compound question, and the query with the best hits'
	// anchors.
	PartWeight, AnchorWeight float64
	// Anchors is how many cue anchors of the first AnchorTop hits a
	// refined query adds.
	Anchors, AnchorTop int
	// ExpandFrom is how many of the best hits an expansion starts from;
	// NeighbourShare and CueShare are the shares of a hit's score the
	// memories reached from it by conversation neighbours and by shared
	// cues inherit, CueLimit how many are reached by cues per hit.
	ExpandFrom               int
	NeighbourShare, CueShare float64
	CueLimit                 int
	// EntityShare and RelationShare are the shares of a hit's score the
	// memories reached through the entity graph inherit: those mentioning
	// the hit's entities, and those of the entities related to them
	// (retrieval.Entities), EntityLimit of them per hit.
	EntityShare, RelationShare float64
	EntityLimit                int
	// ExpandSteps is how many expansions the rules make; each after the
	// first starts from the hits the previous one brought into the first
	// Window places, and only when it brought some.
	ExpandSteps int
	// MinGain stops a search without a chat model once a step's gain
	// (retrieval.Gain over the first Window places) falls below it.
	MinGain float64
	Window  int
}

// DefaultAgentConfig returns the measured defaults: every move of the
// rules off. On LoCoMo's tuning half (conversations 0-4) every move but
// the anchors' refinement lowered recall@10 at every weight tried, and the
// anchors' refinement, neutral there, lowered recall@10 on the held-out
// half (0.800 to 0.794, multi-hop and single-hop questions both lower),
// so without a chat model an agentic search stops after its first search
// ("nothing left to try") and ranks as the one-shot search does. A chat
// model still chooses every move; an engine may weigh the rules' moves in
// with Options.Agent (AnchorWeight 0.8, PartWeight 0.9, NeighbourShare and
// CueShare 0.5 were the values tried). See docs/retrieval-tuning.md,
// round 6. The expansion through the entity graph (EntityShare,
// RelationShare, ExpandSteps 2) moved at most 5 of 776 held-out LoCoMo
// questions, lowering categories 2 and 4, and cut LongMemEval's
// multi-session recall within 2,000 tokens from 1.000 to 0.574, so it is
// off too (round 9).
func DefaultAgentConfig() AgentConfig {
	return AgentConfig{
		Anchors: 4, AnchorTop: 5,
		ExpandFrom: 3, CueLimit: 3, EntityLimit: 3, ExpandSteps: 1,
		MinGain: 0.02, Window: 10,
	}
}

// agent is one agentic search on its way: its plan, the merged ranking,
// the trace and what it has spent.
type agent struct {
	s        *search
	cfg      AgentConfig
	base     retrieval.Config // the plan's configuration before the first search weighed it
	pool     retrieval.Pool
	trace    []engram.AgentStep
	tried    map[string]bool // the rule policy's moves already made
	expanded int             // the rules' expansions made
	shown    []string        // the last step's hits in the first Window places
	expands  bool            // the rules have an expander to follow
	steps    int
	maxSteps int
	calls    int
	maxCalls int
	tokens   int
	maxToks  int
}

// move is an action an agentic step takes, and who chose it why.
type move struct {
	action  string
	queries []string
	by      string
	reason  string
}

// searchAgentic runs a planned search as a loop of steps (see
// engram.ModeAgentic): the first search of the query as asked, then up to
// Steps steps, each chosen by the engine's chat model when it has one and
// calls and tokens are left, else by rules (see agent.rules): REFINE
// searches again with a rewritten query or the parts of a compound
// question, EXPAND follows conversation neighbours and shared cues from
// the best hits, STOP ends the loop. The steps' rankings are merged
// (retrieval.Pool), and the result is cut or assembled from the merged
// ranking as a one-shot search's is, with the trace. Every read stays in
// the search's scope and filter. It fails with the store's, the
// embedder's or the context's error; a chat model's failure or malformed
// reply is no error, the rules choose instead.
func (e *searcher) searchAgentic(ctx context.Context, s *search) (*engram.SearchResult, error) {
	a := e.newAgent(s)
	if err := e.rank(ctx, s); err != nil {
		return nil, err
	}
	a.pool.AddRanking(s.cands, 1)
	a.record(move{engram.ActionSearch, []string{s.req.Query}, "rules", "the query as asked"}, nil)
	for {
		m := e.choose(ctx, a)
		if m.action == engram.ActionStop {
			a.trace = append(a.trace, engram.AgentStep{Action: m.action, By: m.by, Reason: m.reason})
			break
		}
		fresh, err := e.act(ctx, a, m)
		if err != nil {
			return nil, err
		}
		a.steps++
		if gain := a.record(m, fresh); m.by == "rules" && gain < a.cfg.MinGain {
			a.trace = append(a.trace, engram.AgentStep{Action: engram.ActionStop, By: "rules",
				Reason: fmt.Sprintf("the last step's gain %.3f is below %.3f", gain, a.cfg.MinGain)})
			break
		}
	}
	s.cands = a.pool.Ranked()
	res, err := s.result()
	if err != nil {
		return nil, err
	}
	res.Trace, res.LLMCalls, res.LLMTokens = a.trace, a.calls, a.tokens
	e.recordHits(ctx, s, res)
	return res, nil
}

// newAgent starts an agentic search with the request's budgets.
func (e *searcher) newAgent(s *search) *agent {
	a := &agent{s: s, cfg: e.agentCfg, base: s.cfg, tried: map[string]bool{},
		maxSteps: s.req.Steps, maxCalls: s.req.LLMCalls, maxToks: s.req.LLMTokens}
	a.base.Weights = maps.Clone(s.cfg.Weights)
	if a.maxSteps == 0 {
		a.maxSteps = engram.DefaultSteps
	}
	if a.maxCalls == 0 {
		a.maxCalls = a.maxSteps
	}
	if a.maxToks == 0 {
		a.maxToks = engram.DefaultLLMTokens
	}
	if e.chat == nil {
		a.maxCalls = 0
	}
	a.expands = len(e.expanders(a.cfg, false)) > 0
	return a
}

// choose returns the next move: STOP when a budget is spent, else the chat
// model's choice while it may be asked, else the rules'.
func (e *searcher) choose(ctx context.Context, a *agent) move {
	switch {
	case a.steps >= a.maxSteps:
		return move{action: engram.ActionStop, by: "rules", reason: fmt.Sprintf("the step budget of %d is spent", a.maxSteps)}
	case a.maxCalls > 0 && a.tokens >= a.maxToks:
		return move{action: engram.ActionStop, by: "rules", reason: fmt.Sprintf("the LLM token budget of %d is spent", a.maxToks)}
	case a.calls < a.maxCalls:
		m, err := e.askChat(ctx, a)
		if err == nil {
			return m
		}
		r := a.rules()
		r.reason = fmt.Sprintf("%v; the rules chose: %s", err, r.reason)
		return r
	default:
		return a.rules()
	}
}

// rules is the policy without a chat model: the parts of a compound
// question first, then the query with the best hits' anchors, then an
// expansion from the best hits, each once; then STOP.
func (a *agent) rules() move {
	q := a.s.query
	if !a.tried[engram.ActionRefine+"/parts"] && a.cfg.PartWeight > 0 {
		a.tried[engram.ActionRefine+"/parts"] = true
		if parts := retrieval.Clauses(q); parts != nil {
			return move{engram.ActionRefine, parts, "rules", "the question is compound: each part on its own"}
		}
	}
	if !a.tried[engram.ActionRefine+"/anchors"] && a.cfg.AnchorWeight > 0 {
		a.tried[engram.ActionRefine+"/anchors"] = true
		if an := retrieval.Anchors(q, a.pool.Ranked(), a.cfg.AnchorTop, a.cfg.Anchors); len(an) > 0 {
			return move{engram.ActionRefine, []string{q.Text + " " + strings.Join(an, " ")}, "rules", "the best hits' anchors: " + strings.Join(an, ", ")}
		}
	}
	if a.expands && a.expanded == 0 {
		a.expanded++
		return move{engram.ActionExpand, nil, "rules", "the neighbours, cues and entities of the best hits"}
	}
	if a.expands && a.expanded < a.cfg.ExpandSteps && len(a.shown) > 0 {
		a.expanded++
		return move{engram.ActionExpand, nil, "rules", "the neighbours, cues and entities of the last expansion's hits"}
	}
	return move{action: engram.ActionStop, by: "rules", reason: "nothing left to try"}
}

// record appends a step to the trace and returns its gain: the share of
// the first places' score that the memories the step raised hold.
func (a *agent) record(m move, raised []string) float64 {
	ranked := a.pool.Ranked()
	fresh := make(map[string]bool, len(raised))
	for _, id := range raised {
		fresh[id] = true
	}
	window := max(a.cfg.Window, 1)
	gain := retrieval.Gain(ranked, fresh, window)
	var shown []string
	for _, c := range ranked[:min(window, len(ranked))] {
		if fresh[c.Memory.ID] {
			shown = append(shown, c.Memory.ID)
		}
	}
	if m.action == engram.ActionSearch {
		gain = 1
	}
	a.trace = append(a.trace, engram.AgentStep{Action: m.action, Queries: m.queries, New: shown, Gain: gain, By: m.by, Reason: m.reason})
	a.shown = shown
	return gain
}

// act carries out a REFINE or EXPAND move and returns the ids whose merged
// score it raised.
func (e *searcher) act(ctx context.Context, a *agent, m move) ([]string, error) {
	if m.action == engram.ActionExpand {
		return e.expand(ctx, a, m.by == "llm")
	}
	weight := a.cfg.AnchorWeight
	if len(m.queries) > 1 {
		weight = a.cfg.PartWeight
	}
	var raised []string
	for _, q := range m.queries {
		cands, err := e.subRank(ctx, a, q)
		if err != nil {
			return nil, err
		}
		raised = append(raised, a.pool.AddRanking(cands, weight)...)
	}
	return raised, nil
}

// subRank runs the pipeline for query with the agentic search's plan:
// same scope, filter, reference time and channels.
func (e *searcher) subRank(ctx context.Context, a *agent, query string) ([]*retrieval.Candidate, error) {
	sub := &search{req: a.s.req, scope: a.s.scope, k: a.s.k, now: a.s.now, cfg: a.base, channels: a.s.channels}
	sub.req.Query, sub.req.Budget = query, 0
	sub.cfg.Weights = maps.Clone(a.base.Weights)
	if err := e.rank(ctx, sub); err != nil {
		return nil, fmt.Errorf("agentic step %d: %w", a.steps+1, err)
	}
	return sub.cands, nil
}

// expand follows the engine's expanders from the best hits of the merged
// ranking and pools the memories they reach, loaded within the search's
// scope and filter, each with its share of the score of the hit it was
// reached from.
func (e *searcher) expand(ctx context.Context, a *agent, asked bool) ([]string, error) {
	from := a.expandFrom()
	var raised []string
	epoch := e.text.Epoch()
	err := e.store.View(ctx, func(r engram.Reader) error {
		g := retrieval.NewGathering(r, a.s.scope, a.s.req.Filter, a.s.query, &a.s.cfg, a.s.k)
		if err := e.text.Attach(ctx, r, g, epoch); err != nil {
			return err
		}
		var links []retrieval.Link
		for _, x := range e.expanders(a.cfg, asked) {
			ls, err := x.Expand(ctx, g, from)
			if err != nil {
				return fmt.Errorf("expand by %s: %w", x.Name(), err)
			}
			links = append(links, ls...)
		}
		var err error
		raised, err = a.pool.Link(ctx, g, links)
		return err
	})
	return raised, err
}

// expandFrom returns the hits an expansion starts from: the first
// ExpandFrom of the merged ranking, or, after an expansion by the rules,
// those of its hits in the first Window places.
func (a *agent) expandFrom() []*retrieval.Candidate {
	ranked := a.pool.Ranked()
	if a.expanded < 2 || len(a.trace) == 0 || a.trace[len(a.trace)-1].Action != engram.ActionExpand {
		return ranked[:min(a.cfg.ExpandFrom, len(ranked))]
	}
	var from []*retrieval.Candidate
	for _, c := range ranked {
		if slices.Contains(a.shown, c.Memory.ID) && len(from) < a.cfg.ExpandFrom {
			from = append(from, c)
		}
	}
	return from
}

// expanders returns the expanders an expansion follows: conversation
// neighbours and shared cues when their shares are above zero (or, for an
// expansion the chat model asked for, at LLMExpandShare when they are
// not), then those added with Options.Expanders (a graph of entities and
// relations, when one exists).
func (e *searcher) expanders(cfg AgentConfig, asked bool) []retrieval.Expander {
	nb, cue := cfg.NeighbourShare, cfg.CueShare
	if asked {
		nb, cue = cmp.Or(nb, LLMExpandShare), cmp.Or(cue, LLMExpandShare)
	}
	var xs []retrieval.Expander
	if nb > 0 {
		xs = append(xs, retrieval.Neighbours{Share: nb})
	}
	if cue > 0 && cfg.CueLimit > 0 {
		xs = append(xs, retrieval.Cues{Share: cue, Limit: cfg.CueLimit})
	}
	if (cfg.EntityShare > 0 || cfg.RelationShare > 0) && cfg.EntityLimit > 0 {
		xs = append(xs, retrieval.Entities{MentionShare: cfg.EntityShare, RelationShare: cfg.RelationShare, Limit: cfg.EntityLimit})
	}
	return append(xs, e.extraExpanders...)
}

// LLMExpandShare is the share of a hit's score the memories an expansion
// asked for by the chat model reach inherit, where the configuration's
// shares are 0.
const LLMExpandShare = 0.5

// checkMode checks a request's mode and agentic budgets (see
// engram.SearchRequest.ValidateMode).
func checkMode(req engram.SearchRequest) error { return req.ValidateMode() }

package engine

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
)

// StageFormerGraph adds to the graph, in tx, what the LLM former read in
// m (entity.FromFormer): its entities, resolved like the rule-extracted
// ones and typed by the model, as mentions of m; and its labelled
// relations, each supported by m, valid in event time from the model's
// valid_from (else m's event time) to its valid_to. A current relation
// with the same ends and label gains m as evidence (and the model's end,
// when it gives one) instead of a second relation being made. Mentions are
// added, never removed: the write path calls it after stageGraph, which
// keeps the rule-extracted mentions exactly. A memory without the former's
// entities, a store without a graph, or a memory that is not active cost
// nothing. It fails with the store's error.
func (e *Engine) StageFormerGraph(ctx context.Context, tx engram.Tx, m *engram.Memory) error {
	cands, rels := entity.FromFormer(m)
	gw, ok := tx.(engram.GraphWriter)
	if !ok || len(cands) == 0 || m.Status != engram.StatusActive || m.Kind == engram.KindVault {
		return nil
	}
	gr, ok := tx.(engram.GraphReader)
	if !ok {
		return nil
	}
	g := graphTx{r: gr, w: gw, owner: engram.EntityOwner(m.Namespace), now: e.clock()}
	g.scope = engram.ScopeOf(g.owner)
	ids := make(map[string]string, len(cands))
	at := eventTime(m)
	for _, c := range cands {
		got, err := g.resolveAll(ctx, []entity.Candidate{c})
		if err != nil {
			return err
		}
		ids[c.Name] = got[0]
		if err := gw.PutMention(ctx, engram.Mention{EntityID: got[0], MemoryID: m.ID, Namespace: g.owner, At: at}); err != nil {
			return err
		}
	}
	for _, l := range rels {
		if err := g.labelled(ctx, m, ids[l.Source], ids[l.Target], l); err != nil {
			return err
		}
	}
	return nil
}

// labelled records that m supports the relation l from src to tgt.
func (g *graphTx) labelled(ctx context.Context, m *engram.Memory, src, tgt string, l entity.Labelled) error {
	if src == tgt { // two names the resolver took for one entity
		return nil
	}
	ev := engram.Evidence{MemoryID: m.ID, Weight: weightSameMemory}
	rs, err := g.r.Relations(ctx, g.scope, []string{src}, engram.RelationFilter{With: tgt, Label: l.Label, Limit: engram.MaxEntityLimit})
	if err != nil {
		return err
	}
	for i := range rs {
		r := &rs[i]
		if r.Source != src || !r.Current() {
			continue
		}
		if l.InvalidAt == nil || r.InvalidAt != nil {
			return g.w.AddEvidence(ctx, g.owner, r.ID, ev)
		}
		r.InvalidAt = l.InvalidAt
		if r.ValidAt != nil && r.InvalidAt.Before(*r.ValidAt) {
			r.InvalidAt = r.ValidAt
		}
		if !containsEvidence(r.Evidence, m.ID) && len(r.Evidence) < engram.MaxSources {
			r.Evidence = append(r.Evidence, ev)
		}
		return g.w.PutRelation(ctx, r)
	}
	valid := l.ValidAt
	if valid == nil {
		t := eventTime(m)
		valid = &t
		if l.InvalidAt != nil && l.InvalidAt.Before(t) { // it ended before m was said: its start is not known
			valid = nil
		}
	}
	return g.w.PutRelation(ctx, &engram.Relation{
		ID: engram.NewID(), Namespace: g.owner, Source: src, Target: tgt, Label: l.Label,
		ValidAt: valid, InvalidAt: l.InvalidAt, CreatedAt: g.now, Evidence: []engram.Evidence{ev},
	})
}

func containsEvidence(evs []engram.Evidence, id string) bool {
	for _, ev := range evs {
		if ev.MemoryID == id {
			return true
		}
	}
	return false
}

package engine

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
)

// The LLM former (package llmformer) leaves on a memory the entities and
// labelled relations it read (entity.FromFormer). stageGraph resolves
// those entities with the rule-extracted ones, so that a memory's
// mentions stay exactly what was read in it, and then gives the memory as
// evidence to each labelled relation: valid in event time from the
// model's valid_from (else the memory's event time) to its valid_to. A
// current relation with the same ends and label gains the memory as
// evidence (and the model's end, when it gives one) instead of a second
// relation being made. Labelled relations a memory stops supporting keep
// it as evidence.

// labelled records that m supports the relation l from src to tgt.
func (g *graphTx) labelled(ctx context.Context, m *engram.Memory, src, tgt string, l entity.Labelled) error {
	if src == tgt { // two names the resolver took for one entity
		return nil
	}
	ev := engram.Evidence{MemoryID: m.ID, Weight: weightSameMemory}
	rs, err := g.tx.Relations(ctx, g.scope, []string{src}, engram.RelationFilter{With: tgt, Label: l.Label, Limit: engram.MaxEntityLimit})
	if err != nil {
		return err
	}
	for i := range rs {
		r := &rs[i]
		if r.Source != src || !r.Current() {
			continue
		}
		if l.InvalidAt == nil || r.InvalidAt != nil {
			return g.tx.AddEvidence(ctx, g.owner, r.ID, ev)
		}
		r.InvalidAt = l.InvalidAt
		if r.ValidAt != nil && r.InvalidAt.Before(*r.ValidAt) {
			r.InvalidAt = r.ValidAt
		}
		if !containsEvidence(r.Evidence, m.ID) && len(r.Evidence) < engram.MaxSources {
			r.Evidence = append(r.Evidence, ev)
		}
		return g.tx.PutRelation(ctx, r)
	}
	valid := l.ValidAt
	if valid == nil {
		t := eventTime(m)
		valid = &t
		if l.InvalidAt != nil && l.InvalidAt.Before(t) { // it ended before m was said: its start is not known
			valid = nil
		}
	}
	return g.tx.PutRelation(ctx, &engram.Relation{
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

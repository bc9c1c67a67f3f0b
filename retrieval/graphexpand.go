package retrieval

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// ChannelEntity names the memories an agentic search reached through the
// entity graph from its best hits.
const ChannelEntity = "entity"

// Entities is the Expander of the entity graph: from each hit, the
// entities it mentions (but hubs, see GraphHub), then the memories that
// mention them too (each inheriting MentionShare of the hit's score) and
// the memories of the entities related to them (RelationShare times the
// relation's weight relative to the heaviest one read), each divided by
// the square root of the entity's mentions and by a recency factor
// between 0.8 and 1 (as the graph channel does). At most Limit memories
// per hit are followed.
type Entities struct {
	MentionShare, RelationShare float64
	Limit                       int
}

// entityRelations is how many relations per hit an expansion reads.
const entityRelations = 40

// Name implements Expander.
func (Entities) Name() string { return ChannelEntity }

// Expand implements Expander. It fails with the store's error.
func (x Entities) Expand(ctx context.Context, g *Gathering, from []*Candidate) ([]Link, error) {
	if x.Limit <= 0 || len(from) == 0 {
		return nil, nil
	}
	gr := graphOf(g)
	s := engram.EntityScope(g.Scope)
	ids := make([]string, len(from))
	for i, c := range from {
		ids[i] = c.Memory.ID
	}
	mentions, err := gr.MemoryMentions(ctx, s, ids)
	if err != nil {
		return nil, err
	}
	byHit := map[string][]string{}
	for _, m := range mentions {
		byHit[m.MemoryID] = append(byHit[m.MemoryID], m.EntityID)
	}
	r := entityReader{gr: gr, s: s, memo: map[string][]engram.Mention{}}
	var out []Link
	for _, c := range from {
		scores, err := x.reach(ctx, &r, byHit[c.Memory.ID])
		if err != nil {
			return nil, err
		}
		delete(scores, c.Memory.ID)
		for _, id := range best(scores, x.Limit) {
			out = append(out, Link{ID: id, From: c.Memory.ID, Via: ChannelEntity, Share: scores[id]})
		}
	}
	return out, nil
}

// reach scores the memories one hit's entities lead to.
func (x Entities) reach(ctx context.Context, r *entityReader, entities []string) (map[string]float64, error) {
	scores := map[string]float64{}
	var live []string
	for _, id := range entities {
		ms, err := r.mentions(ctx, id)
		if err != nil {
			return nil, err
		}
		if ms == nil {
			continue
		}
		live = append(live, id)
		if x.MentionShare > 0 {
			addMentions(scores, ms, x.MentionShare)
		}
	}
	if x.RelationShare <= 0 || len(live) == 0 {
		return scores, nil
	}
	rels, err := r.gr.Relations(ctx, r.s, live, engram.RelationFilter{Limit: entityRelations, NoEvidence: true})
	if err != nil {
		return nil, err
	}
	heaviest := 0.0
	for _, rel := range rels {
		heaviest = max(heaviest, rel.Weight)
	}
	for _, rel := range rels {
		other := rel.Target
		if slices.Contains(live, other) {
			other = rel.Source
		}
		if slices.Contains(live, other) || heaviest <= 0 {
			continue
		}
		ms, err := r.mentions(ctx, other)
		if err != nil {
			return nil, err
		}
		addMentions(scores, ms, x.RelationShare*rel.Weight/heaviest)
	}
	return scores, nil
}

// addMentions raises the score of each mentioned memory to share divided
// by the square root of the entity's mentions, times a recency factor
// between 0.8 and 1 over the mentions (newest first).
func addMentions(scores map[string]float64, ms []engram.Mention, share float64) {
	if len(ms) == 0 {
		return
	}
	base := share / math.Sqrt(float64(len(ms)))
	newest, oldest := ms[0].At, ms[len(ms)-1].At
	span := newest.Sub(oldest)
	for _, m := range ms {
		v := base * recency(newest, m.At, span)
		scores[m.MemoryID] = max(scores[m.MemoryID], v)
	}
}

// recency is 1 for the newest mention and 0.8 for the oldest.
func recency(newest, at time.Time, span time.Duration) float64 {
	if span <= 0 {
		return 1
	}
	return 0.8 + 0.2*(1-float64(newest.Sub(at))/float64(span))
}

// best returns the n ids with the highest scores (ties by id).
func best(scores map[string]float64, n int) []string {
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(scores[b], scores[a]), strings.Compare(a, b))
	})
	return ids[:min(n, len(ids))]
}

// entityReader reads each entity's mentions once per expansion; a hub's
// (more than GraphHub mentions) read as nil.
type entityReader struct {
	gr   graphReads
	s    engram.Scope
	memo map[string][]engram.Mention
}

func (r *entityReader) mentions(ctx context.Context, id string) ([]engram.Mention, error) {
	if ms, ok := r.memo[id]; ok {
		return ms, nil
	}
	ms, err := r.gr.EntityMentions(ctx, r.s, []string{id}, GraphHub+1)
	if err != nil {
		return nil, err
	}
	if len(ms) > GraphHub {
		ms = nil
	} else if ms == nil {
		ms = []engram.Mention{}
	}
	r.memo[id] = ms
	return ms, nil
}

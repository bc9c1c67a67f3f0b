package engine

import (
	"context"
	"slices"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
	"github.com/engramhq/engram/lang"
)

// The entity graph is kept in the transaction that writes a memory: every
// memory inserted or replaced has its entities extracted and resolved
// (package entity), its mentions replaced, and the co-occurrence relations
// it supports brought up to date. A store without engram.GraphWriter
// keeps no graph; nothing else changes.

// maxRelationEntities bounds the entities of one memory that relations are
// made between: n of them make n(n-1)/2 pairs.
const maxRelationEntities = 6

// maxEvidence is the most memories recorded as a relation's evidence: its
// weight saturates there, and a write never rewrites more.
const maxEvidence = 32

// candidatePool is how many entities sharing a word with a memory's names
// are read as candidates of fuzzy resolution.
const candidatePool = 64

// stageGraph brings the graph up to date with m, written in tx; old is
// the memory as it was before (nil for a new one). A change that leaves
// what extraction reads (value, cues, speaker, kind, status) alone costs
// nothing. It fails with the store's error.
func (e *Engine) stageGraph(ctx context.Context, tx engram.Tx, old, m *engram.Memory, now time.Time) error {
	gw, ok := tx.(engram.GraphWriter)
	if !ok {
		return nil
	}
	gr, ok := tx.(engram.GraphReader)
	if !ok || old != nil && sameForGraph(old, m) {
		return nil
	}
	g := graphTx{r: gr, w: gw, owner: engram.EntityOwner(m.Namespace), now: now}
	g.scope = engram.ScopeOf(g.owner)
	live := m.Status == engram.StatusActive && m.Kind != engram.KindVault
	var ids []string
	if live {
		known, err := g.known(ctx, m.Value)
		if err != nil {
			return err
		}
		if ids, err = g.resolveAll(ctx, entity.Extract(m, known)); err != nil {
			return err
		}
		if err := g.mention(ctx, m, ids, old == nil); err != nil {
			return err
		}
	}
	return g.relate(ctx, m, ids, old == nil)
}

// sameForGraph reports whether a and b read the same to extraction.
func sameForGraph(a, b *engram.Memory) bool {
	return a.Value == b.Value && a.Kind == b.Kind && a.Status == b.Status && slices.Equal(a.Cues, b.Cues) &&
		speaker(a) == speaker(b) && eventTime(a).Equal(eventTime(b))
}

// speaker is m's speaker, "" when it has none or a client stored
// something else than a string under the key.
func speaker(m *engram.Memory) string {
	s, _ := m.Metadata[engram.MetaSpeaker].(string)
	return s
}

// eventTime is when what m says happened: its valid_from, else its
// creation.
func eventTime(m *engram.Memory) time.Time {
	if m.ValidFrom != nil {
		return *m.ValidFrom
	}
	return m.CreatedAt
}

// graphTx is the graph of one owner within one transaction.
type graphTx struct {
	r     engram.GraphReader
	w     engram.GraphWriter
	owner engram.Namespace
	scope engram.Scope
	now   time.Time
}

// known returns the name keys of the words of text that only count as
// names when known (entity.Openers) and resolve to one of the owner's
// entities ("Juergen" opening a sentence, when Jürgen is known).
func (g *graphTx) known(ctx context.Context, text string) (map[string]bool, error) {
	words := entity.Openers(text)
	if len(words) == 0 {
		return nil, nil
	}
	var toks []string
	for _, w := range words {
		toks = append(toks, entity.Tokens(entity.Candidate{Name: w})...)
	}
	pool, err := g.r.EntitiesByToken(ctx, g.scope, toks, candidatePool)
	if err != nil || len(pool) == 0 {
		return nil, err
	}
	known := map[string]bool{}
	for _, w := range words {
		if ent, _ := entity.Resolve(entity.Candidate{Name: w}, pool); ent != nil {
			known[lang.NameKey(w)] = true
		}
	}
	return known, nil
}

// resolveAll returns the ids of the entities cands name, each once,
// creating those that are new and recording new names as aliases. The
// candidates of resolution are read in two queries: the exact names, and
// the entities sharing a word with one of them.
func (g *graphTx) resolveAll(ctx context.Context, cands []entity.Candidate) ([]string, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	var keys, toks []string
	for _, c := range cands {
		keys = append(keys, engram.NormalizeName(c.Name))
		toks = append(toks, entity.Tokens(c)...)
	}
	pool, err := g.r.FindEntities(ctx, g.scope, keys)
	if err != nil {
		return nil, err
	}
	fuzzy, err := g.r.EntitiesByToken(ctx, g.scope, toks, candidatePool)
	if err != nil {
		return nil, err
	}
	for _, f := range fuzzy {
		if !slices.ContainsFunc(pool, func(p engram.Entity) bool { return p.ID == f.ID }) {
			pool = append(pool, f)
		}
	}
	var ids []string
	for _, c := range cands {
		ent, err := g.resolve(ctx, c, &pool)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, ent.ID) {
			ids = append(ids, ent.ID)
		}
	}
	return ids, nil
}

// resolve returns the entity of pool that c names, updated with c's name
// as an alias and its type when it had none, or a new entity added to
// pool.
func (g *graphTx) resolve(ctx context.Context, c entity.Candidate, pool *[]engram.Entity) (*engram.Entity, error) {
	if ent, _ := entity.Resolve(c, *pool); ent != nil {
		changed := false
		if k := engram.NormalizeName(c.Name); !slices.Contains(ent.Keys(), k) && len(ent.Aliases) < engram.MaxAliases {
			ent.Aliases = append(ent.Aliases, c.Name)
			changed = true
		}
		if ent.Type == "" && c.Type != "" {
			ent.Type, changed = c.Type, true
		}
		if changed {
			ent.UpdatedAt = g.now
			if err := g.w.PutEntity(ctx, ent); err != nil {
				return nil, err
			}
		}
		return ent, nil
	}
	ent := engram.Entity{
		ID: engram.NewID(), Namespace: g.owner, Name: c.Name, Norm: engram.NormalizeName(c.Name), Type: c.Type,
		Status: engram.EntityActive, CreatedAt: g.now, UpdatedAt: g.now,
	}
	if err := g.w.PutEntity(ctx, &ent); err != nil {
		return nil, err
	}
	*pool = append(*pool, ent)
	return &(*pool)[len(*pool)-1], nil
}

// mention makes m's mentions exactly ids; fresh says m is new.
func (g *graphTx) mention(ctx context.Context, m *engram.Memory, ids []string, fresh bool) error {
	var had []engram.Mention
	if !fresh { // a new memory has none
		var err error
		if had, err = g.r.MemoryMentions(ctx, g.scope, []string{m.ID}); err != nil {
			return err
		}
	}
	for _, h := range had {
		if !slices.Contains(ids, h.EntityID) {
			if err := g.w.DeleteMention(ctx, g.owner, h.EntityID, m.ID); err != nil {
				return err
			}
		}
	}
	at := eventTime(m)
	for _, id := range ids {
		if i := slices.IndexFunc(had, func(h engram.Mention) bool { return h.EntityID == id }); i >= 0 && had[i].At.Equal(at) {
			continue
		}
		if err := g.w.PutMention(ctx, engram.Mention{EntityID: id, MemoryID: m.ID, Namespace: g.owner, At: at}); err != nil {
			return err
		}
	}
	return nil
}

// relate makes the current co-occurrence relations m (new when fresh) supports exactly
// those between the first maxRelationEntities of ids. A relation m no
// longer supports loses it as evidence; one left with no other is
// invalidated: its event time ends when m stopped holding (m's valid_to,
// else now) and it expires now in transaction time, keeping m as its last
// evidence. Only relations m supports are considered, so invalidation
// only ever touches relations that share an entity with m.
func (g *graphTx) relate(ctx context.Context, m *engram.Memory, ids []string, fresh bool) error {
	ids = ids[:min(len(ids), maxRelationEntities)]
	var cur []engram.Relation
	if !fresh { // a new memory supports none
		var err error
		cur, err = g.r.Relations(ctx, g.scope, nil, engram.RelationFilter{Memory: m.ID, Label: engram.RelationCoOccurs, Limit: engram.MaxEntityLimit})
		if err != nil {
			return err
		}
	}
	covered := map[[2]string]bool{}
	for i := range cur {
		r := &cur[i]
		if slices.Contains(ids, r.Source) && slices.Contains(ids, r.Target) {
			covered[pairOf(r.Source, r.Target)] = true
			continue
		}
		if err := g.withdraw(ctx, r, m); err != nil {
			return err
		}
	}
	return g.supportAll(ctx, ids, covered, m)
}

func pairOf(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// withdraw removes m from r's evidence, invalidating r when m was all of
// it.
func (g *graphTx) withdraw(ctx context.Context, r *engram.Relation, m *engram.Memory) error {
	rest := slices.DeleteFunc(slices.Clone(r.Evidence), func(ev engram.Evidence) bool { return ev.MemoryID == m.ID })
	if len(rest) > 0 {
		r.Evidence = rest
	} else {
		end := g.now
		if m.ValidTo != nil {
			end = *m.ValidTo
		}
		if r.ValidAt != nil && end.Before(*r.ValidAt) {
			end = *r.ValidAt
		}
		r.InvalidAt, r.ExpiredAt = &end, &g.now
	}
	return g.w.PutRelation(ctx, r)
}

// supportAll adds m as evidence of the current relation between every
// pair of ids not yet covered, making those there are none of. The
// existing relations among ids are read in one query.
func (g *graphTx) supportAll(ctx context.Context, ids []string, covered map[[2]string]bool, m *engram.Memory) error {
	if len(ids) < 2 {
		return nil
	}
	rs, err := g.r.Relations(ctx, g.scope, ids, engram.RelationFilter{Within: true, Label: engram.RelationCoOccurs, Limit: engram.MaxEntityLimit})
	if err != nil {
		return err
	}
	byPair := make(map[[2]string]*engram.Relation, len(rs))
	for i := range rs {
		byPair[pairOf(rs[i].Source, rs[i].Target)] = &rs[i]
	}
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			if p := pairOf(a, b); !covered[p] {
				if err := g.support(ctx, p, byPair[p], m); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// support adds m as evidence of r, the current relation between the pair,
// or makes it when r is nil.
func (g *graphTx) support(ctx context.Context, p [2]string, r *engram.Relation, m *engram.Memory) error {
	at := eventTime(m)
	ev := engram.Evidence{MemoryID: m.ID, Weight: 1}
	if r != nil {
		if len(r.Evidence) >= maxEvidence {
			return nil // enough evidence; the weight saturates
		}
		if r.ValidAt != nil && !at.Before(*r.ValidAt) {
			return g.w.AddEvidence(ctx, g.owner, r.ID, ev)
		}
		r.ValidAt = &at
	} else {
		r = &engram.Relation{
			ID: engram.NewID(), Namespace: g.owner, Source: p[0], Target: p[1], Label: engram.RelationCoOccurs,
			ValidAt: &at, CreatedAt: g.now,
		}
	}
	r.Evidence = append(r.Evidence, ev)
	return g.w.PutRelation(ctx, r)
}

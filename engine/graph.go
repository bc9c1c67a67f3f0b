package engine

import (
	"cmp"
	"context"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
	"github.com/engramhq/engram/lang"
)

// The entity graph is kept in the transaction that writes a memory: every
// memory inserted or replaced has its entities extracted and resolved
// (package entity; with those the LLM former read in it), its mentions
// replaced, the co-occurrence relations it supports brought up to date,
// and the former's labelled relations given it as evidence.

// maxRelationEntities bounds the entities of one memory that relations are
// made between: n of them make n(n-1)/2 pairs.
const maxRelationEntities = 6

// maxEvidence is where a relation's weight saturates: no memory is added
// to its evidence once the weight reaches it (so it holds at most
// maxEvidence/weightNextTurn memories, and a write rewrites no more).
const maxEvidence = 32

// candidatePool is how many entities sharing a word with a memory's names
// are read as candidates of fuzzy resolution.
const candidatePool = 64

// stageGraph brings the graph up to date with m, written in tx; old is
// the memory as it was before (nil for a new one). A change that leaves
// what extraction reads (value, cues, speaker, kind, status) alone costs
// nothing. It fails with the store's error.
func (e *writer) stageGraph(ctx context.Context, tx engram.Tx, old, m *engram.Memory, now time.Time) error {
	if old != nil && sameForGraph(old, m) {
		return nil
	}
	return e.reconcileGraph(ctx, tx, m, old == nil, now)
}

// reconcileGraph makes the graph hold exactly what m says: its mentions
// and the relations it supports, read first unless fresh (m is new and
// has none). It fails with the store's error.
func (e *writer) reconcileGraph(ctx context.Context, tx engram.Tx, m *engram.Memory, fresh bool, now time.Time) error {
	if e.noGraph {
		return nil
	}
	g := graphTx{tx: tx, owner: engram.EntityOwner(m.Namespace), now: now}
	g.scope = engram.ScopeOf(g.owner)
	live := m.Status == engram.StatusActive && m.Kind != engram.KindVault
	var (
		ids      []string
		byName   map[string]string
		labelled []entity.Labelled
	)
	if live {
		known, err := g.known(ctx, m.Value)
		if err != nil {
			return err
		}
		formed, rels := entity.FromFormer(m)
		cands := withFormed(entity.Extract(m, known), formed)
		if ids, byName, err = g.resolveAll(ctx, cands); err != nil {
			return err
		}
		if err := g.mention(ctx, m, ids, fresh); err != nil {
			return err
		}
		labelled = rels
	}
	want, err := g.wanted(ctx, m, ids)
	if err != nil {
		return err
	}
	if err := g.relate(ctx, m, want, fresh); err != nil {
		return err
	}
	for _, l := range labelled {
		src, tgt := byName[engram.NormalizeName(l.Source)], byName[engram.NormalizeName(l.Target)]
		if src == "" || tgt == "" {
			continue
		}
		if err := g.labelled(ctx, m, src, tgt, l); err != nil {
			return err
		}
	}
	return nil
}

// withFormed returns the rule-extracted candidates followed by those of
// the LLM former (entity.FromFormer) that name something else; a name
// both found takes the former's type, unless the former gave none.
func withFormed(extracted, formed []entity.Candidate) []entity.Candidate {
	if len(formed) == 0 {
		return extracted
	}
	out := slices.Clone(extracted)
	at := make(map[string]int, len(out))
	for i, c := range out {
		at[engram.NormalizeName(c.Name)] = i
	}
	for _, f := range formed {
		i, ok := at[engram.NormalizeName(f.Name)]
		switch {
		case !ok:
			at[engram.NormalizeName(f.Name)] = len(out)
			out = append(out, f)
		case f.Type != engram.EntityThing || out[i].Type == "":
			out[i].Type = f.Type
		}
	}
	return out
}

// Evidence weights: two entities named in one memory, and two named in
// neighbouring turns of a conversation (the memory and the one its
// MetaPrev names), a weaker sign.
const (
	weightSameMemory = 1
	weightNextTurn   = 0.25
	maxNextTurnPairs = 8
)

// wanted returns the pairs of entities m supports with their weights:
// every pair of the first maxRelationEntities of ids, and up to
// maxNextTurnPairs pairs of one of ids with an entity of the turn before
// (none when ids is empty: m is not live).
func (g *graphTx) wanted(ctx context.Context, m *engram.Memory, ids []string) (map[[2]string]float64, error) {
	ids = ids[:min(len(ids), maxRelationEntities)]
	want := map[[2]string]float64{}
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			want[pairOf(a, b)] = weightSameMemory
		}
	}
	prev, _ := m.Metadata[engram.MetaPrev].(string)
	if len(ids) == 0 || !engram.ValidID(prev) {
		return want, nil
	}
	ms, err := g.tx.MemoryMentions(ctx, g.scope, []string{prev})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, a := range ids {
		for _, mn := range ms {
			p := pairOf(a, mn.EntityID)
			if _, ok := want[p]; ok || a == mn.EntityID || n >= maxNextTurnPairs {
				continue
			}
			want[p] = weightNextTurn
			n++
		}
	}
	return want, nil
}

// sameForGraph reports whether a and b read the same to extraction.
func sameForGraph(a, b *engram.Memory) bool {
	return a.Value == b.Value && a.Kind == b.Kind && a.Status == b.Status && slices.Equal(a.Cues, b.Cues) &&
		speaker(a) == speaker(b) && eventTime(a).Equal(eventTime(b)) &&
		reflect.DeepEqual(a.Metadata[entity.MetaEntities], b.Metadata[entity.MetaEntities]) &&
		reflect.DeepEqual(a.Metadata[entity.MetaRelations], b.Metadata[entity.MetaRelations])
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
	tx    engram.Tx
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
	pool, err := g.tx.EntitiesByToken(ctx, g.scope, toks, candidatePool)
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

// resolveAll returns the ids of the entities cands name, each once, and
// the id each candidate's normalised name resolved to, creating those that are new
// and recording new names as aliases. The candidates of resolution are
// read in two queries: the exact names, and the entities sharing a word
// with one of them.
func (g *graphTx) resolveAll(ctx context.Context, cands []entity.Candidate) ([]string, map[string]string, error) {
	if len(cands) == 0 {
		return nil, nil, nil
	}
	var keys, toks []string
	for _, c := range cands {
		keys = append(keys, engram.NormalizeName(c.Name))
		toks = append(toks, entity.Tokens(c)...)
	}
	pool, err := g.tx.FindEntities(ctx, g.scope, keys)
	if err != nil {
		return nil, nil, err
	}
	fuzzy, err := g.tx.EntitiesByToken(ctx, g.scope, toks, candidatePool)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range fuzzy {
		if !slices.ContainsFunc(pool, func(p engram.Entity) bool { return p.ID == f.ID }) {
			pool = append(pool, f)
		}
	}
	var ids []string
	byName := make(map[string]string, len(cands))
	for _, c := range cands {
		ent, err := g.resolve(ctx, c, &pool)
		if err != nil {
			return nil, nil, err
		}
		byName[engram.NormalizeName(c.Name)] = ent.ID
		if !slices.Contains(ids, ent.ID) {
			ids = append(ids, ent.ID)
		}
	}
	return ids, byName, nil
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
			if err := g.tx.PutEntity(ctx, ent); err != nil {
				return nil, err
			}
		}
		return ent, nil
	}
	ent := engram.Entity{
		ID: engram.NewID(), Namespace: g.owner, Name: c.Name, Norm: engram.NormalizeName(c.Name), Type: c.Type,
		Status: engram.EntityActive, CreatedAt: g.now, UpdatedAt: g.now,
	}
	if err := g.tx.PutEntity(ctx, &ent); err != nil {
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
		if had, err = g.tx.MemoryMentions(ctx, g.scope, []string{m.ID}); err != nil {
			return err
		}
	}
	for _, h := range had {
		if !slices.Contains(ids, h.EntityID) {
			if err := g.tx.DeleteMention(ctx, g.owner, h.EntityID, m.ID); err != nil {
				return err
			}
		}
	}
	at := eventTime(m)
	for _, id := range ids {
		if i := slices.IndexFunc(had, func(h engram.Mention) bool { return h.EntityID == id }); i >= 0 && had[i].At.Equal(at) {
			continue
		}
		if err := g.tx.PutMention(ctx, engram.Mention{EntityID: id, MemoryID: m.ID, Namespace: g.owner, At: at}); err != nil {
			return err
		}
	}
	return nil
}

// relate makes the current co-occurrence relations m (new when fresh)
// supports exactly the pairs of want. A relation m no longer supports
// loses it as evidence; one left with no other is invalidated: its event
// time ends when m stopped holding (m's valid_to, else now) and it expires
// now in transaction time, keeping m as its last evidence. Only relations
// m supports are considered, so invalidation only ever touches relations
// that share an entity with m.
func (g *graphTx) relate(ctx context.Context, m *engram.Memory, want map[[2]string]float64, fresh bool) error {
	var cur []engram.Relation
	if !fresh { // a new memory supports none
		var err error
		cur, err = g.tx.Relations(ctx, g.scope, nil, engram.RelationFilter{Memory: m.ID, Label: engram.RelationCoOccurs, Limit: engram.MaxEntityLimit})
		if err != nil {
			return err
		}
	}
	covered := map[[2]string]bool{}
	for i := range cur {
		r := &cur[i]
		if p := pairOf(r.Source, r.Target); want[p] > 0 {
			covered[p] = true
			continue
		}
		if err := g.withdraw(ctx, r, m); err != nil {
			return err
		}
	}
	return g.supportAll(ctx, want, covered, m)
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
	return g.tx.PutRelation(ctx, r)
}

// supportAll adds m as evidence of the current relation of every pair of
// want not yet covered, making those there are none of. The existing
// relations among the pairs' entities are read in one query.
func (g *graphTx) supportAll(ctx context.Context, want map[[2]string]float64, covered map[[2]string]bool, m *engram.Memory) error {
	var ids []string
	for p := range want {
		for _, id := range p {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) < 2 {
		return nil
	}
	rs, err := g.tx.Relations(ctx, g.scope, ids, engram.RelationFilter{Within: true, Label: engram.RelationCoOccurs, NoEvidence: true, Limit: engram.MaxEntityLimit})
	if err != nil {
		return err
	}
	byPair := make(map[[2]string]*engram.Relation, len(rs))
	for i := range rs {
		byPair[pairOf(rs[i].Source, rs[i].Target)] = &rs[i]
	}
	pairs := slices.SortedFunc(maps.Keys(want), func(a, b [2]string) int { return cmp.Compare(a[0]+a[1], b[0]+b[1]) })
	var puts []*engram.Relation
	for _, p := range pairs {
		if covered[p] {
			continue
		}
		put, err := g.support(ctx, p, byPair[p], m, want[p])
		if err != nil {
			return err
		}
		if put != nil {
			puts = append(puts, put)
		}
	}
	return g.putRelations(ctx, puts)
}

// support adds m as evidence of weight to r, the current relation between
// the pair, or makes it when r is nil. It returns the relation to put
// when the relation is new or rewritten whole, nil when evidence was
// added or none was needed.
func (g *graphTx) support(ctx context.Context, p [2]string, r *engram.Relation, m *engram.Memory, weight float64) (*engram.Relation, error) {
	at := eventTime(m)
	ev := engram.Evidence{MemoryID: m.ID, Weight: weight}
	if r != nil {
		if r.Weight >= maxEvidence {
			return nil, nil // enough evidence; the weight saturates
		}
		if r.ValidAt != nil && !at.Before(*r.ValidAt) {
			return nil, g.tx.AddEvidence(ctx, g.owner, r.ID, ev)
		}
		// An earlier event time: the relation is rewritten, read whole.
		full, err := g.tx.Relations(ctx, g.scope, []string{p[0]}, engram.RelationFilter{With: p[1], Label: engram.RelationCoOccurs, Limit: 1})
		if err != nil || len(full) == 0 {
			return nil, err
		}
		r = &full[0]
		r.ValidAt = &at
	} else {
		r = &engram.Relation{
			ID: engram.NewID(), Namespace: g.owner, Source: p[0], Target: p[1], Label: engram.RelationCoOccurs,
			ValidAt: &at, CreatedAt: g.now,
		}
	}
	r.Evidence = append(r.Evidence, ev)
	return r, nil
}

// putRelations stores rs in one call. It fails with the store's error.
func (g *graphTx) putRelations(ctx context.Context, rs []*engram.Relation) error {
	if len(rs) == 0 {
		return nil
	}
	return g.tx.PutRelations(ctx, rs)
}

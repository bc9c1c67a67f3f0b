package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/community"
	"github.com/engramhq/engram/openai"
)

var _ engram.CommunityService = (*Engine)(nil)

// Communities (package community) are refreshed, not kept in step with
// every write: the store marks the ends of every relation that changes
// dirty, and a refresh recomputes only the connected components that hold
// a dirty entity, which gives what a full recomputation gives because
// label propagation runs on each component alone. It runs on request
// (RefreshCommunities) and on a timer (StartCommunityRefresher).

// Community refresh bounds.
const (
	// communityMentions is how many mentions of a community's members
	// are read to choose the memories its summary quotes.
	communityMentions = 500
	// communityCandidates is how many of those memories are read.
	communityCandidates = 20
	// refreshOwners is how many users one timer tick refreshes.
	refreshOwners = 100
)

// RefreshCommunities implements engram.CommunityService. The scope names
// the user (agent and session are refused: communities span them). The
// communities are written in one transaction; with Options.LLM each new
// one then gets an abstract, in a transaction of its own (a model's
// failure is logged, and the extractive summary stays).
func (e *graphs) RefreshCommunities(ctx context.Context, s engram.Scope, full bool) (*engram.RefreshResult, error) {
	s, err := writeScope(s)
	if err != nil {
		return nil, err
	}
	if narrowed(s) {
		return nil, engram.Errorf(engram.EINVALID, "communities belong to a user across agents and sessions: refresh them with a scope that names neither")
	}
	return e.refreshCommunities(ctx, engram.Namespace{Org: s.Org, Project: s.Project, User: s.User}, full)
}

func (e *graphs) refreshCommunities(ctx context.Context, owner engram.Namespace, full bool) (*engram.RefreshResult, error) {
	var res *engram.RefreshResult
	var written []engram.Community
	err := e.store.Update(ctx, func(tx engram.Tx) error {
		var err error
		res, written, err = e.refreshTx(ctx, tx, owner, full)
		return err
	})
	if err != nil {
		return nil, err
	}
	if e.chat != nil {
		e.abstracts(ctx, written)
	}
	return res, nil
}

// refreshTx recomputes, in tx, the communities of owner that a dirty
// entity touches (every one when full) and empties the dirty set.
func (e *graphs) refreshTx(ctx context.Context, tx engram.Tx, owner engram.Namespace, full bool) (*engram.RefreshResult, []engram.Community, error) {
	edges, err := tx.GraphEdges(ctx, owner)
	if err != nil {
		return nil, nil, err
	}
	old, err := tx.Communities(ctx, engram.ScopeOf(owner))
	if err != nil {
		return nil, nil, err
	}
	dirtyIDs, err := tx.DirtyEntities(ctx, owner)
	if err != nil {
		return nil, nil, err
	}
	res := &engram.RefreshResult{Full: full, Dirty: len(dirtyIDs)}
	g := community.NewGraph(edges)
	stale := map[string]bool{} // entities whose community is made again
	for _, id := range dirtyIDs {
		stale[id] = true
	}
	var redo [][]string
	for _, comp := range g.Components() {
		if full || slices.ContainsFunc(comp, func(id string) bool { return stale[id] }) {
			redo = append(redo, comp)
			for _, id := range comp {
				stale[id] = true
			}
			res.Recomputed += len(comp)
		}
	}
	kept := 0
	for _, c := range old {
		if full || slices.ContainsFunc(c.Members, func(id string) bool { return stale[id] }) {
			if err := tx.DeleteCommunity(ctx, owner, c.ID); err != nil {
				return nil, nil, err
			}
			res.Deleted++
		} else {
			kept++
		}
	}
	var written []engram.Community
	now := e.clock()
	for _, comp := range redo {
		for _, members := range g.Detect(comp, engram.MaxCommunitySize) {
			c, err := summarizeCommunity(ctx, tx, g, owner, members, now)
			if err != nil {
				return nil, nil, err
			}
			if err := tx.PutCommunity(ctx, c); err != nil {
				return nil, nil, err
			}
			written = append(written, *c)
		}
	}
	res.Written, res.Total = len(written), kept+len(written)
	return res, written, tx.ClearDirty(ctx, owner)
}

// summarizeCommunity returns the community of owner with members, its
// names and extractive summary read from the members' entities and
// memories.
func summarizeCommunity(ctx context.Context, r engram.Reader, g *community.Graph, owner engram.Namespace, members []string, now time.Time) (*engram.Community, error) {
	sc := engram.ScopeOf(owner)
	in := make(map[string]bool, len(members))
	for _, id := range members {
		in[id] = true
	}
	ents, err := entitiesOf(ctx, r, sc, members)
	if err != nil {
		return nil, err
	}
	ms := make([]community.Member, len(ents))
	for i, en := range ents {
		ms[i] = community.Member{ID: en.ID, Name: en.Name, Keys: en.Keys(), Degree: g.Degree(en.ID, in), Mentions: en.Mentions}
	}
	community.Central(ms)
	srcs, err := communitySources(ctx, r, sc, members)
	if err != nil {
		return nil, err
	}
	c := &engram.Community{ID: communityID(owner, members), Namespace: owner, Members: members, UpdatedAt: now}
	c.Names, c.Summary, c.Sources = community.Summarize(ms, srcs)
	if c.Sources == nil {
		c.Sources = []string{}
	}
	return c, nil
}

// communitySources returns the active memories that mention the most of
// members (among their newest communityMentions mentions), with how many
// each mentions.
func communitySources(ctx context.Context, r engram.Reader, sc engram.Scope, members []string) ([]community.Source, error) {
	mns, err := r.EntityMentions(ctx, sc, members, communityMentions)
	if err != nil {
		return nil, err
	}
	type cand struct {
		id string
		n  int
		at int64
	}
	byMem := map[string]*cand{}
	var cands []*cand
	for _, mn := range mns {
		c := byMem[mn.MemoryID]
		if c == nil {
			c = &cand{id: mn.MemoryID}
			byMem[mn.MemoryID] = c
			cands = append(cands, c)
		}
		c.n++
		c.at = max(c.at, mn.At.UnixMicro())
	}
	slices.SortFunc(cands, func(a, b *cand) int {
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(b.at, a.at), cmp.Compare(b.id, a.id))
	})
	ids := make([]string, 0, communityCandidates)
	for _, c := range cands[:min(len(cands), communityCandidates)] {
		ids = append(ids, c.id)
	}
	mems, err := r.GetMemories(ctx, sc, ids)
	if err != nil {
		return nil, err
	}
	var out []community.Source
	for _, m := range mems {
		if m.Status != engram.StatusActive || m.Kind == engram.KindVault {
			continue
		}
		c := byMem[m.ID]
		out = append(out, community.Source{ID: m.ID, Text: m.Value, Members: c.n, At: c.at})
	}
	return out, nil
}

// communityID derives a community's id from its owner and members, so a
// recomputation that finds the same group gives it the same id.
func communityID(owner engram.Namespace, members []string) string {
	h := sha256.New()
	for _, s := range append([]string{owner.Org, owner.Project, owner.User}, members...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	b := make([]byte, 26)
	b[0] = crockford[sum[0]%8] // a ULID's first character is at most 7
	for i := 1; i < 26; i++ {
		b[i] = crockford[sum[i]%32]
	}
	return string(b)
}

// abstractPrompt asks the model for a community's summary.
const abstractPrompt = `You summarise a group of related people, places and things from one person's memories.
Answer with two or three plain sentences in the language of the memories, using only what they say.`

// maxAbstractBytes bounds an abstract.
const maxAbstractBytes = 2000

// abstracts asks the model for an abstract of each community and stores
// it when the community is still as it was summarised. Failures are
// logged: the extractive summary stays.
func (e *graphs) abstracts(ctx context.Context, cs []engram.Community) {
	for _, c := range cs {
		var b strings.Builder
		b.WriteString("Names: " + strings.Join(c.Names, ", ") + "\n\nMemories:\n" + c.Summary)
		reply, err := e.chat.Complete(ctx, []openai.Message{{Role: "system", Content: abstractPrompt}, {Role: "user", Content: b.String()}},
			openai.MaxTokens(200), openai.Temperature(0))
		if err != nil {
			e.log.Warn("community abstract", "community", c.ID, "err", err)
			continue
		}
		abstract := strings.TrimSpace(reply)
		if len(abstract) > maxAbstractBytes {
			abstract = strings.ToValidUTF8(abstract[:maxAbstractBytes], "")
		}
		err = e.store.Update(ctx, func(tx engram.Tx) error {
			cur, err := tx.GetCommunity(ctx, engram.ScopeOf(c.Namespace), c.ID)
			if engram.IsNotFound(err) || err == nil && cur.Summary != c.Summary {
				return nil // changed since: the next refresh asks again
			} else if err != nil {
				return err
			}
			cur.Abstract = abstract
			return tx.PutCommunity(ctx, cur)
		})
		if err != nil {
			e.log.Warn("store community abstract", "community", c.ID, "err", err)
		}
	}
}

// ListCommunities implements engram.CommunityService. A scope narrowed to
// an agent or a session sees only the members it sees (see
// entityVisible), and no names, summary or sources: those may come from
// memories it cannot read.
func (e *graphs) ListCommunities(ctx context.Context, s engram.Scope) (*engram.CommunityList, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	out := &engram.CommunityList{Communities: []engram.Community{}}
	err = e.store.View(ctx, func(r engram.Reader) error {
		cs, err := r.Communities(ctx, engram.EntityScope(s))
		if err != nil {
			return err
		}
		for _, c := range cs {
			ok, err := narrowCommunity(ctx, r, s, &c)
			if err != nil {
				return err
			}
			if ok {
				out.Communities = append(out.Communities, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetCommunity implements engram.CommunityService, narrowed like
// ListCommunities.
func (e *graphs) GetCommunity(ctx context.Context, s engram.Scope, id string) (*engram.CommunityDetail, error) {
	s, err := readTarget(s, "community", id)
	if err != nil {
		return nil, err
	}
	d := &engram.CommunityDetail{}
	err = e.store.View(ctx, func(r engram.Reader) error {
		es := engram.EntityScope(s)
		c, err := r.GetCommunity(ctx, es, id)
		if err != nil {
			return err
		}
		if ok, err := narrowCommunity(ctx, r, s, c); err != nil || !ok {
			return cmp.Or[error](err, engram.Errorf(engram.ENOTFOUND, "community %s not found", id))
		}
		d.Community = *c
		ents, err := entitiesOf(ctx, r, es, c.Members)
		if err != nil {
			return err
		}
		d.Entities, err = visibleEntities(ctx, r, s, ents)
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// narrowCommunity keeps, for a narrowed scope, only the members s sees and
// clears what may quote other memories (names and sources become empty,
// not nil: they are arrays on the wire); it reports whether s sees any
// member.
func narrowCommunity(ctx context.Context, r engram.Reader, s engram.Scope, c *engram.Community) (bool, error) {
	if !narrowed(s) {
		return true, nil
	}
	var keep []string
	for _, id := range c.Members {
		ok, err := entityVisible(ctx, r, s, id)
		if err != nil {
			return false, err
		}
		if ok {
			keep = append(keep, id)
		}
	}
	c.Members, c.Names, c.Summary, c.Abstract, c.Sources = keep, []string{}, "", "", []string{}
	return len(keep) > 0, nil
}

// tagCommunities sets the Community of each of nodes that belongs to one.
// It fails with the store's error.
func tagCommunities(ctx context.Context, r engram.Reader, es engram.Scope, nodes []engram.Entity) error {
	if len(nodes) == 0 {
		return nil
	}
	ids := make([]string, len(nodes))
	for i := range nodes {
		ids[i] = nodes[i].ID
	}
	of, err := r.EntityCommunities(ctx, es, ids)
	if err != nil {
		return err
	}
	for i := range nodes {
		nodes[i].Community = of[nodes[i].ID]
	}
	return nil
}

// RefreshDirtyCommunities refreshes the communities of every user (in any
// tenant) with a dirty entity, up to refreshOwners of them, and says how
// many it refreshed. It stops at the first refresh that fails, with its
// error and how many it refreshed before.
func (e *graphs) RefreshDirtyCommunities(ctx context.Context) (int, error) {
	var owners []engram.Namespace
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		owners, err = r.DirtyOwners(ctx, refreshOwners)
		return err
	})
	if err != nil {
		return 0, err
	}
	for i, n := range owners {
		if _, err := e.refreshCommunities(ctx, n, false); err != nil {
			return i, err
		}
	}
	return len(owners), nil
}

// StartCommunityRefresher runs RefreshDirtyCommunities every interval in
// the background until Close; errors are logged and the next tick tries
// again. An interval at or below zero starts nothing; a second call is a
// no-op.
func (e *graphs) StartCommunityRefresher(every time.Duration) {
	e.startTicking(&e.refresher, every, func(ctx context.Context) {
		if n, err := e.RefreshDirtyCommunities(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("refresh communities", "users", n, "err", err)
		}
	})
}

package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// communityEngine opens an engine over a fresh SQLite store.
func communityEngine(t testing.TB, o engine.Options) (*engine.Engine, engram.Store) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(context.Background(), db, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	return e, db
}

// communitiesOf lists the communities of s.
func communitiesOf(t *testing.T, e *engine.Engine, s engram.Scope) []engram.Community {
	t.Helper()
	l, err := e.ListCommunities(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return l.Communities
}

func refresh(t *testing.T, e *engine.Engine, s engram.Scope, full bool) *engram.RefreshResult {
	t.Helper()
	res, err := e.RefreshCommunities(engram.WithActor(context.Background(), "test"), s, full)
	if err != nil {
		t.Fatalf("refresh (full %v): %v", full, err)
	}
	return res
}

// sameCommunities fails when a and b differ in anything but their times.
func sameCommunities(t *testing.T, what string, a, b []engram.Community) {
	t.Helper()
	key := func(cs []engram.Community) []string {
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s %v %q %q %v", c.ID, c.Members, c.Names, c.Summary, c.Sources))
		}
		return out
	}
	if ka, kb := key(a), key(b); !slices.Equal(ka, kb) {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(ka, "\n"), strings.Join(kb, "\n"))
	}
}

// TestCommunitiesFromMemories: memories naming two separate circles of
// people (in English, German, Spanish and Chinese) make two communities
// whose summaries quote them; a later memory touching one circle
// recomputes only that circle, and the incremental result equals a full
// recomputation.
func TestCommunitiesFromMemories(t *testing.T) {
	e, _ := communityEngine(t, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "u1"}
	s := engram.ScopeOf(ns)
	addValues(t, e, ns, nil,
		"Anna and Bruno hiked with Clara near Zermatt.",
		"Anna und Bruno kochten mit Clara.",
		"Diego y Elena viajaron a Sevilla con Fernando.",
		"Diego and Elena met Fernando again.",
		"张伟和李娜在北京见面。",
	)
	res := refresh(t, e, s, false)
	cs := communitiesOf(t, e, s)
	if len(cs) < 2 || res.Written != len(cs) || res.Dirty == 0 {
		t.Fatalf("first refresh %+v made %d communities: %+v", res, len(cs), cs)
	}
	var annas *engram.Community
	for i := range cs {
		if strings.Contains(cs[i].Summary, "Anna") {
			annas = &cs[i]
		}
		if strings.Contains(cs[i].Summary, "Anna") && strings.Contains(cs[i].Summary, "Diego") {
			t.Errorf("one community holds both circles: %+v", cs[i])
		}
		if len(cs[i].Sources) == 0 {
			t.Errorf("community %s quotes no memory: %q", cs[i].ID, cs[i].Summary)
		}
	}
	if annas == nil || !strings.Contains(annas.Summary, "Clara") {
		t.Fatalf("no community names Anna with Clara: %+v", cs)
	}

	// Nothing changed: nothing is recomputed.
	if res := refresh(t, e, s, false); res.Dirty != 0 || res.Written != 0 || res.Deleted != 0 || res.Total != len(cs) {
		t.Errorf("refresh without changes = %+v", res)
	}

	// A memory of the Spanish circle dirties that circle alone.
	addValues(t, e, ns, nil, "Elena und Fernando besuchten Diego in Madrid.")
	res = refresh(t, e, s, false)
	incremental := communitiesOf(t, e, s)
	if res.Recomputed == 0 || res.Written == 0 {
		t.Errorf("the incremental refresh recomputed nothing: %+v", res)
	}
	if !slices.ContainsFunc(incremental, func(c engram.Community) bool { return c.ID == annas.ID && c.UpdatedAt.Equal(annas.UpdatedAt) }) {
		t.Errorf("Anna's circle was rewritten though nothing of it changed: %+v", incremental)
	}
	full := refresh(t, e, s, true)
	if !full.Full || full.Recomputed <= res.Recomputed {
		t.Errorf("full refresh %+v recomputed no more than the incremental %+v", full, res)
	}
	sameCommunities(t, "incremental then full", incremental, communitiesOf(t, e, s))
}

// TestCommunitiesIncrementalEqualsFull changes a random graph step by step
// (relations added, reweighed and expired, entities deleted, memories
// purged) and checks after each step that the incremental refresh gives
// exactly what a full one then gives.
func TestCommunitiesIncrementalEqualsFull(t *testing.T) {
	e, st := communityEngine(t, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "u1"}
	owner, s := engram.EntityOwner(ns), engram.ScopeOf(ns)
	r := rand.New(rand.NewPCG(7, 11))

	var mems []*engram.Memory
	for i := range 30 {
		mems = append(mems, storetest.Memory(ns, fmt.Sprintf("Memory %d names E%d and E%d.", i, i%40, (i*7)%40)))
	}
	recs := make([]any, len(mems))
	for i, m := range mems {
		recs[i] = m
	}
	anchor := storetest.Memory(ns, "Every name once, so that a purge of another memory leaves the entities.")
	storetest.Put(t, st, append(recs, anchor)...)
	var ents []*engram.Entity
	var graph []any
	for i := range 40 {
		en := storetest.Entity(ns, fmt.Sprintf("E%d", i), engram.EntityPerson)
		ents = append(ents, en)
		graph = append(graph, en, engram.Mention{EntityID: en.ID, MemoryID: anchor.ID, Namespace: owner, At: anchor.CreatedAt})
	}
	for i, m := range mems {
		graph = append(graph, engram.Mention{EntityID: ents[i%40].ID, MemoryID: m.ID, Namespace: owner, At: m.CreatedAt},
			engram.Mention{EntityID: ents[(i*7)%40].ID, MemoryID: m.ID, Namespace: owner, At: m.CreatedAt})
	}
	storetest.PutGraph(t, st, graph...)
	gone := map[int]bool{}
	purged := map[int]bool{}
	var rels []*engram.Relation
	live := func() int {
		for {
			if i := r.IntN(len(ents)); !gone[i] {
				return i
			}
		}
	}
	liveMem := func() *engram.Memory {
		for {
			if i := r.IntN(len(mems)); !purged[i] {
				return mems[i]
			}
		}
	}
	for step := range 12 {
		var ops []any
		switch {
		case step > 0 && step%4 == 0: // delete an entity
			i := live()
			gone[i] = true
			storetest.DeleteEntity(t, st, owner, ents[i].ID)
		case step > 0 && step%5 == 0: // purge a memory
			i := r.IntN(len(mems))
			if !purged[i] {
				purged[i] = true
				storetest.Purge(t, st, mems[i])
			}
		default:
			for range 8 + r.IntN(8) {
				a, b := live(), live()
				if a == b {
					continue
				}
				rel := storetest.Relation(ents[a], ents[b], liveMem().ID)
				rel.Evidence[0].Weight = float64(1+r.IntN(4)) / 4
				rels = append(rels, rel)
				ops = append(ops, rel)
			}
		}
		storetest.PutGraph(t, st, ops...)
		res := refresh(t, e, s, false)
		inc := communitiesOf(t, e, s)
		refresh(t, e, s, true)
		sameCommunities(t, fmt.Sprintf("step %d (%+v)", step, res), inc, communitiesOf(t, e, s))
		if step == 11 && len(inc) < 2 {
			t.Errorf("only %d communities at the end: the graph is too plain to test", len(inc))
		}
	}
}

// TestCommunitiesScoped: another user sees none of them; a scope narrowed
// to a session sees no summary; graph nodes carry their community.
func TestCommunitiesScoped(t *testing.T) {
	e, _ := communityEngine(t, engine.Options{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "p", User: "u1", Session: "s1"}
	addValues(t, e, ns, nil, "Anna and Bruno hiked with Clara.", "Anna, Bruno and Clara cooked.")
	s := engram.Scope{Org: "acme", Project: "p", User: "u1"}
	refresh(t, e, s, false)
	cs := communitiesOf(t, e, s)
	if len(cs) != 1 {
		t.Fatalf("communities = %+v, want one", cs)
	}
	c := cs[0]
	other := engram.Scope{Org: "acme", Project: "p", User: "u2"}
	if got := communitiesOf(t, e, other); len(got) != 0 {
		t.Errorf("u2 sees %+v", got)
	}
	if _, err := e.GetCommunity(ctx, other, c.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("u2 gets u1's community: %v", err)
	}
	for what, sc := range map[string]engram.Scope{"its session": engram.ScopeOf(ns), "another session": {Org: "acme", Project: "p", User: "u1", Session: "s2"}} {
		got := communitiesOf(t, e, sc)
		if what == "another session" {
			if len(got) != 0 {
				t.Errorf("%s sees %+v", what, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Summary != "" || len(got[0].Sources) != 0 || len(got[0].Members) != len(c.Members) {
			t.Errorf("%s sees %+v, want the members without a summary", what, got)
		}
	}
	d, err := e.GetCommunity(ctx, s, c.ID)
	if err != nil || len(d.Entities) != len(c.Members) || d.Community.Summary == "" {
		t.Fatalf("GetCommunity = %+v, %v", d, err)
	}
	g, err := e.Graph(ctx, s, engram.GraphRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if slices.Contains(c.Members, n.ID) != (n.Community == c.ID) {
			t.Errorf("node %s (%s) has community %q, want %q", n.ID, n.Name, n.Community, c.ID)
		}
	}
	if _, err := e.RefreshCommunities(ctx, engram.ScopeOf(ns), false); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("a refresh narrowed to a session: %v, want EINVALID", err)
	}

	// Deleting a member removes the community at once (its summary names
	// it); the next refresh makes what is left again.
	if err := e.DeleteEntity(engram.WithActor(ctx, "test"), s, c.Members[0]); err != nil {
		t.Fatal(err)
	}
	if got := communitiesOf(t, e, s); slices.ContainsFunc(got, func(x engram.Community) bool { return x.ID == c.ID }) {
		t.Errorf("the community outlived its member's delete: %+v", got)
	}
	if res := refresh(t, e, s, false); res.Dirty == 0 {
		t.Errorf("the delete left nothing dirty: %+v", res)
	}
}

// TestCommunitiesAbstract: with an LLM each new community gets the
// model's abstract; a failing model leaves the extractive summary.
func TestCommunitiesAbstract(t *testing.T) {
	var asked []string
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		asked = append(asked, r.Messages[len(r.Messages)-1].Content)
		return "  Anna, Bruno and Clara are friends who hike.  "
	}})
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := communityEngine(t, engine.Options{LLM: chat})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "u1"}
	addValues(t, e, ns, nil, "Anna and Bruno hiked with Clara.")
	refresh(t, e, engram.ScopeOf(ns), false)
	cs := communitiesOf(t, e, engram.ScopeOf(ns))
	if len(cs) != 1 || cs[0].Abstract != "Anna, Bruno and Clara are friends who hike." {
		t.Fatalf("communities = %+v, want the model's abstract", cs)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "Anna and Bruno hiked with Clara.") {
		t.Errorf("the model was asked %q, want the quoted memory in it", asked)
	}
}

// TestRefreshDirtyCommunities: the background refresh finds every user
// with changes, in any tenant.
func TestRefreshDirtyCommunities(t *testing.T) {
	e, _ := communityEngine(t, engine.Options{})
	a := engram.Namespace{Org: "acme", Project: "p", User: "u1"}
	b := engram.Namespace{Org: "other", Project: "q", User: "u9"}
	addValues(t, e, a, nil, "Anna and Bruno hiked with Clara.")
	addValues(t, e, b, nil, "Diego y Elena viajaron con Fernando.")
	n, err := e.RefreshDirtyCommunities(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("RefreshDirtyCommunities = %d, %v; want 2 users", n, err)
	}
	for _, ns := range []engram.Namespace{a, b} {
		if got := communitiesOf(t, e, engram.ScopeOf(ns)); len(got) != 1 {
			t.Errorf("%v has communities %+v, want one", ns, got)
		}
	}
	if n, err := e.RefreshDirtyCommunities(context.Background()); err != nil || n != 0 {
		t.Errorf("a second run refreshed %d users (%v), want none", n, err)
	}
}

// TestCommunityRefresher: an engine with Options.CommunityRefresh makes
// the communities on its own, and Close stops it.
func TestCommunityRefresher(t *testing.T) {
	e, _ := communityEngine(t, engine.Options{CommunityRefresh: 5 * time.Millisecond})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "u1"}
	addValues(t, e, ns, nil, "Anna and Bruno hiked with Clara.")
	deadline := time.Now().Add(20 * time.Second)
	for len(communitiesOf(t, e, engram.ScopeOf(ns))) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no community 20s after the write: the background refresh does not run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

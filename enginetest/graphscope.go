package enginetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testGraphNarrowed: a scope narrowed to a session sees of the user's
// graph only what its own memories say. Session s1 names Melanie, Lisbon
// and Zoltan; session s2 names Melanie and Lisbon again, with Quixotl,
// and ties Quixotl to Zoltan, and names Aaron, Abigail and Aachen, which
// sort before everything s1 sees. In s1: no page of entities is empty or
// carries a cursor past what s1 sees; counts, relations' evidence and
// weights are s1's alone; the graph around an entity s1 does not see is
// ENOTFOUND exactly as an unknown id, and a walk never passes through
// one.
func testGraphNarrowed(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	ns1 := engram.Namespace{Org: "acme", Project: "p", User: "nora", Session: "s1"}
	ns2 := ns1
	ns2.Session = "s2"
	user, s1 := engram.Scope{Org: "acme", Project: "p", User: "nora"}, engram.ScopeOf(ns1)
	m1 := mustAddMemory(t, e, ns1, "Yesterday I met Melanie in Lisbon.")
	mustAddMemory(t, e, ns1, "I had lunch with Zoltan.")
	m2 := mustAddMemory(t, e, ns2, "Last week I met Melanie in Lisbon with Quixotl.")
	mustAddMemory(t, e, ns2, "I went hiking with Quixotl and Zoltan.")
	mustAddMemory(t, e, ns2, "Aaron met Abigail in Aachen.")
	melanie, lisbon := entityByName(t, e, user, "Melanie"), entityByName(t, e, user, "Lisbon")
	quixotl, zoltan := entityByName(t, e, user, "Quixotl"), entityByName(t, e, user, "Zoltan")
	others := []string{m2.ID, quixotl.ID, "aachen", "abigail", "aaron", "quixotl", "Quixotl"}
	noLeak := func(what string, v any) {
		t.Helper()
		j := mustJSON(t, v)
		for _, x := range others {
			if strings.Contains(j, x) {
				t.Errorf("%s in s1 shows %s of s2: %s", what, x, j)
			}
		}
	}

	// Pages of one: each holds one entity s1 sees, and the last says so.
	var names []string
	f := engram.EntityFilter{Limit: 1}
	for range 10 {
		p, err := e.ListEntities(ctx, s1, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Entities) != 1 {
			t.Errorf("a page of s1's entities after cursor %q holds %v (next %q), want one", f.Cursor, entityNames(p.Entities), p.Next)
			break
		}
		names = append(names, p.Entities[0].Name)
		if f.Cursor = p.Next; f.Cursor == "" {
			break
		}
	}
	if want := []string{"Lisbon", "Melanie", "Zoltan"}; !slices.Equal(names, want) {
		t.Errorf("s1's entities page by page = %v, want %v", names, want)
	}
	p, err := e.ListEntities(ctx, s1, engram.EntityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	noLeak("ListEntities", p)
	for _, en := range p.Entities {
		if en.Mentions != 1 {
			t.Errorf("%s has %d mentions in s1, which names it once", en.Name, en.Mentions)
		}
	}

	d, err := e.GetEntity(ctx, s1, melanie.ID)
	if err != nil {
		t.Fatal(err)
	}
	noLeak("GetEntity", d)
	r := relationTo(d, lisbon.ID)
	if d.Entity.Mentions != 1 || r == nil || r.Weight != 1 || len(r.Evidence) != 1 || r.Evidence[0].MemoryID != m1.ID {
		t.Errorf("Melanie in s1: %d mentions, relation to Lisbon %+v; want 1 mention and weight 1 from %s alone", d.Entity.Mentions, r, m1.ID)
	}

	for _, req := range []engram.GraphRequest{{}, {Entity: melanie.ID, Hops: 2}, {Entity: lisbon.ID, Hops: 2}} {
		g, err := e.Graph(ctx, s1, req)
		if err != nil {
			t.Fatal(err)
		}
		noLeak("Graph", g)
		if slices.ContainsFunc(g.Nodes, func(n engram.Entity) bool { return n.ID == zoltan.ID }) {
			t.Errorf("Graph %+v in s1 reaches Zoltan, whom s1 ties to no one: %v", req, entityNames(g.Nodes))
		}
		for _, r := range g.Edges {
			if r.Weight != 1 {
				t.Errorf("Graph %+v in s1: edge %s–%s weighs %v, want 1", req, r.Source, r.Target, r.Weight)
			}
		}
	}
	unknown := engram.NewID()
	_, errUnknown := e.Graph(ctx, s1, engram.GraphRequest{Entity: unknown})
	_, err = e.Graph(ctx, s1, engram.GraphRequest{Entity: quixotl.ID})
	if code(err) != engram.ENOTFOUND || code(errUnknown) != engram.ENOTFOUND ||
		strings.ReplaceAll(err.Error(), quixotl.ID, "ID") != strings.ReplaceAll(errUnknown.Error(), unknown, "ID") {
		t.Errorf("Graph around Quixotl in s1: %v; around an unknown id: %v", err, errUnknown)
	}

	if _, err := e.RefreshCommunities(ctx, user, true); err != nil {
		t.Fatal(err)
	}
	l, err := e.ListCommunities(ctx, s1)
	if err != nil {
		t.Fatal(err)
	}
	noLeak("ListCommunities", l)
	for _, c := range l.Communities {
		cd, err := e.GetCommunity(ctx, s1, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		noLeak("GetCommunity", cd)
		for _, en := range cd.Entities {
			if en.Mentions != 1 {
				t.Errorf("community member %s has %d mentions in s1, which names it once", en.Name, en.Mentions)
			}
		}
	}
}

package enginetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// entityByName returns the entity of s named name (normalised), failing
// the test when there is none.
func entityByName(t *testing.T, e *engine.Engine, s engram.Scope, name string) engram.Entity {
	t.Helper()
	page, err := e.ListEntities(ctx, s, engram.EntityFilter{Prefix: name, Limit: engram.MaxEntityLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range page.Entities {
		if en.Norm == engram.NormalizeName(name) {
			return en
		}
	}
	t.Fatalf("no entity %q in %+v among %v", name, s, entityNames(page.Entities))
	return engram.Entity{}
}

func entityNames(es []engram.Entity) []string {
	out := make([]string, len(es))
	for i := range es {
		out[i] = es[i].Name
	}
	return out
}

// relationTo returns the relation of d to the entity other, or nil.
func relationTo(d *engram.EntityDetail, other string) *engram.Relation {
	for i := range d.Relations {
		if d.Relations[i].Other(d.Entity.ID) == other && d.Relations[i].Current() {
			return &d.Relations[i]
		}
	}
	return nil
}

// testGraph: the engine keeps the entity graph with every write of a
// memory, in English and German, within the writer's scope; updates,
// deletes and purges carry through to mentions and relations, and a
// relation that loses its last support is invalidated, not dropped.
func testGraph(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	// Formed from episodes: the speaker is a person, Yosemite a place.
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{
		{Role: "user", Speaker: "Caroline", Content: "Yesterday I went hiking in Yosemite with Melanie."},
	}}); err != nil {
		t.Fatal(err)
	}
	m2 := mustAddMemory(t, e, nsA, "Melanie and Caroline camped in Yosemite again.")
	// German: Jürgen and Juergen are one entity; Wochenende is no name.
	mustAddMemory(t, e, nsA, "Am Wochenende war ich mit Jürgen in München.")
	mustAddMemory(t, e, nsA, "Danach hat Juergen angerufen.")

	caroline, melanie := entityByName(t, e, scA, "Caroline"), entityByName(t, e, scA, "Melanie")
	yosemite, jurgen := entityByName(t, e, scA, "Yosemite"), entityByName(t, e, scA, "Jürgen")
	if caroline.Type != engram.EntityPerson || yosemite.Type != engram.EntityPlace {
		t.Errorf("types: Caroline %q, Yosemite %q", caroline.Type, yosemite.Type)
	}
	if jurgen.Mentions != 2 || !slices.Contains(jurgen.Aliases, "Juergen") {
		t.Errorf("Jürgen: %d mentions, aliases %v; want Juergen resolved to him", jurgen.Mentions, jurgen.Aliases)
	}
	page, err := e.ListEntities(ctx, scA, engram.EntityFilter{Limit: engram.MaxEntityLimit})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(page.Entities, func(en engram.Entity) bool { return en.Norm == "wochenende" }) {
		t.Errorf("a German noun became an entity: %v", entityNames(page.Entities))
	}

	d, err := e.GetEntity(ctx, scA, melanie.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Memories) != 2 || len(d.Timeline) != 2 || d.Memories[0].ID != m2.ID {
		t.Errorf("Melanie's memories %d (first %s), timeline %d; want 2, newest %s first", len(d.Memories), d.Memories[0].ID, len(d.Timeline), m2.ID)
	}
	if r := relationTo(d, yosemite.ID); r == nil || r.Weight != 2 || r.ValidAt == nil {
		t.Errorf("Melanie–Yosemite = %+v, want weight 2 with a valid_at", r)
	}

	// Another user, another tenant: nothing.
	for _, s := range []engram.Scope{scB, {Org: "other", Project: "p", User: "alice"}} {
		if p, err := e.ListEntities(ctx, s, engram.EntityFilter{}); err != nil || len(p.Entities) != 0 {
			t.Errorf("ListEntities in %+v = %v, %v", s, p, err)
		}
		if _, err := e.GetEntity(ctx, s, melanie.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("GetEntity of alice's entity in %+v: %v", s, err)
		}
		if _, err := e.Graph(ctx, s, engram.GraphRequest{Entity: melanie.ID}); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("Graph around alice's entity in %+v: %v", s, err)
		}
	}

	// A scope narrowed to another session learns no names said in s1;
	// one narrowed to s1 sees them.
	other, s1 := scA, scA
	other.Session, s1.Session = "s2", nsA.Session
	if p, err := e.ListEntities(ctx, other, engram.EntityFilter{}); err != nil || len(p.Entities) != 0 {
		t.Errorf("ListEntities in another session = %v, %v", p, err)
	}
	if _, err := e.GetEntity(ctx, other, melanie.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetEntity in another session: %v", err)
	}
	if g, err := e.Graph(ctx, other, engram.GraphRequest{}); err != nil || len(g.Nodes)+len(g.Edges) != 0 {
		t.Errorf("Graph in another session = %+v, %v", g, err)
	}
	if _, err := e.GetEntity(ctx, s1, melanie.ID); err != nil {
		t.Errorf("GetEntity in the session that named her: %v", err)
	}
	if err := e.DeleteEntity(ctx, s1, melanie.ID); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("DeleteEntity in a session scope: %v, want EINVALID", err)
	}

	// An edit that drops Melanie drops its mention and its support of the
	// Melanie relations; a soft delete invalidates what only it supported.
	v := "Caroline camped in Yosemite again."
	if _, err := e.UpdateMemory(ctx, scA, m2.ID, engram.MemoryPatch{Value: &v}); err != nil {
		t.Fatal(err)
	}
	if d, _ = e.GetEntity(ctx, scA, melanie.ID); len(d.Memories) != 1 {
		t.Errorf("after the edit Melanie has %d memories, want 1", len(d.Memories))
	}
	if r := relationTo(d, yosemite.ID); r == nil || r.Weight != 1 {
		t.Errorf("after the edit Melanie–Yosemite = %+v, want weight 1", r)
	}
	m5 := mustAddMemory(t, e, nsA, "Caroline met Ottilie in Yosemite.")
	ottilie := entityByName(t, e, scA, "Ottilie")
	if err := e.DeleteMemory(ctx, scA, m5.ID, engram.DeleteOptions{Reason: "wrong"}); err != nil {
		t.Fatal(err)
	}
	d, err = e.GetEntity(ctx, scA, ottilie.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Relations) == 0 || relationTo(d, caroline.ID) != nil {
		t.Fatalf("after the soft delete Ottilie's relations are %+v, want them invalidated", d.Relations)
	}
	for _, r := range d.Relations {
		if r.ExpiredAt == nil || r.InvalidAt == nil {
			t.Errorf("relation %s lost its only support but is current: %+v", r.ID, r)
		}
	}

	// The graph around Caroline reaches Melanie in one hop and Jürgen not
	// at all; the scope's graph has every current edge.
	g, err := e.Graph(ctx, scA, engram.GraphRequest{Entity: caroline.ID, Hops: 2})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range g.Nodes {
		nodes = append(nodes, n.ID)
	}
	if !slices.Contains(nodes, melanie.ID) || slices.Contains(nodes, jurgen.ID) || slices.Contains(nodes, ottilie.ID) {
		t.Errorf("graph around Caroline has nodes %v", entityNames(g.Nodes))
	}

	// A speaker that is not a string names no one and breaks nothing.
	odd, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{
		Value: "Notes from Valencia.", Metadata: map[string]any{engram.MetaSpeaker: map[string]any{"x": 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.UpdateMemory(ctx, scA, odd[0].ID, engram.MemoryPatch{Metadata: map[string]any{engram.MetaSpeaker: map[string]any{"y": 2}}}); err != nil {
		t.Fatalf("update of a memory whose speaker is an object: %v", err)
	}

	// Deleting an entity takes its relations; its memories stay.
	if err := e.DeleteEntity(ctx, scA, melanie.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetEntity(ctx, scA, melanie.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("deleted entity: %v", err)
	}
	if d, _ := e.GetEntity(ctx, scA, yosemite.ID); relationTo(d, melanie.ID) != nil {
		t.Errorf("a relation to the deleted entity is left")
	}
	if err := e.DeleteEntity(ctx, scB, caroline.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("bob deleting alice's entity: %v", err)
	}

	// A hard delete takes the entities only it named; a purge the rest.
	if err := e.DeleteMemory(ctx, scA, m5.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetEntity(ctx, scA, ottilie.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("after the hard delete Ottilie is left: %v", err)
	}
	if _, err := e.DeleteScope(ctx, scA); err != nil {
		t.Fatal(err)
	}
	if p, _ := e.ListEntities(ctx, scA, engram.EntityFilter{}); len(p.Entities) != 0 {
		t.Errorf("after the purge alice has entities %v", entityNames(p.Entities))
	}
}

// testGraphTurns: entities named in neighbouring turns of a conversation
// are related more weakly than those named in one turn.
func testGraphTurns(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "dana", Session: "c1"}
	sc := engram.Scope{Org: "acme", Project: "p", User: "dana"}
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{
		{Role: "user", Speaker: "Caroline", Content: "I adopted a puppy and named him Oscar."},
		{Role: "user", Speaker: "Melanie", Content: "So sweet! We just got back from Lisbon."},
	}}); err != nil {
		t.Fatal(err)
	}
	caroline, lisbon := entityByName(t, e, sc, "Caroline"), entityByName(t, e, sc, "Lisbon")
	d, err := e.GetEntity(ctx, sc, lisbon.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := relationTo(d, caroline.ID); r == nil || r.Weight != 0.25 {
		t.Errorf("Lisbon–Caroline across neighbouring turns = %+v, want weight 0.25", r)
	}
	if r := relationTo(d, entityByName(t, e, sc, "Melanie").ID); r == nil || r.Weight != 1 {
		t.Errorf("Lisbon–Melanie in one turn = %+v, want weight 1", r)
	}
}

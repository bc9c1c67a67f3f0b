package enginetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/entity"
)

// testGraphFormer: the entities and labelled relations the LLM former
// leaves on a memory become, as the memory is written, typed entities,
// mentions and relations with their event-time validity, in English,
// German, Spanish and Chinese; a second memory saying the same relation
// adds evidence, and one saying it ended closes it; an edit that drops an
// entity from the list drops its mention; another user sees none of it.
func testGraphFormer(t *testing.T, open Open) {
	st := open(t)
	e, err := engine.New(ctx, st, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); st.Close() })
	formed := func(value string, ents []any, rels []any) engram.Memory {
		t.Helper()
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{
			Value: value, Metadata: map[string]any{entity.MetaEntities: ents, entity.MetaRelations: rels},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0]
	}
	ent := func(name, typ string) any { return map[string]any{"name": name, "type": typ} }
	rel := func(src, label, tgt, from, to string) any {
		return map[string]any{"source": src, "label": label, "target": tgt, "valid_from": from, "valid_to": to}
	}
	m1 := formed("my sister lives in Lisbon since 2019", []any{ent("Ana", "person"), ent("Lisbon", "place")},
		[]any{rel("Ana", "Lives in", "Lisbon", "2019-03-01", "")})
	formed("Ana wohnt in Lissabon.", []any{ent("Ana", "person"), ent("Lisbon", "place")},
		[]any{rel("ana", "lives_in", "LISBON", "", "")})
	formed("Ana se mudó de Lisboa en 2024.", []any{ent("Ana", "person"), ent("Lisbon", "place")},
		[]any{rel("Ana", "lives_in", "Lisbon", "", "2024-06-01")})
	m4 := formed("王芳在北京工作。", []any{ent("王芳", "person"), ent("北京", "place"), ent("noise", "")},
		[]any{rel("王芳", "works_in", "北京", "", ""), rel("王芳", "knows", "nobody listed", "", ""), rel("北京", "co_occurs", "王芳", "", "")})

	ana, wang := entityByName(t, e, scA, "Ana"), entityByName(t, e, scA, "王芳")
	if ana.Type != engram.EntityPerson || wang.Type != engram.EntityPerson || entityByName(t, e, scA, "北京").Type != engram.EntityPlace {
		t.Errorf("types: Ana %q, 王芳 %q", ana.Type, wang.Type)
	}
	d, err := e.GetEntity(ctx, scA, ana.ID)
	if err != nil {
		t.Fatal(err)
	}
	var lives []engram.Relation
	for _, r := range d.Relations {
		if r.Label == "lives_in" {
			lives = append(lives, r)
		}
	}
	if len(lives) != 1 {
		t.Fatalf("Ana's lives_in relations: %+v, want one", lives)
	}
	r := lives[0]
	wantFrom, wantTo := time.Date(2019, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	if r.Source != ana.ID || r.Weight != 3 || r.ValidAt == nil || !r.ValidAt.Equal(wantFrom) || r.InvalidAt == nil || !r.InvalidAt.Equal(wantTo) || !r.Current() {
		t.Errorf("Ana lives_in Lisbon = %+v, want from Ana, weight 3, valid 2019-03-01..2024-06-01, current", r)
	}
	if !slices.ContainsFunc(r.Evidence, func(ev engram.Evidence) bool { return ev.MemoryID == m1.ID }) {
		t.Errorf("the relation's evidence %v lacks the first memory", r.Evidence)
	}
	dw, _ := e.GetEntity(ctx, scA, wang.ID)
	labels := []string{}
	for _, r := range dw.Relations {
		labels = append(labels, r.Label)
	}
	slices.Sort(labels)
	if !slices.Contains(labels, "works_in") || slices.Contains(labels, "knows") || len(dw.Memories) != 1 || dw.Memories[0].ID != m4.ID {
		t.Errorf("王芳: labels %v, memories %d; want works_in and no relation to an unlisted name", labels, len(dw.Memories))
	}
	noise := entityByName(t, e, scA, "noise")
	if dn, err := e.GetEntity(ctx, scA, noise.ID); err != nil || len(dn.Memories) != 1 {
		t.Fatalf("noise: %+v, %v; want one memory", dn, err)
	}
	meta := maps.Clone(m4.Metadata)
	meta[entity.MetaEntities] = []any{ent("王芳", "person"), ent("北京", "place")}
	if _, err := e.UpdateMemory(ctx, scA, m4.ID, engram.MemoryPatch{Metadata: meta}); err != nil {
		t.Fatal(err)
	}
	if dn, err := e.GetEntity(ctx, scA, noise.ID); err == nil && len(dn.Memories) != 0 {
		t.Errorf("noise after the edit is mentioned by %d memories, want none", len(dn.Memories))
	}
	if dw, err := e.GetEntity(ctx, scA, wang.ID); err != nil || len(dw.Memories) != 1 {
		t.Errorf("王芳 after the edit: %+v, %v; want still one memory", dw, err)
	}
	if p, err := e.ListEntities(ctx, scB, engram.EntityFilter{}); err != nil || len(p.Entities) != 0 {
		t.Errorf("another user sees %v, %v", p, err)
	}
}

package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// Entity returns a new active entity of n's tenant and user named name.
func Entity(n engram.Namespace, name, typ string, aliases ...string) *engram.Entity {
	return &engram.Entity{
		ID: engram.NewID(), Namespace: engram.EntityOwner(n), Name: name, Norm: engram.NormalizeName(name),
		Type: typ, Aliases: aliases, Status: engram.EntityActive, CreatedAt: At(0), UpdatedAt: At(time.Second),
	}
}

// Relation returns a current co-occurrence relation between a and b
// supported by the memories ids, each with weight 1.
func Relation(a, b *engram.Entity, ids ...string) *engram.Relation {
	r := &engram.Relation{
		ID: engram.NewID(), Namespace: a.Namespace, Source: a.ID, Target: b.ID, Label: engram.RelationCoOccurs,
		ValidAt: Ptr(At(-time.Hour)), CreatedAt: At(0),
	}
	for _, id := range ids {
		r.Evidence = append(r.Evidence, engram.Evidence{MemoryID: id, Weight: 1})
	}
	return r
}

// PutGraph stores entities, mentions (as Mention values) and relations in
// one transaction, failing the test on an error.
func PutGraph(t testing.TB, st engram.Store, recs ...any) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error {
		for _, r := range recs {
			var err error
			switch r := r.(type) {
			case *engram.Entity:
				err = tx.PutEntity(ctx, r)
			case engram.Mention:
				err = tx.PutMention(ctx, r)
			case *engram.Relation:
				err = tx.PutRelation(ctx, r)
			default:
				t.Fatalf("PutGraph: unexpected %T", r)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func mention(e *engram.Entity, m *engram.Memory, at time.Time) engram.Mention {
	return engram.Mention{EntityID: e.ID, MemoryID: m.ID, Namespace: e.Namespace, At: at}
}

// graphView runs fn with the store's GraphReader.
func graphView(t testing.TB, st engram.Store, fn func(g engram.GraphReader) error) {
	t.Helper()
	view(t, st, func(r engram.Reader) error {
		return fn(r)
	})
}

func entityIDs(es []engram.Entity) []string {
	out := make([]string, len(es))
	for i := range es {
		out[i] = es[i].ID
	}
	return out
}

func mentionPairs(ms []engram.Mention) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.EntityID + ">" + m.MemoryID
	}
	return out
}

func testGraphEntities(t *testing.T, open Opener) {
	st := open(t)
	grete := Entity(nsU1, "Grete Müller", engram.EntityPerson, "Oma Grete")
	munich := Entity(nsU1, "München", engram.EntityPlace, "Munich")
	madrid := Entity(nsU1, "Madrid", engram.EntityPlace)
	beijing := Entity(nsU1, "北京", engram.EntityPlace)
	PutGraph(t, st, grete, munich, madrid, beijing)

	graphView(t, st, func(g engram.GraphReader) error {
		got, err := g.GetEntity(ctx, scU1, grete.ID)
		if err != nil {
			return err
		}
		want := *grete
		sameJSON(t, "entity round trip", got, &want)

		_, err = g.GetEntity(ctx, scU1, engram.NewID())
		wantCode(t, "unknown entity", err, engram.ENOTFOUND)
		_, err = g.GetEntity(ctx, scU1, "not an id!")
		wantCode(t, "malformed entity id", err, engram.EINVALID)

		// Accent- and case-folded names and aliases find them.
		for _, c := range []struct {
			key  string
			want []string
		}{
			{"grete muller", []string{grete.ID}},
			{engram.NormalizeName("GRETE MÜLLER"), []string{grete.ID}},
			{engram.NormalizeName("Oma Grete"), []string{grete.ID}},
			{engram.NormalizeName("munich"), []string{munich.ID}},
			{engram.NormalizeName("北京"), []string{beijing.ID}},
			{"grete", nil}, // a word is not a name
		} {
			es, err := g.FindEntities(ctx, scU1, []string{c.key})
			if err != nil {
				return err
			}
			if got := entityIDs(es); !sameSet(got, c.want) {
				t.Errorf("FindEntities(%q) = %v, want %v", c.key, got, c.want)
			}
		}
		es, err := g.EntitiesByToken(ctx, scU1, []string{"grete", "madrid"}, 10)
		if err != nil {
			return err
		}
		if got := entityIDs(es); !sameSet(got, []string{grete.ID, madrid.ID}) {
			t.Errorf("EntitiesByToken(grete, madrid) = %v", got)
		}
		_, err = g.EntitiesByToken(ctx, scU1, []string{"x"}, 0)
		wantCode(t, "EntitiesByToken limit 0", err, engram.EINVALID)

		// Lists: ordered by normalised name, narrowed by type and prefix,
		// paged.
		all := listEntities(t, g, scU1, engram.EntityFilter{Limit: 1})
		if got, want := entityIDs(all), []string{grete.ID, madrid.ID, munich.ID, beijing.ID}; !slices.Equal(got, want) {
			t.Errorf("ListEntities by pages of 1 = %v, want %v", got, want)
		}
		if got := entityIDs(listEntities(t, g, scU1, engram.EntityFilter{Type: engram.EntityPlace})); !slices.Equal(got, []string{madrid.ID, munich.ID, beijing.ID}) {
			t.Errorf("ListEntities type place = %v", got)
		}
		if got := entityIDs(listEntities(t, g, scU1, engram.EntityFilter{Prefix: "MÜ"})); !slices.Equal(got, []string{munich.ID}) {
			t.Errorf("ListEntities prefix MÜ = %v, want München", got)
		}
		_, _, err = g.ListEntities(ctx, scU1, engram.EntityFilter{Cursor: "garbage"})
		wantCode(t, "ListEntities bad cursor", err, engram.EINVALID)
		_, _, err = g.ListEntities(ctx, scU1, engram.EntityFilter{Limit: engram.MaxEntityLimit + 1})
		wantCode(t, "ListEntities limit too large", err, engram.EINVALID)
		return nil
	})

	// Replacing an entity replaces the names it is found under.
	grete.Aliases = []string{"Margarete"}
	grete.UpdatedAt = At(time.Hour)
	PutGraph(t, st, grete)
	graphView(t, st, func(g engram.GraphReader) error {
		for key, want := range map[string]int{"oma grete": 0, "margarete": 1, "grete muller": 1} {
			es, err := g.FindEntities(ctx, scU1, []string{key})
			if err != nil {
				return err
			}
			if len(es) != want {
				t.Errorf("after the replace FindEntities(%q) found %d, want %d", key, len(es), want)
			}
		}
		return nil
	})

	// Refusals: bad entities, and an id held by another user.
	bad := []*engram.Entity{
		{ID: engram.NewID(), Namespace: engram.EntityOwner(nsU1), Name: "x", Norm: "y", Status: engram.EntityActive},
		{ID: engram.NewID(), Namespace: engram.EntityOwner(nsU1), Name: " ", Norm: "", Status: engram.EntityActive},
		{ID: engram.NewID(), Namespace: nsU1WithSession(), Name: "x", Norm: "x", Status: engram.EntityActive},
		{ID: "bad id", Namespace: engram.EntityOwner(nsU1), Name: "x", Norm: "x", Status: engram.EntityActive},
	}
	for i, e := range bad {
		err := st.Update(ctx, func(tx engram.Tx) error { return tx.PutEntity(ctx, e) })
		wantCode(t, "bad entity "+string(rune('0'+i)), err, engram.EINVALID)
	}
	theirs := *grete
	theirs.Namespace = engram.EntityOwner(nsU2)
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.PutEntity(ctx, &theirs) })
	wantCode(t, "entity id of another user", err, engram.ECONFLICT)
}

func nsU1WithSession() engram.Namespace {
	n := nsU1
	n.Session = "s1"
	return n
}

func listEntities(t testing.TB, g engram.GraphReader, s engram.Scope, f engram.EntityFilter) []engram.Entity {
	t.Helper()
	var out []engram.Entity
	for range 100 {
		page, next, err := g.ListEntities(ctx, s, f)
		if err != nil {
			t.Fatalf("ListEntities: %v", err)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		f.Cursor = next
	}
	t.Fatal("ListEntities does not end")
	return nil
}

func testGraphMentions(t *testing.T, open Opener) {
	st := open(t)
	m1 := Memory(nsU1, "Grete moved to Munich")
	m2 := Memory(engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s2"}, "Grete called")
	m3 := Memory(nsU2, "Grete is someone else here")
	Put(t, st, m1, m2, m3)
	grete := Entity(nsU1, "Grete", engram.EntityPerson)
	munich := Entity(nsU1, "Munich", engram.EntityPlace)
	PutGraph(t, st, grete, munich, mention(grete, m1, At(time.Hour)), mention(munich, m1, At(time.Hour)), mention(grete, m2, At(2*time.Hour)))

	graphView(t, st, func(g engram.GraphReader) error {
		ms, err := g.EntityMentions(ctx, scU1, []string{grete.ID}, 0)
		if err != nil {
			return err
		}
		if got, want := mentionPairs(ms), []string{grete.ID + ">" + m2.ID, grete.ID + ">" + m1.ID}; !slices.Equal(got, want) {
			t.Errorf("EntityMentions(grete) = %v, want newest first %v", got, want)
		}
		if len(ms) > 0 && (!ms[0].At.Equal(At(2*time.Hour)) || ms[0].Namespace != engram.EntityOwner(nsU1)) {
			t.Errorf("mention = %+v", ms[0])
		}
		if ms, _ := g.EntityMentions(ctx, scU1, []string{grete.ID}, 1); len(ms) != 1 {
			t.Errorf("EntityMentions limit 1 gave %d", len(ms))
		}
		ms, err = g.MemoryMentions(ctx, scU1, []string{m1.ID})
		if err != nil {
			return err
		}
		if got := mentionPairs(ms); !sameSet(got, []string{grete.ID + ">" + m1.ID, munich.ID + ">" + m1.ID}) {
			t.Errorf("MemoryMentions(m1) = %v", got)
		}
		e, err := g.GetEntity(ctx, scU1, grete.ID)
		if err != nil {
			return err
		}
		if e.Mentions != 2 {
			t.Errorf("grete's mentions = %d, want 2", e.Mentions)
		}
		_, err = g.MemoryMentions(ctx, scU1, []string{"bad id"})
		wantCode(t, "MemoryMentions bad id", err, engram.EINVALID)
		return nil
	})

	// A memory of another user, or none, cannot be linked.
	for what, m := range map[string]*engram.Memory{"another user's memory": m3, "an unknown memory": Memory(nsU1, "never stored")} {
		err := st.Update(ctx, func(tx engram.Tx) error { return tx.PutMention(ctx, mention(grete, m, At(0))) })
		wantCode(t, "mention of "+what, err, engram.ENOTFOUND)
	}

	update(t, st, func(tx engram.Tx) error {
		return tx.DeleteMention(ctx, grete.Namespace, grete.ID, m1.ID)
	})
	graphView(t, st, func(g engram.GraphReader) error {
		ms, err := g.EntityMentions(ctx, scU1, []string{grete.ID}, 0)
		if err == nil && len(ms) != 1 {
			t.Errorf("after DeleteMention grete has %d mentions, want 1", len(ms))
		}
		return err
	})
}

func testGraphRelations(t *testing.T, open Opener) {
	st := open(t)
	m1, m2, m3 := Memory(nsU1, "Grete and Hans in Munich"), Memory(nsU1, "Grete and Hans again"), Memory(nsU2, "not u1's")
	Put(t, st, m1, m2, m3)
	grete, hans, munich := Entity(nsU1, "Grete", engram.EntityPerson), Entity(nsU1, "Hans", engram.EntityPerson), Entity(nsU1, "Munich", engram.EntityPlace)
	gh := Relation(grete, hans, m1.ID, m2.ID)
	hm := Relation(hans, munich, m1.ID)
	hm.Evidence[0].Weight = 0.5
	old := Relation(grete, munich, m1.ID)
	old.InvalidAt, old.ExpiredAt = Ptr(At(time.Minute)), Ptr(At(time.Hour))
	PutGraph(t, st, grete, hans, munich, gh, hm, old)

	graphView(t, st, func(g engram.GraphReader) error {
		rs, err := g.Relations(ctx, scU1, []string{hans.ID}, engram.RelationFilter{})
		if err != nil {
			return err
		}
		if len(rs) != 2 || rs[0].ID != gh.ID || rs[1].ID != hm.ID {
			t.Fatalf("Relations(hans) = %+v, want gh (weight 2) then hm (0.5)", rs)
		}
		want := *gh
		want.Weight = 2
		sameJSON(t, "relation round trip", rs[0], want)
		if rs[1].Weight != 0.5 {
			t.Errorf("hm weight = %v, want 0.5", rs[1].Weight)
		}
		rs, err = g.Relations(ctx, scU1, []string{munich.ID}, engram.RelationFilter{All: true})
		if err != nil {
			return err
		}
		if got := relationIDs(rs); !sameSet(got, []string{hm.ID, old.ID}) {
			t.Errorf("Relations(munich, all) = %v, want the expired one too", got)
		}
		rs, err = g.Relations(ctx, scU1, nil, engram.RelationFilter{})
		if err != nil {
			return err
		}
		if got := relationIDs(rs); !sameSet(got, []string{gh.ID, hm.ID}) {
			t.Errorf("Relations(scope, current) = %v", got)
		}
		for what, c := range map[string]struct {
			ids  []string
			f    engram.RelationFilter
			want []string
		}{
			"supported by m2":       {nil, engram.RelationFilter{Memory: m2.ID}, []string{gh.ID}},
			"supported by m1, all":  {nil, engram.RelationFilter{Memory: m1.ID, All: true}, []string{gh.ID, hm.ID, old.ID}},
			"hans with munich":      {[]string{hans.ID}, engram.RelationFilter{With: munich.ID}, []string{hm.ID}},
			"munich with hans":      {[]string{munich.ID}, engram.RelationFilter{With: hans.ID}, []string{hm.ID}},
			"hans with grete label": {[]string{hans.ID}, engram.RelationFilter{With: grete.ID, Label: engram.RelationCoOccurs}, []string{gh.ID}},
			"another label":         {[]string{hans.ID}, engram.RelationFilter{Label: "knows"}, nil},
			"within hans and grete": {[]string{hans.ID, grete.ID}, engram.RelationFilter{Within: true}, []string{gh.ID}},
		} {
			rs, err := g.Relations(ctx, scU1, c.ids, c.f)
			if err != nil {
				return err
			}
			if got := relationIDs(rs); !sameSet(got, c.want) {
				t.Errorf("Relations %s = %v, want %v", what, got, c.want)
			}
		}
		bare, err := g.Relations(ctx, scU1, []string{grete.ID}, engram.RelationFilter{With: hans.ID, NoEvidence: true})
		if err != nil {
			return err
		}
		if len(bare) != 1 || bare[0].Evidence != nil || bare[0].Weight != 2 {
			t.Errorf("Relations without evidence = %+v, want gh with weight 2 and no evidence", bare)
		}
		_, err = g.Relations(ctx, scU1, nil, engram.RelationFilter{Memory: "bad id"})
		wantCode(t, "Relations with a bad memory filter", err, engram.EINVALID)
		rs, err = g.Relations(ctx, scU1, []string{}, engram.RelationFilter{})
		if err == nil && len(rs) != 0 {
			t.Errorf("Relations of no entities = %v", relationIDs(rs))
		}
		return err
	})

	// Refusals.
	for what, c := range map[string]struct {
		r    *engram.Relation
		code string
	}{
		"evidence of another user": {Relation(grete, hans, m3.ID), engram.ENOTFOUND},
		"unknown end":              {Relation(grete, Entity(nsU1, "Ghost", ""), m1.ID), engram.ENOTFOUND},
		"no evidence":              {Relation(grete, hans), engram.EINVALID},
		"a loop":                   {Relation(grete, grete, m1.ID), engram.EINVALID},
	} {
		err := st.Update(ctx, func(tx engram.Tx) error { return tx.PutRelation(ctx, c.r) })
		wantCode(t, "relation with "+what, err, c.code)
	}

	// Deleting an entity removes the relations it is an end of.
	update(t, st, func(tx engram.Tx) error { return tx.DeleteEntity(ctx, hans.Namespace, hans.ID) })
	graphView(t, st, func(g engram.GraphReader) error {
		rs, err := g.Relations(ctx, scU1, nil, engram.RelationFilter{All: true})
		if err == nil && !sameSet(relationIDs(rs), []string{old.ID}) {
			t.Errorf("after deleting hans the relations are %v, want only %s", relationIDs(rs), old.ID)
		}
		return err
	})
}

func relationIDs(rs []engram.Relation) []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = rs[i].ID
	}
	return out
}

// testGraphScope: another user and another tenant see nothing of u1's
// graph; the project's entities only with IncludeShared.
func testGraphScope(t *testing.T, open Opener) {
	st := open(t)
	shared := engram.Namespace{Org: "acme", Project: "app"}
	m1, ms := Memory(nsU1, "Grete in Munich"), Memory(shared, "Company Handbook")
	Put(t, st, m1, ms)
	grete, munich, handbook := Entity(nsU1, "Grete", engram.EntityPerson), Entity(nsU1, "Munich", engram.EntityPlace), Entity(shared, "Handbook", "")
	// The same name in another tenant and for another user.
	otherTenant, otherUser := Entity(nsOther, "Grete", engram.EntityPerson), Entity(nsU2, "Grete", engram.EntityPerson)
	PutGraph(t, st, grete, munich, handbook, otherTenant, otherUser,
		mention(grete, m1, At(0)), mention(handbook, ms, At(0)), Relation(grete, munich, m1.ID))

	for _, s := range []engram.Scope{engram.ScopeOf(nsU2), engram.ScopeOf(nsOther)} {
		graphView(t, st, func(g engram.GraphReader) error {
			_, err := g.GetEntity(ctx, s, grete.ID)
			wantCode(t, "u1's entity from "+s.Tenant()+"/"+s.User, err, engram.ENOTFOUND)
			es, err := g.FindEntities(ctx, s, []string{"grete"})
			if err != nil {
				return err
			}
			if len(es) != 1 || es[0].Namespace.User != s.User || es[0].Namespace.Org != s.Org {
				t.Errorf("FindEntities(grete) in %+v = %+v, want only its own", s, es)
			}
			if es, _ := g.EntitiesByToken(ctx, s, []string{"munich"}, 10); len(es) != 0 {
				t.Errorf("EntitiesByToken(munich) in %+v found %d", s, len(es))
			}
			if ms, _ := g.EntityMentions(ctx, s, []string{grete.ID}, 0); len(ms) != 0 {
				t.Errorf("EntityMentions of u1's entity in %+v = %v", s, ms)
			}
			if ms, _ := g.MemoryMentions(ctx, s, []string{m1.ID}); len(ms) != 0 {
				t.Errorf("MemoryMentions of u1's memory in %+v = %v", s, ms)
			}
			if rs, _ := g.Relations(ctx, s, []string{grete.ID}, engram.RelationFilter{All: true}); len(rs) != 0 {
				t.Errorf("Relations of u1's entity in %+v = %v", s, relationIDs(rs))
			}
			if rs, _ := g.Relations(ctx, s, nil, engram.RelationFilter{All: true}); len(rs) != 0 {
				t.Errorf("Relations of the scope %+v = %v", s, relationIDs(rs))
			}
			if es := listEntities(t, g, s, engram.EntityFilter{}); len(es) != 1 {
				t.Errorf("ListEntities in %+v = %d entities, want its own 1", s, len(es))
			}
			return nil
		})
	}
	graphView(t, st, func(g engram.GraphReader) error {
		if got := entityIDs(listEntities(t, g, scU1, engram.EntityFilter{})); !slices.Equal(got, []string{grete.ID, munich.ID}) {
			t.Errorf("u1 lists %v without shared", got)
		}
		withShared := scU1
		withShared.IncludeShared = true
		if got := entityIDs(listEntities(t, g, withShared, engram.EntityFilter{})); !slices.Equal(got, []string{grete.ID, handbook.ID, munich.ID}) {
			t.Errorf("u1 lists %v with shared", got)
		}
		// Agent and session do not narrow entities.
		narrow := scU1
		narrow.Session = "s9"
		if _, err := g.GetEntity(ctx, narrow, grete.ID); err != nil {
			t.Errorf("GetEntity in a session scope: %v", err)
		}
		return nil
	})
	// Writes name the owner: another user's namespace deletes nothing.
	update(t, st, func(tx engram.Tx) error {
		return tx.DeleteEntity(ctx, engram.EntityOwner(nsU2), grete.ID)
	})
	graphView(t, st, func(g engram.GraphReader) error {
		_, err := g.GetEntity(ctx, scU1, grete.ID)
		return err
	})
}

// testGraphPurge: a hard delete and a scope purge leave no entity,
// mention or relation that only the purged memories supported.
func testGraphPurge(t *testing.T, open Opener) {
	st := open(t)
	inS1 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	inS2 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s2"}
	m1, m2, m3, mOther := Memory(inS1, "Grete and Hans"), Memory(inS2, "Grete and Lena"), Memory(inS2, "Lena alone"), Memory(nsU2, "Grete of u2")
	Put(t, st, m1, m2, m3, mOther)
	grete, hans, lena := Entity(nsU1, "Grete", ""), Entity(nsU1, "Hans", ""), Entity(nsU1, "Lena", "")
	greteU2 := Entity(nsU2, "Grete", "")
	gh, gl := Relation(grete, hans, m1.ID), Relation(grete, lena, m2.ID)
	PutGraph(t, st, grete, hans, lena, greteU2,
		mention(grete, m1, At(0)), mention(hans, m1, At(0)), mention(grete, m2, At(0)), mention(lena, m2, At(0)), mention(lena, m3, At(0)),
		mention(greteU2, mOther, At(0)), gh, gl)

	// A hard delete of m1: hans and gh go, grete stays (m2 names her).
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, m1.Namespace, m1.ID) })
	graphView(t, st, func(g engram.GraphReader) error {
		if got := entityIDs(listEntities(t, g, scU1, engram.EntityFilter{})); !slices.Equal(got, []string{grete.ID, lena.ID}) {
			t.Errorf("after the hard delete u1's entities are %v, want grete and lena", got)
		}
		if rs, _ := g.Relations(ctx, scU1, nil, engram.RelationFilter{All: true}); !slices.Equal(relationIDs(rs), []string{gl.ID}) {
			t.Errorf("after the hard delete u1's relations are %v, want %s", relationIDs(rs), gl.ID)
		}
		if ms, _ := g.MemoryMentions(ctx, scU1, []string{m1.ID}); len(ms) != 0 {
			t.Errorf("mentions of the deleted memory: %v", ms)
		}
		return nil
	})

	// A purge of session s2: every entity of u1 was named only there.
	if _, err := purgeScope(st, engram.ScopeOf(inS2)); err != nil {
		t.Fatal(err)
	}
	graphView(t, st, func(g engram.GraphReader) error {
		if es := listEntities(t, g, scU1, engram.EntityFilter{}); len(es) != 0 {
			t.Errorf("after the purge u1 still has entities %v", entityIDs(es))
		}
		if rs, _ := g.Relations(ctx, scU1, nil, engram.RelationFilter{All: true}); len(rs) != 0 {
			t.Errorf("after the purge u1 still has relations %v", relationIDs(rs))
		}
		if es := listEntities(t, g, engram.ScopeOf(nsU2), engram.EntityFilter{}); len(es) != 1 {
			t.Errorf("the purge of u1 took u2's entities: %d left", len(es))
		}
		return nil
	})

	// A purge of the whole user removes entities even without mentions.
	PutGraph(t, st, Entity(nsU2, "Unmentioned", ""))
	if _, err := purgeScope(st, engram.ScopeOf(nsU2)); err != nil {
		t.Fatal(err)
	}
	graphView(t, st, func(g engram.GraphReader) error {
		if es := listEntities(t, g, engram.ScopeOf(nsU2), engram.EntityFilter{}); len(es) != 0 {
			t.Errorf("after the purge of u2 entities are left: %v", entityIDs(es))
		}
		return nil
	})
}

func purgeScope(st engram.Store, s engram.Scope) (c engram.PurgeCounts, err error) {
	err = st.Update(ctx, func(tx engram.Tx) error {
		c, err = tx.PurgeScope(ctx, s)
		return err
	})
	return c, err
}

// testGraphRelationsBatch: PutRelations (engram.RelationsWriter) stores
// relations exactly as PutRelation does,
// replaces their evidence on a second put, and refuses what PutRelation
// refuses; a malformed or repeated relation stores nothing.
func testGraphRelationsBatch(t *testing.T, open Opener) {
	st := open(t)
	putAll := func(rs ...*engram.Relation) error {
		return st.Update(ctx, func(tx engram.Tx) error { return tx.PutRelations(ctx, rs) })
	}
	m1, m2, m3 := Memory(nsU1, "Grete und Hans in München"), Memory(nsU1, "王芳 y Hans otra vez"), Memory(nsU2, "not u1's")
	Put(t, st, m1, m2, m3)
	grete, hans, wang := Entity(nsU1, "Grete", engram.EntityPerson), Entity(nsU1, "Hans", engram.EntityPerson), Entity(nsU1, "王芳", engram.EntityPerson)
	theirs := Entity(nsU2, "Grete", engram.EntityPerson)
	PutGraph(t, st, grete, hans, wang, theirs)
	gh, hw, gw := Relation(grete, hans, m1.ID, m2.ID), Relation(hans, wang, m2.ID), Relation(grete, wang, m1.ID)
	hw.Evidence[0].Weight = 0.25
	gw.InvalidAt, gw.ExpiredAt = Ptr(At(time.Minute)), Ptr(At(time.Hour))
	if err := putAll(gh, hw, gw); err != nil {
		t.Fatalf("PutRelations: %v", err)
	}
	read := func(what string, want ...*engram.Relation) {
		t.Helper()
		graphView(t, st, func(g engram.GraphReader) error {
			rs, err := g.Relations(ctx, scU1, nil, engram.RelationFilter{All: true})
			if err != nil {
				return err
			}
			byID := map[string]engram.Relation{}
			for _, r := range rs {
				byID[r.ID] = r
			}
			if len(rs) != len(want) {
				t.Errorf("%s: relations %v, want %d", what, relationIDs(rs), len(want))
			}
			for _, w := range want {
				x := *w
				x.Weight = 0
				for _, ev := range w.Evidence {
					x.Weight += ev.Weight
				}
				sameJSON(t, what+" "+w.ID, byID[w.ID], x)
			}
			return nil
		})
	}
	read("after PutRelations", gh, hw, gw)

	// A second put replaces the evidence, as PutRelation does.
	gh.Evidence = []engram.Evidence{{MemoryID: m2.ID, Weight: 0.5}}
	gh.InvalidAt = Ptr(At(2 * time.Minute))
	if err := putAll(gh); err != nil {
		t.Fatalf("PutRelations again: %v", err)
	}
	read("after a second put", gh, hw, gw)

	twice := Relation(grete, hans, m1.ID)
	for what, c := range map[string]struct {
		rs   []*engram.Relation
		code string
	}{
		"an id given twice":        {[]*engram.Relation{twice, twice}, engram.EINVALID},
		"a loop among good ones":   {[]*engram.Relation{Relation(hans, wang, m1.ID), Relation(grete, grete, m1.ID)}, engram.EINVALID},
		"evidence of another user": {[]*engram.Relation{Relation(hans, wang, m1.ID), Relation(grete, hans, m3.ID)}, engram.ENOTFOUND},
		"an unknown end":           {[]*engram.Relation{Relation(grete, Entity(nsU1, "Ghost", ""), m1.ID)}, engram.ENOTFOUND},
		"an end of another user":   {[]*engram.Relation{Relation(grete, theirs, m1.ID)}, engram.ENOTFOUND},
	} {
		wantCode(t, "PutRelations with "+what, putAll(c.rs...), c.code)
	}
	// Another user's relation id is a conflict.
	stolen := Relation(grete, hans, m1.ID)
	other := Relation(theirs, Entity(nsU2, "Ana", ""), m3.ID)
	PutGraph(t, st, &engram.Entity{ID: other.Target, Namespace: theirs.Namespace, Name: "Ana", Norm: "ana", Status: engram.EntityActive, CreatedAt: At(0), UpdatedAt: At(0)}, other)
	stolen.ID = other.ID
	wantCode(t, "PutRelations over another user's id", putAll(stolen), engram.ECONFLICT)
	read("after the refusals", gh, hw, gw)
}

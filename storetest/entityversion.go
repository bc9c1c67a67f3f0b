package storetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// entityHistory returns the ops of the entity's versions in s, in order.
func entityHistory(t testing.TB, st engram.Store, s engram.Scope, id string) []engram.EntityVersion {
	t.Helper()
	var out []engram.EntityVersion
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		out, err = r.EntityHistory(ctx, s, id)
		return err
	})
	if err != nil {
		t.Fatalf("entity history: %v", err)
	}
	return out
}

func opsOf(vs []engram.EntityVersion) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, v.Op)
	}
	return out
}

// testEntityHistory: the writes of an entity record versions with actor
// and time; a merge keeps the merged entity's history while its target
// lives; a delete leaves one nameless version; a purge that prunes the
// entities prunes their history; another user's entity has none to read.
func testEntityHistory(t *testing.T, open Opener) {
	st := open(t)
	actx := engram.WithActor(ctx, "tester")
	m1 := Memory(nsU1, "Grete in München")
	Put(t, st, m1)
	grete := Entity(nsU1, "Grete", engram.EntityPerson)
	oma := Entity(nsU1, "Oma Grete", "")
	gw := func(fn func(gw engram.GraphWriter) error) {
		t.Helper()
		update(t, st, func(tx engram.Tx) error {
			return fn(tx)
		})
	}
	gw(func(w engram.GraphWriter) error {
		for _, e := range []*engram.Entity{grete, oma} {
			if err := w.PutEntity(actx, e); err != nil {
				return err
			}
		}
		if err := w.PutMention(ctx, mention(grete, m1, At(0))); err != nil {
			return err
		}
		if err := w.PutMention(ctx, mention(oma, m1, At(0))); err != nil {
			return err
		}
		if err := w.PutEntity(actx, grete); err != nil { // unchanged: no version
			return err
		}
		grete.Aliases = []string{"Gretchen"}
		if err := w.PutEntity(actx, grete); err != nil {
			return err
		}
		grete.Name, grete.Norm = "Grete Müller", engram.NormalizeName("Grete Müller")
		return w.PutEntity(actx, grete)
	})
	vs := entityHistory(t, st, scU1, grete.ID)
	if got, want := opsOf(vs), []string{engram.EntityCreated, engram.EntityAliased, engram.EntityRenamed}; !slices.Equal(got, want) {
		t.Fatalf("history ops = %v, want %v", got, want)
	}
	for i, v := range vs {
		if v.Version != i+1 || v.Actor != "tester" || v.EntityID != grete.ID || v.Entity == nil || v.Namespace != engram.EntityOwner(nsU1) {
			t.Errorf("version %d = %+v", i, v)
		}
	}
	if vs[2].Entity.Name != "Grete Müller" || !slices.Equal(vs[1].Entity.Aliases, []string{"Gretchen"}) {
		t.Errorf("snapshots: %+v / %+v", vs[1].Entity, vs[2].Entity)
	}
	if got := entityHistory(t, st, engram.ScopeOf(nsU2), grete.ID); len(got) != 0 {
		t.Errorf("another user reads u1's entity history: %v", opsOf(got))
	}

	// Oma Grete merged into Grete: her history stays, ending in merged.
	gw(func(w engram.GraphWriter) error {
		mctx := engram.WithEntityChange(actx, engram.EntityChange{Op: engram.EntityMerged, Related: []string{grete.ID}, At: At(0)})
		return w.DeleteEntity(mctx, oma.Namespace, oma.ID)
	})
	if got, want := opsOf(entityHistory(t, st, scU1, oma.ID)), []string{engram.EntityCreated, engram.EntityMerged}; !slices.Equal(got, want) {
		t.Errorf("merged entity's history = %v, want %v", got, want)
	}
	// Deleting Grete takes her names, and Oma Grete's history, with her.
	gw(func(w engram.GraphWriter) error { return w.DeleteEntity(actx, grete.Namespace, grete.ID) })
	vs = entityHistory(t, st, scU1, grete.ID)
	if len(vs) != 1 || vs[0].Op != engram.EntityDeleted || vs[0].Entity != nil || vs[0].Actor != "tester" {
		t.Errorf("after the delete the history is %+v, want one nameless delete", vs)
	}
	if got := entityHistory(t, st, scU1, oma.ID); len(got) != 0 {
		t.Errorf("the delete left the merged entity's history: %v", opsOf(got))
	}

	// A purge prunes the history of the entities it prunes.
	lena := Entity(nsU1, "Lena", "")
	PutGraph(t, st, lena, mention(lena, m1, At(0)))
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, m1.Namespace, m1.ID) })
	if got := entityHistory(t, st, scU1, lena.ID); len(got) != 0 {
		t.Errorf("after the purge the pruned entity's history is %v", opsOf(got))
	}
}

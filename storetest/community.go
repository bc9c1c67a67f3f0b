package storetest

import (
	"maps"
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// communityView runs fn with the store's CommunityReader.
func communityView(t testing.TB, st engram.Store, fn func(c engram.CommunityReader) error) {
	t.Helper()
	view(t, st, func(r engram.Reader) error {
		return fn(r)
	})
}

// communityUpdate runs fn with the store's CommunityWriter.
func communityUpdate(t testing.TB, st engram.Store, fn func(w engram.CommunityWriter) error) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error {
		return fn(tx)
	})
}

func dirty(t testing.TB, st engram.Store, n engram.Namespace) []string {
	t.Helper()
	var out []string
	communityView(t, st, func(c engram.CommunityReader) error {
		var err error
		out, err = c.DirtyEntities(ctx, n)
		return err
	})
	return out
}

func clearDirty(t testing.TB, st engram.Store, n engram.Namespace) {
	t.Helper()
	communityUpdate(t, st, func(w engram.CommunityWriter) error { return w.ClearDirty(ctx, n) })
}

func sorted(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func testCommunities(t *testing.T, open Opener) {
	st := open(t)
	owner, other := engram.EntityOwner(nsU1), engram.EntityOwner(nsU2)
	m1, m2, m3 := Memory(nsU1, "Grete and Hans in München"), Memory(nsU1, "Grete und Hans"), Memory(nsU2, "not u1's")
	Put(t, st, m1, m2, m3)
	grete, hans, munich := Entity(nsU1, "Grete", engram.EntityPerson), Entity(nsU1, "Hans", engram.EntityPerson), Entity(nsU1, "München", engram.EntityPlace)
	theirs := Entity(nsU2, "Grete", engram.EntityPerson)
	gh, hm := Relation(grete, hans, m1.ID, m2.ID), Relation(hans, munich, m1.ID)
	hm.Evidence[0].Weight = 0.5
	old := Relation(grete, munich, m1.ID)
	old.ExpiredAt = Ptr(At(0))
	PutGraph(t, st, grete, hans, munich, theirs, gh, hm, old)

	// Edges: current relations only, summed, each pair once in id order.
	communityView(t, st, func(c engram.CommunityReader) error {
		es, err := c.GraphEdges(ctx, owner)
		if err != nil {
			return err
		}
		want := []engram.Edge{
			{Source: min(grete.ID, hans.ID), Target: max(grete.ID, hans.ID), Weight: 2},
			{Source: min(hans.ID, munich.ID), Target: max(hans.ID, munich.ID), Weight: 0.5},
		}
		slices.SortFunc(want, func(a, b engram.Edge) int { return compareEdge(a, b) })
		if !slices.Equal(es, want) {
			t.Errorf("GraphEdges = %+v, want %+v", es, want)
		}
		if es, _ := c.GraphEdges(ctx, other); len(es) != 0 {
			t.Errorf("u2's edges = %+v, want none", es)
		}
		owners, err := c.DirtyOwners(ctx, 10)
		if err != nil {
			return err
		}
		if !slices.Contains(owners, owner) || slices.Contains(owners, other) {
			t.Errorf("DirtyOwners = %v, want u1 and not u2 (whose graph has no relation)", owners)
		}
		return nil
	})

	// Every end of a written relation is dirty; a change of evidence
	// marks its two ends again.
	if got, want := dirty(t, st, owner), sorted(grete.ID, hans.ID, munich.ID); !slices.Equal(got, want) {
		t.Errorf("dirty after the relations = %v, want %v", got, want)
	}
	clearDirty(t, st, owner)
	if got := dirty(t, st, owner); len(got) != 0 {
		t.Errorf("dirty after ClearDirty = %v", got)
	}
	update(t, st, func(tx engram.Tx) error {
		return tx.AddEvidence(ctx, owner, hm.ID, engram.Evidence{MemoryID: m2.ID, Weight: 1})
	})
	if got, want := dirty(t, st, owner), sorted(hans.ID, munich.ID); !slices.Equal(got, want) {
		t.Errorf("dirty after AddEvidence = %v, want %v", got, want)
	}
	// Writing again what is dirty already (a replace, an upsert of
	// evidence) is no conflict.
	hm.Evidence = append(hm.Evidence, engram.Evidence{MemoryID: m2.ID, Weight: 1})
	PutGraph(t, st, hm)
	update(t, st, func(tx engram.Tx) error {
		return tx.AddEvidence(ctx, owner, hm.ID, engram.Evidence{MemoryID: m2.ID, Weight: 0.5})
	})
	clearDirty(t, st, owner)

	// A community round trip, scoped to its user.
	c1 := &engram.Community{
		ID: engram.NewID(), Namespace: owner, Members: sorted(grete.ID, hans.ID), Names: []string{"Grete", "Hans"},
		Summary: "Grete, Hans: Grete und Hans 你好", Abstract: "Zwei Freunde.", Sources: sorted(m1.ID, m2.ID), UpdatedAt: At(0),
	}
	communityUpdate(t, st, func(w engram.CommunityWriter) error { return w.PutCommunity(ctx, c1) })
	communityView(t, st, func(c engram.CommunityReader) error {
		got, err := c.GetCommunity(ctx, scU1, c1.ID)
		if err != nil {
			return err
		}
		sameJSON(t, "community round trip", got, c1)
		_, err = c.GetCommunity(ctx, engram.ScopeOf(nsU2), c1.ID)
		wantCode(t, "another user's community", err, engram.ENOTFOUND)
		_, err = c.GetCommunity(ctx, scU1, "bad id")
		wantCode(t, "malformed community id", err, engram.EINVALID)
		if cs, err := c.Communities(ctx, engram.ScopeOf(nsU2)); err != nil || len(cs) != 0 {
			t.Errorf("u2's communities = %v (%v), want none", cs, err)
		}
		of, err := c.EntityCommunities(ctx, scU1, []string{grete.ID, hans.ID, munich.ID})
		if err != nil {
			return err
		}
		if want := map[string]string{grete.ID: c1.ID, hans.ID: c1.ID}; !maps.Equal(of, want) {
			t.Errorf("EntityCommunities = %v, want %v", of, want)
		}
		if of, _ := c.EntityCommunities(ctx, engram.ScopeOf(nsU2), []string{grete.ID}); len(of) != 0 {
			t.Errorf("u2 sees u1's membership: %v", of)
		}
		return nil
	})

	// Refusals.
	for what, c := range map[string]struct {
		c    *engram.Community
		code string
	}{
		"one member":              {&engram.Community{ID: engram.NewID(), Namespace: owner, Members: []string{grete.ID}}, engram.EINVALID},
		"unsorted members":        {&engram.Community{ID: engram.NewID(), Namespace: owner, Members: []string{max(grete.ID, hans.ID), min(grete.ID, hans.ID)}}, engram.EINVALID},
		"a session":               {&engram.Community{ID: engram.NewID(), Namespace: nsU1WithSession(), Members: sorted(grete.ID, hans.ID)}, engram.EINVALID},
		"another user's member":   {&engram.Community{ID: engram.NewID(), Namespace: owner, Members: sorted(grete.ID, theirs.ID)}, engram.ENOTFOUND},
		"another user's source":   {&engram.Community{ID: engram.NewID(), Namespace: owner, Members: sorted(grete.ID, hans.ID), Sources: []string{m3.ID}}, engram.ENOTFOUND},
		"an id of another user's": {&engram.Community{ID: c1.ID, Namespace: other, Members: sorted(theirs.ID, engram.NewID())}, engram.ECONFLICT},
	} {
		err := st.Update(ctx, func(tx engram.Tx) error { return tx.PutCommunity(ctx, c.c) })
		wantCode(t, "community with "+what, err, c.code)
	}

	// A second community takes hans over; deleting münchen removes it
	// (its summary may name münchen) and marks hans dirty.
	c2 := &engram.Community{ID: engram.NewID(), Namespace: owner, Members: sorted(hans.ID, munich.ID), Sources: []string{}, UpdatedAt: At(0)}
	communityUpdate(t, st, func(w engram.CommunityWriter) error { return w.PutCommunity(ctx, c2) })
	communityView(t, st, func(c engram.CommunityReader) error {
		of, err := c.EntityCommunities(ctx, scU1, []string{hans.ID})
		if err == nil && of[hans.ID] != c2.ID {
			t.Errorf("hans is in %q, want the newer community", of[hans.ID])
		}
		return err
	})
	communityUpdate(t, st, func(w engram.CommunityWriter) error { return w.DeleteCommunity(ctx, owner, c1.ID) })
	communityUpdate(t, st, func(w engram.CommunityWriter) error { return w.PutCommunity(ctx, c1) })
	clearDirty(t, st, owner)
	update(t, st, func(tx engram.Tx) error { return tx.DeleteEntity(ctx, owner, munich.ID) })
	communityView(t, st, func(c engram.CommunityReader) error {
		cs, err := c.Communities(ctx, scU1)
		if err == nil && (len(cs) != 1 || cs[0].ID != c1.ID) {
			t.Errorf("after deleting münchen the communities are %+v, want only the first", cs)
		}
		return err
	})
	if got := dirty(t, st, owner); !slices.Contains(got, hans.ID) {
		t.Errorf("dirty after the entity delete = %v, want hans in it", got)
	}

	// A hard delete of a memory the summary quotes removes the community.
	clearDirty(t, st, owner)
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, m2.Namespace, m2.ID) })
	communityView(t, st, func(c engram.CommunityReader) error {
		cs, err := c.Communities(ctx, scU1)
		if err == nil && len(cs) != 0 {
			t.Errorf("after purging a quoted memory the communities are %+v, want none", cs)
		}
		return err
	})
	if got := dirty(t, st, owner); !slices.Contains(got, grete.ID) || !slices.Contains(got, hans.ID) {
		t.Errorf("dirty after the purge = %v, want grete and hans", got)
	}
}

func compareEdge(a, b engram.Edge) int {
	if a.Source != b.Source {
		if a.Source < b.Source {
			return -1
		}
		return 1
	}
	if a.Target < b.Target {
		return -1
	}
	if a.Target > b.Target {
		return 1
	}
	return 0
}

// DeleteEntity deletes an entity of n's tenant and user, failing the test
// on an error.
func DeleteEntity(t testing.TB, st engram.Store, n engram.Namespace, id string) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error { return tx.DeleteEntity(ctx, n, id) })
}

// Purge hard-deletes m, failing the test on an error.
func Purge(t testing.TB, st engram.Store, m *engram.Memory) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, m.Namespace, m.ID) })
}

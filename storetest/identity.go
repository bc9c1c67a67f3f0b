package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func idUpdate(st engram.Store, fn func(w engram.IdentityWriter) error) error {
	return st.Update(ctx, func(tx engram.Tx) error { return fn(tx) })
}

func idView(st engram.Store, fn func(r engram.IdentityReader) error) error {
	return st.View(ctx, func(r engram.Reader) error { return fn(r) })
}

// testIdentities: modalities, identities, observations, persons and the
// history round-trip within their user; another user of the tenant and
// another tenant see none of them and cannot take over an id; a purge of
// the user removes them all, a purge of one of its sessions none.
func testIdentities(t *testing.T, open Opener) {
	st := open(t)
	alice := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	bob := engram.Namespace{Org: "acme", Project: "app", User: "bob"}
	other := engram.Namespace{Org: "globex", Project: "app", User: "alice"}
	sa := engram.ScopeOf(alice)

	face := &engram.EmbeddingModality{Namespace: alice, Name: "face", Dim: 3, CreatedAt: At(0)}
	id1 := &engram.Identity{ID: engram.NewID(), Namespace: alice, Modality: "face", Label: "Gesicht 张", Centroid: []float32{1, 0, 0.5}, Count: 2, CreatedAt: At(0), UpdatedAt: At(time.Second)}
	o1 := &engram.Observation{ID: engram.NewID(), Namespace: alice, Modality: "face", Embedding: []float32{1, 0, 0.25}, IdentityID: id1.ID,
		EpisodeID: engram.NewID(), Span: &engram.MediaSpan{StartMS: 10, EndMS: 900}, At: At(0)}
	o2 := &engram.Observation{ID: engram.NewID(), Namespace: alice, Modality: "face", Embedding: []float32{1, 0, 0.75}, IdentityID: id1.ID, At: At(time.Minute)}
	p := &engram.Person{ID: engram.NewID(), Namespace: alice, Name: "Alicia", Aliases: []string{"Ali"}, Source: engram.PersonAsserted, CreatedAt: At(0), UpdatedAt: At(0)}
	ev := &engram.IdentityEvent{ID: engram.NewID(), Namespace: alice, Op: engram.IdentityLink, Identities: []string{id1.ID}, PersonID: p.ID, Source: engram.PersonAsserted, Actor: "test", At: At(time.Hour)}
	err := idUpdate(st, func(w engram.IdentityWriter) error {
		for _, err := range []error{w.PutModality(ctx, face), w.PutIdentity(ctx, id1), w.InsertObservation(ctx, o1), w.InsertObservation(ctx, o2),
			w.PutPerson(ctx, p), w.InsertIdentityEvent(ctx, ev)} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("write identities: %v", err)
	}
	// Declaring twice and taking over another user's ids are conflicts.
	for name, fn := range map[string]func(w engram.IdentityWriter) error{
		"modality twice":     func(w engram.IdentityWriter) error { return w.PutModality(ctx, face) },
		"bob takes identity": func(w engram.IdentityWriter) error { x := *id1; x.Namespace = bob; return w.PutIdentity(ctx, &x) },
		"bob takes person":   func(w engram.IdentityWriter) error { x := *p; x.Namespace = bob; return w.PutPerson(ctx, &x) },
		"observation twice":  func(w engram.IdentityWriter) error { return w.InsertObservation(ctx, o1) },
	} {
		if err := idUpdate(st, fn); engram.ErrorCode(err) != engram.ECONFLICT {
			t.Errorf("%s: %v, want %s", name, err, engram.ECONFLICT)
		}
	}
	bad := *o1
	bad.ID, bad.Embedding = engram.NewID(), []float32{0, 0, 0}
	if err := idUpdate(st, func(w engram.IdentityWriter) error { return w.InsertObservation(ctx, &bad) }); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("an all-zero embedding: %v, want %s", err, engram.EINVALID)
	}

	err = idView(st, func(r engram.IdentityReader) error {
		ms, err := r.Modalities(ctx, sa)
		if err != nil || len(ms) != 1 || ms[0].Dim != 3 || ms[0].Name != "face" || ms[0].Namespace != alice {
			t.Errorf("Modalities = %+v, %v", ms, err)
		}
		got, err := r.GetIdentity(ctx, sa, id1.ID)
		if err != nil || got.Label != id1.Label || !slices.Equal(got.Centroid, id1.Centroid) || got.Count != 2 || !got.UpdatedAt.Equal(At(time.Second)) || got.Namespace != alice {
			t.Errorf("GetIdentity = %+v, %v", got, err)
		}
		obs, err := r.ListObservations(ctx, sa, engram.ObservationFilter{IdentityIDs: []string{id1.ID}})
		if err != nil || len(obs) != 2 || obs[0].ID != o2.ID || obs[1].Span == nil || *obs[1].Span != *o1.Span || obs[1].EpisodeID != o1.EpisodeID || !slices.Equal(obs[1].Embedding, o1.Embedding) {
			t.Errorf("ListObservations = %+v, %v", obs, err)
		}
		if obs, err := r.ListObservations(ctx, sa, engram.ObservationFilter{IDs: []string{o1.ID}}); err != nil || len(obs) != 1 || obs[0].ID != o1.ID {
			t.Errorf("ListObservations by id = %+v, %v", obs, err)
		}
		gp, err := r.GetPerson(ctx, sa, p.ID)
		if err != nil || gp.Name != "Alicia" || !slices.Equal(gp.Aliases, p.Aliases) || gp.Source != engram.PersonAsserted {
			t.Errorf("GetPerson = %+v, %v", gp, err)
		}
		for _, id := range []string{id1.ID, p.ID} {
			h, err := r.IdentityHistory(ctx, sa, id)
			if err != nil || len(h) != 1 || h[0].Op != engram.IdentityLink || h[0].PersonID != p.ID || !slices.Equal(h[0].Identities, ev.Identities) || !h[0].At.Equal(ev.At) {
				t.Errorf("IdentityHistory(%s) = %+v, %v", id, h, err)
			}
		}
		// Nothing of alice's is seen from bob's scope or another tenant.
		for _, n := range []engram.Namespace{bob, other} {
			s := engram.ScopeOf(n)
			if _, err := r.GetIdentity(ctx, s, id1.ID); !engram.IsNotFound(err) {
				t.Errorf("%v reads alice's identity: %v", n, err)
			}
			if _, err := r.GetPerson(ctx, s, p.ID); !engram.IsNotFound(err) {
				t.Errorf("%v reads alice's person: %v", n, err)
			}
			ids, _ := r.ListIdentities(ctx, s, engram.IdentityFilter{})
			obs, _ := r.ListObservations(ctx, s, engram.ObservationFilter{IdentityIDs: []string{id1.ID}})
			ps, _ := r.ListPersons(ctx, s)
			ms, _ := r.Modalities(ctx, s)
			h, _ := r.IdentityHistory(ctx, s, id1.ID)
			if len(ids)+len(obs)+len(ps)+len(ms)+len(h) != 0 {
				t.Errorf("%v sees alice's identity records: %v %v %v %v %v", n, ids, obs, ps, ms, h)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Moving, filtering by person, deleting.
	id2 := &engram.Identity{ID: engram.NewID(), Namespace: alice, Modality: "face", Centroid: []float32{0, 1, 0}, Count: 1, PersonID: p.ID, CreatedAt: At(0), UpdatedAt: At(0)}
	err = idUpdate(st, func(w engram.IdentityWriter) error {
		if err := w.PutIdentity(ctx, id2); err != nil {
			return err
		}
		return w.MoveObservations(ctx, alice, []string{o2.ID}, id2.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = idView(st, func(r engram.IdentityReader) error {
		if ids, err := r.ListIdentities(ctx, sa, engram.IdentityFilter{PersonID: p.ID}); err != nil || len(ids) != 1 || ids[0].ID != id2.ID {
			t.Errorf("ListIdentities by person = %+v, %v", ids, err)
		}
		if obs, err := r.ListObservations(ctx, sa, engram.ObservationFilter{IdentityIDs: []string{id2.ID}}); err != nil || len(obs) != 1 || obs[0].ID != o2.ID {
			t.Errorf("moved observations = %+v, %v", obs, err)
		}
		return nil
	})
	if err := idUpdate(st, func(w engram.IdentityWriter) error { return w.DeleteIdentity(ctx, alice, id2.ID) }); err != nil {
		t.Fatal(err)
	}
	_ = idView(st, func(r engram.IdentityReader) error {
		if obs, _ := r.ListObservations(ctx, sa, engram.ObservationFilter{IDs: []string{o2.ID}}); len(obs) != 0 {
			t.Errorf("a deleted identity left its observations: %+v", obs)
		}
		return nil
	})

	// A purge of a session of alice keeps her identities; of alice, not.
	purge := func(s engram.Scope) {
		t.Helper()
		if err := st.Update(ctx, func(tx engram.Tx) error { _, err := tx.PurgeScope(ctx, s); return err }); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		n := 0
		_ = idView(st, func(r engram.IdentityReader) error {
			ids, _ := r.ListIdentities(ctx, sa, engram.IdentityFilter{})
			obs, _ := r.ListObservations(ctx, sa, engram.ObservationFilter{IdentityIDs: []string{id1.ID}})
			ps, _ := r.ListPersons(ctx, sa)
			ms, _ := r.Modalities(ctx, sa)
			h, _ := r.IdentityHistory(ctx, sa, id1.ID)
			n = len(ids) + len(obs) + len(ps) + len(ms) + len(h)
			return nil
		})
		return n
	}
	before := count()
	purge(engram.Scope{Org: alice.Org, Project: alice.Project, User: alice.User, Session: "s1"})
	if got := count(); got != before || got == 0 {
		t.Errorf("a session's purge changed alice's identity records from %d to %d", before, got)
	}
	purge(sa)
	if got := count(); got != 0 {
		t.Errorf("alice's purge left %d identity records", got)
	}
}

package storetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// memoryTwins are three memories with one id: u1's, u2's and the
// project's (no user), each with a version, vectors, an entity mentioning
// it and a relation it supports.
type memoryTwins struct {
	mine, theirs, shared *engram.Memory
	entities             map[string]*engram.Entity // by user
	relations            map[string]*engram.Relation
}

func putMemoryTwins(t *testing.T, st engram.Store) memoryTwins {
	t.Helper()
	nsShared := engram.Namespace{Org: nsU1.Org, Project: nsU1.Project}
	tw := memoryTwins{mine: Memory(nsU1, "Ich wohne in Köln."),
		entities: map[string]*engram.Entity{}, relations: map[string]*engram.Relation{}}
	theirs, shared := *tw.mine, *tw.mine
	theirs.Namespace, theirs.Value = nsU2, "Vivo en Sevilla."
	shared.Namespace, shared.Value = nsShared, "项目的记录"
	tw.theirs, tw.shared = &theirs, &shared
	Put(t, st, tw.mine)
	Put(t, st, tw.theirs, tw.shared)
	for i, m := range []*engram.Memory{tw.mine, tw.theirs, tw.shared} {
		Put(t, st, Version(m, 1, engram.OpAdd))
		update(t, st, func(tx engram.Tx) error {
			return tx.PutVectors(ctx, m.Namespace, m.ID, embA, []engram.FieldVector{{Field: engram.FieldValue, Vec: vec(i+1, 3)}})
		})
		a, b := Entity(m.Namespace, "Ana", "person"), Entity(m.Namespace, "Sevilla", "place")
		r := Relation(a, b, m.ID)
		PutGraph(t, st, a, b, mention(a, m, At(0)), r)
		tw.entities[m.Namespace.User], tw.relations[m.Namespace.User] = a, r
	}
	return tw
}

// testMemoryIDsPerUser: another user, and the project itself, may hold a
// memory's id: each insert succeeds, and each user reads, searches,
// touches, replaces, locates and purges only their own, with its history,
// vectors, mentions and evidence; a scope that includes shared records
// reads the user's own first. The same user holding the id twice, in
// another session too, is still ECONFLICT.
func testMemoryIDsPerUser(t *testing.T, open Opener) {
	st := open(t)
	tw := putMemoryTwins(t, st)
	twin := *tw.mine
	twin.Namespace.Session, twin.Value = "s2", "twice"
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.InsertMemory(ctx, &twin) })
	wantCode(t, "the same user's memory id in another session", err, engram.ECONFLICT)

	checkMemoryTwins(t, st, tw, []*engram.Memory{tw.mine, tw.theirs, tw.shared})
	checkTwinWrites(t, st, tw)

	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, tw.mine.ID) })
	if _, err := getMemory(t, st, scU1, tw.mine.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetMemory of the purged memory: %v, want ENOTFOUND", err)
	}
	checkMemoryTwins(t, st, tw, []*engram.Memory{tw.theirs, tw.shared})
	var users []string
	for _, r := range dumpAll(t, st) {
		if r.Type == engram.RecordMemory {
			users = append(users, r.Memory.Namespace.User)
		}
	}
	if !slices.Equal(users, []string{"", "u2"}) {
		t.Errorf("dumped memories of users %q, want the project's then u2's", users)
	}
}

// checkMemoryTwins checks that each of ms, memories of tw, is read by id in
// its own scope with its own version, vectors, mention and evidence, and
// that a text search finds it only there.
func checkMemoryTwins(t *testing.T, st engram.Store, tw memoryTwins, ms []*engram.Memory) {
	t.Helper()
	for i, m := range ms {
		s := engram.ScopeOf(m.Namespace)
		if got, err := getMemory(t, st, s, m.ID); err != nil || got.Value != m.Value {
			t.Errorf("GetMemory in %+v = %+v, %v; want %q", s, got, err, m.Value)
		}
		if got := getMemories(t, st, s, []string{m.ID}); len(got) != 1 || got[0].Value != m.Value {
			t.Errorf("GetMemories in %+v = %+v, want its own", s, got)
		}
		view(t, st, func(r engram.Reader) error {
			vs, err := r.Versions(ctx, s, m.ID)
			if err != nil || len(vs) != 1 || vs[0].Namespace.User != s.User {
				t.Errorf("Versions in %+v = %+v, %v; want its own one", s, vs, err)
			}
			recs, err := r.GetVectors(ctx, m.Namespace, embA, []string{m.ID})
			if err != nil || len(recs) != 1 || recs[0].Namespace.User != s.User {
				t.Errorf("GetVectors of %+v = %+v, %v; want its own one", m.Namespace, recs, err)
			}
			ments, err := r.MemoryMentions(ctx, s, []string{m.ID})
			if err != nil || len(ments) != 1 || ments[0].EntityID != tw.entities[s.User].ID {
				t.Errorf("MemoryMentions in %+v = %+v, %v; want its own entity's", s, ments, err)
			}
			rels, err := r.Relations(ctx, s, nil, engram.RelationFilter{Memory: m.ID})
			if err != nil || len(rels) != 1 || rels[0].ID != tw.relations[s.User].ID || len(rels[0].Evidence) != 1 {
				t.Errorf("Relations of the memory in %+v = %+v, %v; want its own", s, rels, err)
			}
			return nil
		})
		for j, o := range ms {
			hits := search(t, st, s, o.Value, engram.MemoryFilter{}, 10)
			if found := len(hits) > 0; found != (i == j) {
				t.Errorf("search in %+v for %q found %v", s, o.Value, hitIDs(hits))
			}
		}
	}
	withShared := engram.ScopeOf(ms[0].Namespace)
	withShared.IncludeShared = true
	if got := getMemories(t, st, withShared, []string{ms[0].ID}); len(got) != 1 || got[0].Value != ms[0].Value {
		t.Errorf("GetMemories in %+v = %+v, want the user's own only", withShared, got)
	}
	if got, err := getMemory(t, st, withShared, ms[0].ID); err != nil || got.Value != ms[0].Value {
		t.Errorf("GetMemory in %+v = %+v, %v; want the user's own", withShared, got, err)
	}
}

// checkTwinWrites: a touch, a replace and a lookup by one user reach only
// that user's memory.
func checkTwinWrites(t *testing.T, st engram.Store, tw memoryTwins) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error { return tx.Touch(ctx, nsU2, []string{tw.mine.ID}, At(0)) })
	if got := mustMemory(t, st, scU1, tw.mine.ID); got.AccessCount != 0 {
		t.Errorf("u2's touch reached u1's memory: access_count %d", got.AccessCount)
	}
	if got := mustMemory(t, st, engram.ScopeOf(nsU2), tw.mine.ID); got.AccessCount != 1 {
		t.Errorf("u2's touch: access_count %d, want 1", got.AccessCount)
	}
	changed := *tw.mine
	changed.Value, changed.Version = "Ich wohne in Bonn.", 2
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &changed) })
	if got := mustMemory(t, st, engram.ScopeOf(nsU2), tw.mine.ID); got.Value != tw.theirs.Value {
		t.Errorf("u1's replace reached u2's memory: %q", got.Value)
	}
	tw.mine.Value, tw.mine.Version = changed.Value, changed.Version
	stranger := changed
	stranger.Namespace.User = "u3"
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &stranger) })
	wantCode(t, "a replace by a user who holds no such memory", err, engram.ENOTFOUND)

	tenant := engram.Namespace{Org: nsU1.Org, Project: nsU1.Project}
	view(t, st, func(r engram.Reader) error {
		for _, n := range []engram.Namespace{nsU1, nsU2} {
			in := tenant
			in.User = n.User
			if got, err := r.LocateMemory(ctx, in, tw.mine.ID); err != nil || got != n {
				t.Errorf("LocateMemory for %s = %+v, %v; want %+v", n.User, got, err, n)
			}
		}
		_, err := r.LocateMemory(ctx, engram.Namespace{Org: nsU1.Org, Project: nsU1.Project, User: "u3"}, tw.mine.ID)
		wantCode(t, "LocateMemory for a user without it", err, engram.ENOTFOUND)
		_, err = r.LocateMemory(ctx, tenant, tw.mine.ID)
		wantCode(t, "LocateMemory of an id several users hold, naming none", err, engram.ECONFLICT)
		return nil
	})
}

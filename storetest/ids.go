package storetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// testIDsPerUser: episode, memory, audit entry and observation ids are
// unique per user of a tenant.
func testIDsPerUser(t *testing.T, open Opener) {
	t.Run("episodes", func(t *testing.T) { testEpisodeIDsPerUser(t, open) })
	t.Run("memories", func(t *testing.T) { testMemoryIDsPerUser(t, open) })
	t.Run("audit", func(t *testing.T) { testAuditIDsPerUser(t, open) })
	t.Run("observations", func(t *testing.T) { testObservationIDsPerUser(t, open) })
}

// testEpisodeIDsPerUser: another user, and the project itself, may hold an
// episode's id: each insert succeeds, each user reads, lists, exports and
// purges only their own, and a scope that includes shared records reads the
// user's own first. The same user holding the id twice, in another session
// too, is still ECONFLICT.
func testEpisodeIDsPerUser(t *testing.T, open Opener) {
	st := open(t)
	nsShared := engram.Namespace{Org: nsU1.Org, Project: nsU1.Project}
	mine := Episode(nsU1, "Ich wohne in Köln.")
	theirs, shared := *mine, *mine
	theirs.Namespace, theirs.Content = nsU2, "Vivo en Sevilla."
	shared.Namespace, shared.Content = nsShared, "项目的记录"
	Put(t, st, mine)
	Put(t, st, &theirs, &shared)

	sessionTwin := *mine
	sessionTwin.Namespace.Session, sessionTwin.Content = "s2", "twice"
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.InsertEpisode(ctx, &sessionTwin) })
	wantCode(t, "the same user's id in another session", err, engram.ECONFLICT)

	scU2 := engram.ScopeOf(nsU2)
	withShared := scU1
	withShared.IncludeShared = true
	for _, c := range []struct {
		s    engram.Scope
		want string
	}{{scU1, mine.Content}, {scU2, theirs.Content}, {engram.ScopeOf(nsShared), shared.Content}, {withShared, mine.Content}} {
		got, err := getEpisode(t, st, c.s, mine.ID)
		if err != nil || got.Content != c.want || got.Namespace.User != c.s.User {
			t.Errorf("GetEpisode in %+v = %+v, %v; want %q", c.s, got, err, c.want)
		}
	}
	for _, s := range []engram.Scope{scU1, scU2} {
		eps := listEpisodes(t, st, s, engram.EpisodeFilter{})
		if len(eps) != 1 || eps[0].Namespace.User != s.User {
			t.Errorf("episodes of %+v = %+v, want their own one", s, eps)
		}
		if recs := exportAll(t, st, s); len(recs) != 1 || recs[0].Episode == nil || recs[0].Episode.Namespace.User != s.User {
			t.Errorf("export of %+v = %+v, want their own episode", s, recs)
		}
	}

	// A purge by one user leaves the others' episodes.
	update(t, st, func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsU1, mine.ID) })
	if _, err := getEpisode(t, st, scU1, mine.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetEpisode of the purged episode: %v, want ENOTFOUND", err)
	}
	for _, s := range []engram.Scope{scU2, engram.ScopeOf(nsShared), withShared} {
		if _, err := getEpisode(t, st, s, mine.ID); err != nil {
			t.Errorf("after u1's purge, GetEpisode in %+v: %v", s, err)
		}
	}
	var users []string
	for _, r := range dumpAll(t, st) {
		if r.Type == engram.RecordEpisode {
			users = append(users, r.Episode.Namespace.User)
		}
	}
	if !slices.Equal(users, []string{"", "u2"}) {
		t.Errorf("dumped episodes of users %q, want the project's then u2's", users)
	}
}

// testAuditIDsPerUser: another user may hold an audit entry's id; each
// user lists and exports only their own, and the same user holding it
// twice is ECONFLICT.
func testAuditIDsPerUser(t *testing.T, open Opener) {
	st := open(t)
	mine := Audit(nsU1, "episode.add")
	theirs := *mine
	theirs.Namespace, theirs.Op = nsU2, "memory.update"
	Put(t, st, mine, &theirs)
	twin := *mine
	twin.Namespace.Session = "s2"
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.InsertAudit(ctx, &twin) })
	wantCode(t, "the same user's audit id in another session", err, engram.ECONFLICT)
	for _, c := range []struct {
		s  engram.Scope
		op string
	}{{scU1, mine.Op}, {engram.ScopeOf(nsU2), theirs.Op}} {
		if got := listAudit(t, st, c.s, engram.AuditFilter{}); len(got) != 1 || got[0].ID != mine.ID || got[0].Op != c.op {
			t.Errorf("audit of %+v = %+v, want their own %s entry", c.s, got, c.op)
		}
		if recs := exportAll(t, st, c.s); len(recs) != 1 || recs[0].Audit == nil || recs[0].Audit.Op != c.op {
			t.Errorf("export of %+v = %+v, want their own audit entry", c.s, recs)
		}
	}
}

// testObservationIDsPerUser: another user may hold an observation's id;
// each user reads only their own, and the same user holding it twice is
// ECONFLICT.
func testObservationIDsPerUser(t *testing.T, open Opener) {
	st := open(t)
	mine := &engram.Observation{ID: engram.NewID(), Namespace: nsU1, Modality: "face", Embedding: []float32{1, 0, 0.25},
		IdentityID: engram.NewID(), At: At(0)}
	theirs := *mine
	theirs.Namespace, theirs.Embedding, theirs.IdentityID = nsU2, []float32{0, 1, 0.5}, engram.NewID()
	err := idUpdate(st, func(w engram.IdentityWriter) error {
		if err := w.InsertObservation(ctx, mine); err != nil {
			return err
		}
		return w.InsertObservation(ctx, &theirs)
	})
	if err != nil {
		t.Fatalf("the same observation id for two users: %v", err)
	}
	again := *mine
	again.IdentityID = engram.NewID()
	err = idUpdate(st, func(w engram.IdentityWriter) error { return w.InsertObservation(ctx, &again) })
	wantCode(t, "the same user's observation id", err, engram.ECONFLICT)
	for _, want := range []*engram.Observation{mine, &theirs} {
		err := idView(st, func(r engram.IdentityReader) error {
			got, err := r.ListObservations(ctx, engram.ScopeOf(want.Namespace), engram.ObservationFilter{IDs: []string{want.ID}})
			if err == nil && (len(got) != 1 || got[0].IdentityID != want.IdentityID || !slices.Equal(got[0].Embedding, want.Embedding)) {
				t.Errorf("observation of %s = %+v, want their own", want.Namespace.User, got)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

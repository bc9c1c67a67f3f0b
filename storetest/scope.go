package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// scopeSpaces are the namespaces the scope tests put one record of each
// type in: users with and without agents and sessions, project-level
// (shared) and agent-level records, and look-alikes in other tenants.
var scopeSpaces = []engram.Namespace{
	{Org: "acme", Project: "app", User: "u1"},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1"},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1", Session: "s1"},
	{Org: "acme", Project: "app", User: "u1", Session: "s1"},
	{Org: "acme", Project: "app", User: "u1", Agent: "a2", Session: "s2"},
	{Org: "acme", Project: "app", User: "u2"},
	{Org: "acme", Project: "app", User: "u2", Agent: "a1", Session: "s1"},
	{Org: "acme", Project: "app"},
	{Org: "acme", Project: "app", Agent: "a1"},
	{Org: "acme", Project: "app", Agent: "a1", Session: "s1"},
	{Org: "acme", Project: "app", Session: "s1"},
	{Org: "globex", Project: "app", User: "u1"},
	{Org: "globex", Project: "app"},
	{Org: "acme", Project: "web", User: "u1"},
	{Org: "acme", Project: "web"},
	// Names that a careless query could confuse with the ones above.
	{Org: "acme", Project: "app", User: "u1%"},
	{Org: "acme", Project: "app", User: "U1"},
	{Org: "acme", Project: "app", User: "u_"},
}

var scopeScopes = []engram.Scope{
	{Org: "acme", Project: "app", User: "u1"},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1"},
	{Org: "acme", Project: "app", User: "u1", Session: "s1"},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1", Session: "s1"},
	{Org: "acme", Project: "app", User: "u1", IncludeShared: true},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1", IncludeShared: true},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1", Session: "s1", IncludeShared: true},
	{Org: "acme", Project: "app", User: "u2"},
	{Org: "acme", Project: "app", User: "u2", IncludeShared: true},
	{Org: "acme", Project: "app"},
	{Org: "acme", Project: "app", IncludeShared: true},
	{Org: "acme", Project: "app", Agent: "a1"},
	{Org: "acme", Project: "app", Agent: "a1", IncludeShared: true},
	{Org: "acme", Project: "app", Session: "s1"},
	{Org: "acme", Project: "app", User: "u3"},
	{Org: "acme", Project: "app", User: "u_"},
	{Org: "acme", Project: "app", User: "u1%"},
	{Org: "acme", Project: "app", User: "u%", IncludeShared: true},
	{Org: "acme", Project: "app", User: "u3", IncludeShared: true},
	{Org: "globex", Project: "app", User: "u1"},
	{Org: "globex", Project: "app", User: "u1", IncludeShared: true},
	{Org: "acme", Project: "web", User: "u1", IncludeShared: true},
	{Org: "acme", Project: "nope", User: "u1", IncludeShared: true},
	// An empty agent matched exactly: records of no agent only.
	{Org: "acme", Project: "app", User: "u1", ExactAgent: true},
	{Org: "acme", Project: "app", User: "u1", Session: "s1", ExactAgent: true},
	{Org: "acme", Project: "app", User: "u1", ExactAgent: true, IncludeShared: true},
	{Org: "acme", Project: "app", User: "u1", Agent: "a1", ExactAgent: true},
	{Org: "acme", Project: "app", ExactAgent: true},
}

// scopeFixture is one record of each type per namespace, and vectors of
// the memory by two embedders.
type scopeFixture struct {
	ns       engram.Namespace
	episode  *engram.Episode
	memory   *engram.Memory
	versions []*engram.Version
	audit    *engram.AuditEntry
	vectors  []engram.FieldVector // by embA; embB has one more, of the value
}

// scopeFixtureVectors is how many vectors each scope fixture stores.
const scopeFixtureVectors = 3

// readFixture reads f's episode, memory and versions in s and returns the
// error of each read.
func readFixture(t *testing.T, st engram.Store, s engram.Scope, f scopeFixture) (eerr, merr, verr error) {
	t.Helper()
	_, eerr = getEpisode(t, st, s, f.episode.ID)
	_, merr = getMemory(t, st, s, f.memory.ID)
	view(t, st, func(r engram.Reader) error {
		_, verr = r.Versions(ctx, s, f.memory.ID)
		return nil
	})
	return eerr, merr, verr
}

func putScopeFixtures(t *testing.T, st engram.Store) []scopeFixture {
	t.Helper()
	var fs []scopeFixture
	var recs []any
	for i, ns := range scopeSpaces {
		f := scopeFixture{ns: ns}
		f.episode = Episode(ns, fmt.Sprintf("zebra episode number %d", i))
		f.episode.OccurredAt = At(time.Duration(i) * time.Minute)
		f.memory = Memory(ns, fmt.Sprintf("zebra memory number %d", i))
		f.versions = []*engram.Version{Version(f.memory, 1, engram.OpAdd), Version(f.memory, 2, engram.OpUpdate)}
		f.audit = Audit(ns, "memory.add", f.memory.ID)
		recs = append(recs, f.episode, f.memory, f.versions[0], f.versions[1], f.audit)
		f.vectors = []engram.FieldVector{{Field: engram.FieldAbstraction, Vec: vec(i, 4)}, {Field: engram.FieldValue, Vec: vec(i+100, 4)}}
		fs = append(fs, f)
	}
	Put(t, st, recs...)
	update(t, st, func(tx engram.Tx) error {
		for i, f := range fs {
			if err := tx.PutVectors(ctx, f.ns, f.memory.ID, embA, f.vectors); err != nil {
				return err
			}
			if err := tx.PutVectors(ctx, f.ns, f.memory.ID, embB, []engram.FieldVector{{Field: engram.FieldValue, Vec: vec(i, 2)}}); err != nil {
				return err
			}
		}
		return nil
	})
	return fs
}

func testScopeReads(t *testing.T, open Opener) {
	st := open(t)
	fs := putScopeFixtures(t, st)
	for _, s := range scopeScopes {
		t.Run(fmt.Sprintf("%+v", s), func(t *testing.T) {
			var wantEp, wantMem, wantAudit, wantExport []string
			for _, f := range fs {
				in := s.Contains(f.ns)
				eerr, merr, verr := readFixture(t, st, s, f)
				if in {
					wantEp = append(wantEp, f.episode.ID)
					wantMem = append(wantMem, f.memory.ID)
					wantAudit = append(wantAudit, f.audit.ID)
					wantExport = append(wantExport, "episode "+f.episode.ID, "memory "+f.memory.ID,
						fmt.Sprintf("version %s/1", f.memory.ID), fmt.Sprintf("version %s/2", f.memory.ID), "audit "+f.audit.ID)
					for what, err := range map[string]error{"GetEpisode": eerr, "GetMemory": merr, "Versions": verr} {
						if err != nil {
							t.Errorf("%s of a record in %+v: %v", what, f.ns, err)
						}
					}
				} else {
					wantCode(t, fmt.Sprintf("GetEpisode of a record in %+v", f.ns), eerr, engram.ENOTFOUND)
					wantCode(t, fmt.Sprintf("GetMemory of a record in %+v", f.ns), merr, engram.ENOTFOUND)
					wantCode(t, fmt.Sprintf("Versions of a record in %+v", f.ns), verr, engram.ENOTFOUND)
				}
			}
			if got := episodeIDs(listEpisodes(t, st, s, engram.EpisodeFilter{})); !sameSet(got, wantEp) {
				t.Errorf("ListEpisodes = %v, want %v", got, wantEp)
			}
			if got := memoryIDs(listMemories(t, st, s, engram.MemoryFilter{})); !sameSet(got, wantMem) {
				t.Errorf("ListMemories = %v, want %v", got, wantMem)
			}
			if got := hitIDs(search(t, st, s, "zebra memory", engram.MemoryFilter{}, engram.MaxLimit)); !sameSet(got, wantMem) {
				t.Errorf("SearchText = %v, want %v", got, wantMem)
			}
			// Every fixture's id, an unknown and a malformed one: only the
			// scope's come back.
			ids := []string{engram.NewID(), "bad"}
			for _, f := range fs {
				ids = append(ids, f.memory.ID)
			}
			if got := memoryIDs(getMemories(t, st, s, ids)); !sameSet(got, wantMem) {
				t.Errorf("GetMemories = %v, want %v", got, wantMem)
			}
			scopeVectorCheck(t, st, s, fs)
			if got := auditIDs(listAudit(t, st, s, engram.AuditFilter{})); !sameSet(got, wantAudit) {
				t.Errorf("Audit = %v, want %v", got, wantAudit)
			}
			var gotExport []string
			for _, r := range exportAll(t, st, s) {
				ns, err := r.Namespace()
				if err != nil {
					t.Fatalf("export record: %v", err)
				}
				if !s.Contains(ns) {
					t.Errorf("export includes a %s in %+v", r.Type, ns)
				}
				switch r.Type {
				case engram.RecordEpisode:
					gotExport = append(gotExport, "episode "+r.Episode.ID)
				case engram.RecordMemory:
					gotExport = append(gotExport, "memory "+r.Memory.ID)
				case engram.RecordVersion:
					gotExport = append(gotExport, fmt.Sprintf("version %s/%d", r.Version.MemoryID, r.Version.Version))
				case engram.RecordAudit:
					gotExport = append(gotExport, "audit "+r.Audit.ID)
				}
			}
			if !sameSet(gotExport, wantExport) {
				t.Errorf("Export = %v, want %v", gotExport, wantExport)
			}
		})
	}
}

func testScopeTouch(t *testing.T, open Opener) {
	st := open(t)
	fs := putScopeFixtures(t, st)
	tenant := engram.Namespace{Org: "acme", Project: "app"}
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.memory.ID)
	}
	// A touch reaches the memories of its tenant's user (any agent or
	// session), since memory ids are unique per user.
	u1 := engram.Namespace{Org: tenant.Org, Project: tenant.Project, User: "u1"}
	update(t, st, func(tx engram.Tx) error { return tx.Touch(ctx, u1, ids, At(time.Hour)) })
	for _, f := range fs {
		got := mustMemory(t, st, engram.ScopeOf(f.ns), f.memory.ID)
		want := int64(0)
		if f.ns.Org == u1.Org && f.ns.Project == u1.Project && f.ns.User == u1.User {
			want = 1
		}
		if got.AccessCount != want {
			t.Errorf("memory in %+v touched by u1 of acme/app: access_count %d, want %d", f.ns, got.AccessCount, want)
		}
	}
}

func testScopePurge(t *testing.T, open Opener) {
	purgeable := []engram.Scope{
		{Org: "acme", Project: "app", User: "u1"},
		{Org: "acme", Project: "app", User: "u1", IncludeShared: true}, // never widens a write
		{Org: "acme", Project: "app", User: "u1", Agent: "a1"},
		{Org: "acme", Project: "app", User: "u1", Session: "s1"},
		{Org: "acme", Project: "app", Agent: "a1"},
		{Org: "acme", Project: "app", Session: "s1"},
		{Org: "globex", Project: "app", User: "u1"},
		{Org: "acme", Project: "app", User: "nobody"},
	}
	for _, s := range purgeable {
		t.Run(fmt.Sprintf("%+v", s), func(t *testing.T) {
			st := open(t)
			fs := putScopeFixtures(t, st)
			narrow := s
			narrow.IncludeShared = false
			var want engram.PurgeCounts
			var kept []scopeFixture
			for _, f := range fs {
				if narrow.Contains(f.ns) {
					want.Episodes++
					want.Memories++
					want.Versions += len(f.versions)
				} else {
					kept = append(kept, f)
				}
			}
			var got engram.PurgeCounts
			update(t, st, func(tx engram.Tx) error {
				var err error
				got, err = tx.PurgeScope(ctx, s)
				return err
			})
			if got != want {
				t.Errorf("PurgeScope counts = %+v, want %+v", got, want)
			}
			for _, f := range fs {
				own := engram.ScopeOf(f.ns)
				eerr, merr, verr := readFixture(t, st, own, f)
				hits := search(t, st, own, "zebra memory", engram.MemoryFilter{}, engram.MaxLimit)
				found := false
				for _, h := range hits {
					found = found || h.Memory.ID == f.memory.ID
				}
				if narrow.Contains(f.ns) {
					wantCode(t, fmt.Sprintf("episode in %+v after purge", f.ns), eerr, engram.ENOTFOUND)
					wantCode(t, fmt.Sprintf("memory in %+v after purge", f.ns), merr, engram.ENOTFOUND)
					wantCode(t, fmt.Sprintf("versions in %+v after purge", f.ns), verr, engram.ENOTFOUND)
					if found {
						t.Errorf("purged memory in %+v is still searchable", f.ns)
					}
				} else {
					if eerr != nil || merr != nil || verr != nil {
						t.Errorf("record in %+v outside the purge: %v, %v, %v", f.ns, eerr, merr, verr)
					}
					if !found {
						t.Errorf("memory in %+v outside the purge is no longer searchable", f.ns)
					}
				}
				// Audit entries stay.
				if a := listAudit(t, st, own, engram.AuditFilter{}); !containsID(auditIDs(a), f.audit.ID) {
					t.Errorf("audit entry in %+v was purged", f.ns)
				}
			}
			// No vector of any embedder outlives its memory, and the others'
			// are all there.
			var n int
			update(t, st, func(tx engram.Tx) error {
				var err error
				n, err = tx.DeleteVectorsExcept(ctx, "none")
				return err
			})
			if want := scopeFixtureVectors * len(kept); n != want {
				t.Errorf("%d vectors left after the purge, want %d of the %d memories outside it", n, want, len(kept))
			}
		})
	}
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func testPurgeScopeRefusals(t *testing.T, open Opener) {
	st := open(t)
	fs := putScopeFixtures(t, st)
	for _, s := range []engram.Scope{
		{Org: "acme", Project: "app"},
		{Org: "acme", Project: "app", IncludeShared: true},
		{Org: "acme"},
		{Project: "app", User: "u1"},
	} {
		err := st.Update(ctx, func(tx engram.Tx) error {
			_, err := tx.PurgeScope(ctx, s)
			return err
		})
		wantCode(t, fmt.Sprintf("PurgeScope(%+v)", s), err, engram.EINVALID)
	}
	for _, f := range fs {
		if _, err := getMemory(t, st, engram.ScopeOf(f.ns), f.memory.ID); err != nil {
			t.Errorf("memory in %+v after refused purges: %v", f.ns, err)
		}
	}
}

package storetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// Opener opens a fresh, empty store for one subtest and arranges for it to
// be closed when the test ends (t.Cleanup). Closing a store twice must not
// fail the test.
type Opener = func(t *testing.T) engram.Store

// Run runs the conformance suite against stores made by open. Every
// subtest opens its own store, and none runs in parallel. The suite covers
// the whole contract (engram.Store, Reader and Tx), which the compiler
// checks a store against.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"EpisodeRoundTrip", testEpisodeRoundTrip},
		{"EpisodeMedia", testEpisodeMedia},
		{"MemoryRoundTrip", testMemoryRoundTrip},
		{"GetMemories", testGetMemories},
		{"VersionRoundTrip", testVersionRoundTrip},
		{"AuditRoundTrip", testAuditRoundTrip},
		{"DuplicateIDs", testDuplicateIDs},
		{"IDsArePerTenant", testIDsArePerTenant},
		{"IDsPerUser", testIDsPerUser},
		{"NotFoundAndInvalid", testNotFoundAndInvalid},
		{"InvalidRecordsAreRefused", testInvalidRecords},
		{"ScopeReads", testScopeReads},
		{"ScopeTouch", testScopeTouch},
		{"ScopePurge", testScopePurge},
		{"PurgeScopeRefusals", testPurgeScopeRefusals},
		{"UpdateAtomicity", testUpdateAtomicity},
		{"UpdatePanic", testUpdatePanic},
		{"UpdateSeesOwnWrites", testUpdateSeesOwnWrites},
		{"ViewSnapshot", testViewSnapshot},
		{"ReadFresh", testReadFresh},
		{"MemoryFilters", testMemoryFilters},
		{"InvalidFilters", testInvalidFilters},
		{"EpisodeFilters", testEpisodeFilters},
		{"AuditFilters", testAuditFilters},
		{"PaginateMemories", testPaginateMemories},
		{"PaginateEpisodes", testPaginateEpisodes},
		{"PaginateAudit", testPaginateAudit},
		{"SearchRanking", testSearchRanking},
		{"SearchStopWords", testSearchStopWords},
		{"SearchNoTerms", testSearchNoTerms},
		{"SearchInjection", testSearchInjection},
		{"SearchLimit", testSearchLimit},
		{"SearchCJK", testSearchCJK},
		{"SearchOtherNamespaces", testSearchOtherNamespaces},
		{"FullTextSwitch", testFullTextSwitch},
		{"ReplaceMemory", testReplaceMemory},
		{"PurgeMemory", testPurgeMemory},
		{"PurgeTombstones", testPurgeTombstones},
		{"PurgeEpisode", testPurgeEpisode},
		{"Touch", testTouch},
		{"TouchCounts", testTouchCounts},
		{"TTLFilter", testTTLFilter},
		{"Lapsed", testLapsed},
		{"ScanVectors", testScanVectors},
		{"PutVectors", testPutVectors},
		{"DeleteVectorsExcept", testDeleteVectorsExcept},
		{"PurgeVectors", testPurgeVectors},
		{"Meta", testMeta},
		{"Keys", testKeys},
		{"KeysRefusals", testKeysRefusals},
		{"VaultKeys", testVaultKeys},
		{"Resources", testResources},
		{"ResourcesPending", testResourcesPending},
		{"Identities", testIdentities},
		{"IdentityExport", testIdentityExport},
		{"ResourcesDump", testResourcesDump},
		{"ScanMemories", testScanMemories},
		{"Dump", testDump},
		{"FilterIDs", testFilterIDs},
		{"Changes", testChanges},
		{"GetVectors", testGetVectors},
		{"Locate", testLocate},
		{"Tenants", testTenants},
		{"Users", testUsers},
		{"ExportOrder", testExportOrder},
		{"ExportStops", testExportStops},
		{"ExportPages", testExportPages},
		{"GraphEntities", testGraphEntities},
		{"GraphMentions", testGraphMentions},
		{"GraphRelations", testGraphRelations},
		{"GraphRelationsBatch", testGraphRelationsBatch},
		{"GraphScope", testGraphScope},
		{"GraphPurge", testGraphPurge},
		{"EntityHistory", testEntityHistory},
		{"Communities", testCommunities},
		{"JobStates", testJobStates},
		{"JobSkip", testJobSkip},
		{"JobKinds", testJobKinds},
		{"JobBacklog", testJobBacklog},
		{"ContextCancel", testContextCancel},
		{"Close", testClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

var (
	nsU1 = engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	nsU2 = engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	// The same user in another tenant.
	nsOther = engram.Namespace{Org: "globex", Project: "app", User: "u1"}
	scU1    = engram.ScopeOf(nsU1)
)

func testDuplicateIDs(t *testing.T, open Opener) {
	st := open(t)
	e := Episode(nsU1, "once")
	m := Memory(nsU1, "once")
	v := Version(m, 1, engram.OpAdd)
	a := Audit(nsU1, "episode.add", e.ID)
	Put(t, st, e, m, v, a)

	// A memory duplicate in another session of the same user conflicts
	// too; ids are unique per user only (testIDsPerUser).
	m2 := *m
	m2.Namespace.Session, m2.Value = "s2", "twice"
	v2 := *v
	for _, c := range []struct {
		name string
		rec  any
	}{{"episode", e}, {"memory", m}, {"memory other session", &m2}, {"version", &v2}, {"audit", a}} {
		err := st.Update(ctx, func(tx engram.Tx) error { return insert(ctx, tx, c.rec) })
		wantCode(t, c.name, err, engram.ECONFLICT)
	}
	// The originals are untouched and the duplicates left nothing behind.
	got, err := getEpisode(t, st, scU1, e.ID)
	if err != nil || got.Content != "once" {
		t.Errorf("episode after conflicts = %+v, %v", got, err)
	}
	if gm := mustMemory(t, st, scU1, m.ID); gm.Value != "once" {
		t.Errorf("memory after conflicts has value %q", gm.Value)
	}
	if hits := search(t, st, engram.ScopeOf(m2.Namespace), "twice", engram.MemoryFilter{}, 10); len(hits) != 0 {
		t.Errorf("a refused duplicate memory is searchable: %v", hitIDs(hits))
	}
	if n := len(listAudit(t, st, scU1, engram.AuditFilter{})); n != 1 {
		t.Errorf("%d audit entries, want 1", n)
	}
}

func testIDsArePerTenant(t *testing.T, open Opener) {
	st := open(t)
	m := Memory(nsU1, "tenant one")
	other := *m
	other.Namespace, other.Value = nsOther, "tenant two"
	e := Episode(nsU1, "episode one")
	otherE := *e
	otherE.Namespace, otherE.Content = nsOther, "episode two"
	Put(t, st, m, e)
	// The same ids in another tenant neither conflict nor reveal anything.
	Put(t, st, &other, &otherE)
	if got := mustMemory(t, st, scU1, m.ID); got.Value != "tenant one" {
		t.Errorf("tenant one sees %q", got.Value)
	}
	if got := mustMemory(t, st, engram.ScopeOf(nsOther), m.ID); got.Value != "tenant two" {
		t.Errorf("tenant two sees %q", got.Value)
	}
	// Purging in one tenant leaves the other's record.
	update(t, st, func(tx engram.Tx) error {
		if err := tx.PurgeMemory(ctx, nsU1, m.ID); err != nil {
			return err
		}
		return tx.PurgeEpisode(ctx, nsU1, e.ID)
	})
	if got := mustMemory(t, st, engram.ScopeOf(nsOther), m.ID); got.Value != "tenant two" {
		t.Errorf("after purging tenant one, tenant two sees %q", got.Value)
	}
	if got, err := getEpisode(t, st, engram.ScopeOf(nsOther), e.ID); err != nil || got.Content != "episode two" {
		t.Errorf("after purging tenant one, tenant two's episode = %v, %v", got, err)
	}
	if hits := search(t, st, engram.ScopeOf(nsOther), "tenant", engram.MemoryFilter{}, 10); len(hits) != 1 {
		t.Errorf("tenant two's memory is not searchable after tenant one's purge: %v", hitIDs(hits))
	}
}

func testNotFoundAndInvalid(t *testing.T, open Opener) {
	st := open(t)
	missing := engram.NewID()
	bad := []string{"", "nope", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01arz3ndektsv4rrffq69g5fav", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAV'; --"}
	view(t, st, func(r engram.Reader) error {
		_, err := r.GetEpisode(ctx, scU1, missing)
		wantCode(t, "GetEpisode missing", err, engram.ENOTFOUND)
		_, err = r.GetMemory(ctx, scU1, missing)
		wantCode(t, "GetMemory missing", err, engram.ENOTFOUND)
		_, err = r.Versions(ctx, scU1, missing)
		wantCode(t, "Versions missing", err, engram.ENOTFOUND)
		for _, id := range bad {
			_, err = r.GetEpisode(ctx, scU1, id)
			wantCode(t, "GetEpisode "+id, err, engram.EINVALID)
			_, err = r.GetMemory(ctx, scU1, id)
			wantCode(t, "GetMemory "+id, err, engram.EINVALID)
			_, err = r.Versions(ctx, scU1, id)
			wantCode(t, "Versions "+id, err, engram.EINVALID)
		}
		for _, s := range []engram.Scope{{Project: "app", User: "u"}, {Org: "acme", User: "u"}, {Org: "a/b", Project: "p"}} {
			_, err = r.GetMemory(ctx, s, missing)
			wantCode(t, "GetMemory with a bad scope", err, engram.EINVALID)
			_, _, err = r.ListMemories(ctx, s, engram.MemoryFilter{})
			wantCode(t, "ListMemories with a bad scope", err, engram.EINVALID)
			_, _, err = r.ListEpisodes(ctx, s, engram.EpisodeFilter{})
			wantCode(t, "ListEpisodes with a bad scope", err, engram.EINVALID)
			_, err = r.SearchText(ctx, s, "x", engram.MemoryFilter{}, 10)
			wantCode(t, "SearchText with a bad scope", err, engram.EINVALID)
			_, _, err = r.Audit(ctx, s, engram.AuditFilter{})
			wantCode(t, "Audit with a bad scope", err, engram.EINVALID)
			err = r.Export(ctx, s, func(engram.Record) error { return nil })
			wantCode(t, "Export with a bad scope", err, engram.EINVALID)
			_, err = r.GetMemories(ctx, s, []string{missing})
			wantCode(t, "GetMemories with a bad scope", err, engram.EINVALID)
			err = r.ScanVectors(ctx, s, embA, func(engram.VectorRecord) error { return nil })
			wantCode(t, "ScanVectors with a bad scope", err, engram.EINVALID)
		}
		return nil
	})
	err := st.Update(ctx, func(tx engram.Tx) error {
		return tx.ReplaceMemory(ctx, Memory(nsU1, "never stored"))
	})
	wantCode(t, "ReplaceMemory missing", err, engram.ENOTFOUND)
	err = st.Update(ctx, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, "nope") })
	wantCode(t, "PurgeMemory bad id", err, engram.EINVALID)
	err = st.Update(ctx, func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsU1, "nope") })
	wantCode(t, "PurgeEpisode bad id", err, engram.EINVALID)
}

func testInvalidRecords(t *testing.T, open Opener) {
	st := open(t)
	noID := Memory(nsU1, "no id")
	noID.ID = ""
	badKind := Memory(nsU1, "bad kind")
	badKind.Kind = "gossip"
	empty := Memory(nsU1, "")
	badNS := Memory(engram.Namespace{Project: "app"}, "no org")
	badConf := Memory(nsU1, "overconfident")
	badConf.Confidence = 1.5
	epNoID := Episode(nsU1, "no id")
	epNoID.ID = ""
	epEmpty := Episode(nsU1, "")
	epBadID := Episode(nsU1, "bad id")
	epBadID.ID = "not-an-id"
	vBad := Version(Memory(nsU1, "x"), 0, engram.OpAdd)
	aBad := Audit(nsU1, "x")
	aBad.ID = "bad"
	good := Episode(nsU1, "good one")
	for _, c := range []struct {
		name string
		rec  any
	}{{"memory without id", noID}, {"memory with bad kind", badKind}, {"memory without value", empty},
		{"memory without org", badNS}, {"memory with confidence 1.5", badConf},
		{"episode without id", epNoID}, {"episode without content", epEmpty}, {"episode with bad id", epBadID},
		{"version 0", vBad}, {"audit with bad id", aBad}} {
		// A valid record before the bad one must not be kept either.
		err := st.Update(ctx, func(tx engram.Tx) error { return insert(ctx, tx, good, c.rec) })
		wantCode(t, c.name, err, engram.EINVALID)
	}
	if eps := listEpisodes(t, st, scU1, engram.EpisodeFilter{}); len(eps) != 0 {
		t.Errorf("refused updates left %d episodes", len(eps))
	}
	if ms := listMemories(t, st, scU1, engram.MemoryFilter{Statuses: allStatuses}); len(ms) != 0 {
		t.Errorf("refused updates left %d memories", len(ms))
	}
}

// allStatuses asks a memory filter for every status.
var allStatuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}

func sortedDesc(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

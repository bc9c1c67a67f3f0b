package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// Opener opens a fresh, empty store for one subtest and arranges for it to
// be closed when the test ends (t.Cleanup). Closing a store twice must not
// fail the test.
type Opener = func(t *testing.T) engram.Store

// Run runs the conformance suite against stores made by open. Every
// subtest opens its own store, and none runs in parallel. The suite covers
// the optional capabilities too (engram.VectorReader and the others): it
// fails at once, naming the first one missing, if the store lacks any.
func Run(t *testing.T, open Opener) {
	checkCapabilities(t, open(t))
	checkGraphCapabilities(t, open(t))
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

func testEpisodeRoundTrip(t *testing.T, open Opener) {
	st := open(t)
	full := &engram.Episode{
		ID:         engram.NewID(),
		Namespace:  engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "planner", Session: "s-1"},
		Role:       "assistant",
		Speaker:    "Ada",
		Content:    "Multi-line\ncontent with ünïcödé, 中文, emoji 🙂 and <html> & \"quotes\"",
		Modality:   engram.ModalityText,
		OccurredAt: At(-48 * time.Hour),
		ReceivedAt: At(time.Microsecond),
		Metadata: map[string]any{
			"n": 3, "f": 2.5, "neg": -1e-7, "big": 1e15, "s": "x", "b": true, "null": nil,
			"nested": map[string]any{"list": []any{1, "two", false, nil, map[string]any{"deep": 1.25}}},
		},
	}
	minimal := &engram.Episode{ID: engram.NewID(), Namespace: nsU1, Content: "hi"}
	old := Episode(nsU1, "ancient")
	old.OccurredAt = time.Date(1, 1, 1, 0, 0, 1, 1000, time.UTC)
	future := Episode(nsU1, "far future")
	future.OccurredAt = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	Put(t, st, full, minimal, old, future)

	for _, want := range []*engram.Episode{full, minimal, old, future} {
		got, err := getEpisode(t, st, engram.ScopeOf(want.Namespace), want.ID)
		if err != nil {
			t.Fatalf("GetEpisode(%s): %v", want.ID, err)
		}
		sameJSON(t, "episode "+want.Content, got, want)
		if !got.OccurredAt.Equal(want.OccurredAt) || got.OccurredAt.Location() != time.UTC {
			t.Errorf("occurred_at = %v, want %v in UTC", got.OccurredAt, want.OccurredAt)
		}
		if !got.ReceivedAt.Equal(want.ReceivedAt) || got.ReceivedAt.Location() != time.UTC {
			t.Errorf("received_at = %v, want %v in UTC", got.ReceivedAt, want.ReceivedAt)
		}
	}
	// Numbers come back as json.Number with every digit they were stored
	// with, so metadata round-trips losslessly.
	got, _ := getEpisode(t, st, engram.ScopeOf(full.Namespace), full.ID)
	if n, ok := got.Metadata["n"].(json.Number); !ok || n != "3" {
		t.Errorf("metadata n = %#v, want json.Number(3)", got.Metadata["n"])
	}
}

// fullMemory returns a memory with every field set.
func fullMemory(ns engram.Namespace) *engram.Memory {
	return &engram.Memory{
		ID:           engram.NewID(),
		Namespace:    ns,
		Kind:         engram.KindEpisodic,
		Abstraction:  "Trip to Lisbon",
		Cues:         []string{"Lisbon", "Ana \"the guide\"", "tram 28"},
		Value:        "Travelled to Lisbon with Ana; took tram 28; ate 5 pastéis de nata <yum> & more",
		Language:     "en",
		Confidence:   0.25,
		Importance:   0.75,
		Status:       engram.StatusSuperseded,
		ValidFrom:    Ptr(time.Date(1, 1, 1, 0, 0, 1, 1000, time.UTC)),
		ValidTo:      Ptr(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)),
		CreatedAt:    At(-time.Hour),
		UpdatedAt:    At(time.Microsecond),
		ExpiredAt:    Ptr(At(2 * time.Hour)),
		ExpiresAt:    Ptr(At(365 * 24 * time.Hour)),
		Sources:      []string{engram.NewID(), engram.NewID()},
		SupersededBy: engram.NewID(),
		Metadata: map[string]any{
			"n": 42, "pi": 3.14159, "tags": []any{"a", "b"}, "ok": false, "none": nil,
			"geo": map[string]any{"lat": 38.7223, "lon": -9.1393, "names": []any{"Lisboa", "Lisbon"}},
		},
		Version:      3,
		AccessCount:  7,
		LastAccessed: Ptr(At(time.Minute)),
	}
}

func testMemoryRoundTrip(t *testing.T, open Opener) {
	st := open(t)
	full := fullMemory(engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "a", Session: "s"})
	bare := &engram.Memory{ID: engram.NewID(), Namespace: nsU1, Kind: engram.KindCore, Value: "v",
		Status: engram.StatusActive, CreatedAt: T0, UpdatedAt: T0}
	Put(t, st, full, bare)
	for _, want := range []*engram.Memory{full, bare} {
		got := mustMemory(t, st, engram.ScopeOf(want.Namespace), want.ID)
		sameJSON(t, "memory", got, want)
		for name, p := range map[string]*time.Time{"valid_from": got.ValidFrom, "valid_to": got.ValidTo,
			"expired_at": got.ExpiredAt, "expires_at": got.ExpiresAt, "last_accessed": got.LastAccessed,
			"created_at": &got.CreatedAt, "updated_at": &got.UpdatedAt} {
			if p != nil && p.Location() != time.UTC {
				t.Errorf("%s is in %v, want UTC", name, p.Location())
			}
		}
	}
	got := mustMemory(t, st, scU1, bare.ID)
	if got.ValidFrom != nil || got.ValidTo != nil || got.ExpiredAt != nil || got.ExpiresAt != nil || got.LastAccessed != nil {
		t.Errorf("nil time pointers came back set: %+v", got)
	}
	got = mustMemory(t, st, engram.ScopeOf(full.Namespace), full.ID)
	if !got.ValidFrom.Equal(*full.ValidFrom) || !got.ValidTo.Equal(*full.ValidTo) {
		t.Errorf("validity = [%v, %v), want [%v, %v)", got.ValidFrom, got.ValidTo, full.ValidFrom, full.ValidTo)
	}
}

func getMemories(t testing.TB, st engram.Store, s engram.Scope, ids []string) []engram.Memory {
	t.Helper()
	var out []engram.Memory
	view(t, st, func(r engram.Reader) error {
		var err error
		out, err = r.GetMemories(ctx, s, ids)
		return err
	})
	return out
}

// checkCapabilities fails the test unless st's transactions implement every
// optional capability the suite exercises.
func checkCapabilities(t *testing.T, st engram.Store) {
	t.Helper()
	const need = "the conformance suite"
	err := st.View(ctx, func(r engram.Reader) error {
		return errors.Join(
			needErr[engram.VectorReader](r, need),
			needErr[engram.ChangeLog](r, need),
			needErr[engram.MetaReader](r, need),
			needErr[engram.Dumper](r, need),
			needErr[engram.KeyReader](r, need),
			needErr[engram.VaultKeyReader](r, need),
			needErr[engram.Locator](r, need),
			needErr[engram.ResourceReader](r, need),
			needErr[engram.IdentityReader](r, need),
			needErr[engram.IdentityExporter](r, need),
			needErr[engram.FullTextReader](r, need),
		)
	})
	if err == nil {
		err = st.Update(ctx, func(tx engram.Tx) error {
			return errors.Join(needErr[engram.VectorWriter](tx, need), needErr[engram.MetaWriter](tx, need), needErr[engram.KeyWriter](tx, need), needErr[engram.VaultKeyWriter](tx, need), needErr[engram.ResourceWriter](tx, need), needErr[engram.IdentityWriter](tx, need))
		})
	}
	if err == nil {
		err = needErr[engram.FullTextSwitch](st, need)
	}
	if err != nil {
		t.Fatalf("capabilities: %v", err)
	}
}

func needErr[C any](tx any, need string) error {
	_, err := engram.Need[C](tx, need)
	return err
}

func testGetMemories(t *testing.T, open Opener) {
	st := open(t)
	active := fullMemory(nsU1)
	active.Status = engram.StatusActive
	deleted, superseded := Memory(nsU1, "deleted"), Memory(nsU1, "superseded")
	deleted.Status, superseded.Status = engram.StatusDeleted, engram.StatusSuperseded
	shared := Memory(engram.Namespace{Org: "acme", Project: "app"}, "shared")
	otherUser := Memory(nsU2, "other user")
	foreign := Memory(nsOther, "another tenant")
	twin := *active // the same id in another tenant
	twin.Namespace, twin.Value = nsOther, "twin"
	Put(t, st, active, deleted, superseded, shared, otherUser, foreign, &twin)

	ids := []string{active.ID, deleted.ID, superseded.ID, shared.ID, otherUser.ID, foreign.ID,
		engram.NewID(), "", "nope", strings.ToLower(active.ID), active.ID + "'; --", active.ID, deleted.ID}
	withShared := scU1
	withShared.IncludeShared = true
	for _, c := range []struct {
		s    engram.Scope
		want []*engram.Memory
	}{
		{scU1, []*engram.Memory{active, deleted, superseded}},
		{withShared, []*engram.Memory{active, deleted, superseded, shared}},
		{engram.ScopeOf(nsU2), []*engram.Memory{otherUser}},
		{engram.ScopeOf(nsOther), []*engram.Memory{foreign, &twin}},
		{engram.Scope{Org: "acme", Project: "web", User: "u1"}, nil},
	} {
		got := getMemories(t, st, c.s, ids)
		byID := map[string]*engram.Memory{}
		for _, m := range c.want {
			byID[m.ID] = m
		}
		// Each once, though asked for twice, and whole.
		if gotIDs, wantIDs := memoryIDs(got), slices.Collect(maps.Keys(byID)); !sameSet(gotIDs, wantIDs) {
			t.Errorf("GetMemories(%+v) = %v, want %v", c.s, gotIDs, wantIDs)
			continue
		}
		for _, m := range got {
			sameJSON(t, fmt.Sprintf("GetMemories(%+v)", c.s), m, byID[m.ID])
		}
	}
	if got := getMemories(t, st, scU1, nil); len(got) != 0 {
		t.Errorf("GetMemories of no ids = %v", memoryIDs(got))
	}

	// More ids than a backend would bind in one statement, each asked for
	// twice, far apart.
	var recs []any
	var many, wantMany []string
	for i := range 700 {
		ns := nsU1
		if i%10 == 0 {
			ns = nsU2
		}
		m := Memory(ns, fmt.Sprintf("bulk %d", i))
		recs = append(recs, m)
		many = append(many, m.ID, engram.NewID())
		if ns == nsU1 {
			wantMany = append(wantMany, m.ID)
		}
	}
	Put(t, st, recs...)
	many = append(many, many...)
	if got := memoryIDs(getMemories(t, st, scU1, many)); !sameSet(got, wantMany) {
		t.Errorf("GetMemories of %d ids: %d memories, want %d", len(many), len(got), len(wantMany))
	}
}

func testVersionRoundTrip(t *testing.T, open Opener) {
	st := open(t)
	m := fullMemory(nsU1)
	m.Status = engram.StatusActive
	v1 := Version(m, 1, engram.OpAdd)
	changed := *m
	changed.Value = "changed"
	changed.Version = 2
	v2 := &engram.Version{MemoryID: m.ID, Namespace: nsU1, Version: 2, Op: engram.OpUpdate,
		Old: m, New: &changed, Actor: "alice", Reason: "typo", At: At(time.Second)}
	v3 := &engram.Version{MemoryID: m.ID, Namespace: nsU1, Version: 3, Op: engram.OpDelete,
		Old: &changed, At: At(2 * time.Second)}
	// Inserted out of order: Versions must sort them.
	Put(t, st, m, v3, v1, v2)
	var got []engram.Version
	view(t, st, func(r engram.Reader) error {
		var err error
		got, err = r.Versions(ctx, scU1, m.ID)
		return err
	})
	sameJSON(t, "versions", got, []*engram.Version{v1, v2, v3})

	// A memory without history has an empty one.
	bare := Memory(nsU1, "no history")
	Put(t, st, bare)
	view(t, st, func(r engram.Reader) error {
		vs, err := r.Versions(ctx, scU1, bare.ID)
		if err != nil || len(vs) != 0 {
			t.Errorf("Versions of a memory without history = %v, %v; want none, nil", vs, err)
		}
		return nil
	})
}

func testAuditRoundTrip(t *testing.T, open Opener) {
	st := open(t)
	a := &engram.AuditEntry{ID: engram.NewID(), Namespace: engram.Namespace{Org: "acme", Project: "app",
		User: "u1", Agent: "x", Session: "y"}, Actor: "admin", Op: "memory.update",
		IDs: []string{engram.NewID(), engram.NewID()}, Detail: "changed 2 fields", At: At(time.Millisecond)}
	b := &engram.AuditEntry{ID: engram.NewID(), Namespace: nsU1, Op: "scope.delete", At: T0}
	Put(t, st, a, b)
	got := listAudit(t, st, engram.Scope{Org: "acme", Project: "app", User: "u1"}, engram.AuditFilter{})
	sameJSON(t, "audit", got, []*engram.AuditEntry{b, a})
}

func testDuplicateIDs(t *testing.T, open Opener) {
	st := open(t)
	e := Episode(nsU1, "once")
	m := Memory(nsU1, "once")
	v := Version(m, 1, engram.OpAdd)
	a := Audit(nsU1, "episode.add", e.ID)
	Put(t, st, e, m, v, a)

	// A duplicate in another namespace of the same tenant conflicts too.
	e2, m2, a2 := *e, *m, *a
	e2.Namespace, m2.Namespace, a2.Namespace = nsU2, nsU2, nsU2
	e2.Content, m2.Value = "twice", "twice"
	v2 := *v
	for _, c := range []struct {
		name string
		rec  any
	}{{"episode", e}, {"episode other user", &e2}, {"memory", m}, {"memory other user", &m2},
		{"version", &v2}, {"audit", a}, {"audit other user", &a2}} {
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
	if hits := search(t, st, engram.ScopeOf(nsU2), "twice", engram.MemoryFilter{}, 10); len(hits) != 0 {
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
			err = r.(engram.VectorReader).ScanVectors(ctx, s, embA, func(engram.VectorRecord) error { return nil })
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

func testUpdateAtomicity(t *testing.T, open Opener) {
	st := open(t)
	kept := Memory(nsU1, "original walrus text")
	Put(t, st, kept, Version(kept, 1, engram.OpAdd))
	keptVec := engram.FieldVector{Field: engram.FieldValue, Vec: vec(1, 3)}
	putVectors(t, st, nsU1, kept.ID, embA, keptVec)
	update(t, st, func(tx engram.Tx) error { return tx.(engram.MetaWriter).SetMeta(ctx, "walrus", "before") })

	e := Episode(nsU1, "lost narwhal episode")
	m := Memory(nsU1, "lost narwhal memory")
	err := st.Update(ctx, func(tx engram.Tx) error {
		if err := insert(ctx, tx, e, m, Version(m, 1, engram.OpAdd), Audit(nsU1, "memory.add", m.ID)); err != nil {
			return err
		}
		repl := *kept
		repl.Value = "replaced narwhal text"
		if err := tx.ReplaceMemory(ctx, &repl); err != nil {
			return err
		}
		if err := tx.InsertVersion(ctx, Version(&repl, 2, engram.OpUpdate)); err != nil {
			return err
		}
		if err := tx.Touch(ctx, nsU1, []string{kept.ID}, At(time.Hour)); err != nil {
			return err
		}
		if err := tx.(engram.VectorWriter).PutVectors(ctx, nsU1, kept.ID, embA, []engram.FieldVector{{Field: engram.FieldAbstraction, Vec: vec(2, 3)}}); err != nil {
			return err
		}
		if err := tx.(engram.VectorWriter).PutVectors(ctx, nsU1, m.ID, embB, []engram.FieldVector{keptVec}); err != nil {
			return err
		}
		if err := tx.(engram.MetaWriter).SetMeta(ctx, "walrus", "after"); err != nil {
			return err
		}
		if err := tx.(engram.MetaWriter).SetMeta(ctx, "narwhal", "new"); err != nil {
			return err
		}
		if _, err := tx.(engram.VectorWriter).DeleteVectorsExcept(ctx, embB); err != nil {
			return err
		}
		// Inside the transaction the writes are visible.
		if hits, err := tx.SearchText(ctx, scU1, "narwhal", engram.MemoryFilter{}, 10); err != nil || len(hits) != 2 {
			t.Errorf("inside the transaction: %d hits, %v; want 2", len(hits), err)
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	if _, err := getEpisode(t, st, scU1, e.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("rolled-back episode: %v", err)
	}
	if _, err := getMemory(t, st, scU1, m.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("rolled-back memory: %v", err)
	}
	if hits := search(t, st, scU1, "narwhal", engram.MemoryFilter{}, 10); len(hits) != 0 {
		t.Errorf("rolled-back text is searchable: %v", hitIDs(hits))
	}
	if hits := search(t, st, scU1, "walrus", engram.MemoryFilter{}, 10); len(hits) != 1 {
		t.Errorf("original text is not searchable after a rollback: %v", hitIDs(hits))
	}
	got := mustMemory(t, st, scU1, kept.ID)
	sameJSON(t, "memory after rolled-back replace and touch", got, kept)
	view(t, st, func(r engram.Reader) error {
		vs, err := r.Versions(ctx, scU1, kept.ID)
		if err != nil || len(vs) != 1 {
			t.Errorf("versions after rollback: %d, %v; want 1", len(vs), err)
		}
		_, err = r.Versions(ctx, scU1, m.ID)
		wantCode(t, "versions of rolled-back memory", err, engram.ENOTFOUND)
		return nil
	})
	if n := len(listAudit(t, st, scU1, engram.AuditFilter{})); n != 0 {
		t.Errorf("%d audit entries survived a rollback", n)
	}
	wantVectors(t, "vectors after rollback", scanVectors(t, st, scU1, embA),
		map[string][]float32{kept.ID + "/value": keptVec.Vec}, nil)
	if got := scanVectors(t, st, scU1, embB); len(got) != 0 {
		t.Errorf("rolled-back vectors are stored: %v", vectorKeys(got))
	}
	if got := meta(t, st, "walrus"); got != "before" {
		t.Errorf("meta after rollback = %q, want before", got)
	}
	if got := meta(t, st, "narwhal"); got != "" {
		t.Errorf("rolled-back meta key has %q", got)
	}
}

func testUpdatePanic(t *testing.T, open Opener) {
	st := open(t)
	e := Episode(nsU1, "panicked")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Update swallowed a panic in fn")
			}
		}()
		_ = st.Update(ctx, func(tx engram.Tx) error {
			if err := tx.InsertEpisode(ctx, e); err != nil {
				return err
			}
			panic("storetest: panic in fn")
		})
	}()
	if _, err := getEpisode(t, st, scU1, e.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("episode written by a panicking fn: %v", err)
	}
	// The store must still accept writes.
	done := make(chan struct{})
	go func() {
		defer close(done)
		Put(t, st, Episode(nsU1, "after the panic"))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Update blocks after a panic in fn")
	}
}

func testUpdateSeesOwnWrites(t *testing.T, open Opener) {
	st := open(t)
	e := Episode(nsU1, "mine")
	m := Memory(nsU1, "my own memory")
	update(t, st, func(tx engram.Tx) error {
		if err := insert(ctx, tx, e, m); err != nil {
			return err
		}
		if _, err := tx.GetEpisode(ctx, scU1, e.ID); err != nil {
			return err
		}
		got, err := tx.GetMemory(ctx, scU1, m.ID)
		if err != nil {
			return err
		}
		got.Value = "my changed memory"
		if err := tx.ReplaceMemory(ctx, got); err != nil {
			return err
		}
		again, err := tx.GetMemory(ctx, scU1, m.ID)
		if err != nil {
			return err
		}
		if again.Value != "my changed memory" {
			t.Errorf("read after replace in the same transaction: %q", again.Value)
		}
		return nil
	})
}

func testTouch(t *testing.T, open Opener) {
	st := open(t)
	m := Memory(nsU1, "touch me")
	same := *m // same id in another tenant
	same.Namespace = nsOther
	Put(t, st, m, &same)
	at1, at2 := At(time.Hour), At(2*time.Hour)
	update(t, st, func(tx engram.Tx) error {
		if err := tx.Touch(ctx, engram.Namespace{Org: "acme", Project: "app"}, []string{m.ID, engram.NewID()}, at1); err != nil {
			return err
		}
		return tx.Touch(ctx, nsU2, []string{m.ID}, at2) // same tenant, other user
	})
	got := mustMemory(t, st, scU1, m.ID)
	if got.AccessCount != 2 || got.LastAccessed == nil || !got.LastAccessed.Equal(at2) {
		t.Errorf("after two touches: access_count %d, last_accessed %v; want 2, %v", got.AccessCount, got.LastAccessed, at2)
	}
	other := mustMemory(t, st, engram.ScopeOf(nsOther), m.ID)
	if other.AccessCount != 0 || other.LastAccessed != nil {
		t.Errorf("touch reached another tenant: %d, %v", other.AccessCount, other.LastAccessed)
	}
	// Touch changes nothing else.
	want := *m
	want.AccessCount, want.LastAccessed = 2, &at2
	sameJSON(t, "touched memory", got, &want)

	update(t, st, func(tx engram.Tx) error { return tx.Touch(ctx, nsU1, nil, at1) })
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.Touch(ctx, nsU1, []string{"bad"}, at1) })
	wantCode(t, "Touch with a bad id", err, engram.EINVALID)
}

func testClose(t *testing.T, open Opener) {
	st := open(t)
	if err := st.Ready(ctx); err != nil {
		t.Fatalf("Ready on an open store: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantCode(t, "Ready after Close", st.Ready(ctx), engram.EUNAVAILABLE)
	if err := st.Update(ctx, func(tx engram.Tx) error { return nil }); err == nil {
		t.Error("Update after Close succeeded")
	}
	if err := st.View(ctx, func(r engram.Reader) error { return nil }); err == nil {
		t.Error("View after Close succeeded")
	}
}

func testContextCancel(t *testing.T, open Opener) {
	st := open(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	never := Episode(nsU1, "never")
	err := st.Update(cctx, func(tx engram.Tx) error { return tx.InsertEpisode(cctx, never) })
	if err == nil {
		t.Error("Update with a cancelled context succeeded")
	} else if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v, want context.Canceled in the chain", err)
	}
	if _, err := getEpisode(t, st, scU1, never.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("episode of a cancelled update: %v", err)
	}
	if err := st.View(cctx, func(r engram.Reader) error {
		_, _, err := r.ListEpisodes(cctx, scU1, engram.EpisodeFilter{})
		return err
	}); err == nil {
		t.Error("View with a cancelled context succeeded")
	}

	// Cancelled after the writes but before the commit: either the commit
	// fails and nothing is kept, or it succeeds and everything is.
	cctx, cancel = context.WithCancel(ctx)
	e := Episode(nsU1, "cancelled late")
	err = st.Update(cctx, func(tx engram.Tx) error {
		if err := tx.InsertEpisode(cctx, e); err != nil {
			return err
		}
		cancel()
		return nil
	})
	_, gerr := getEpisode(t, st, scU1, e.ID)
	switch {
	case err == nil && gerr != nil:
		t.Errorf("Update returned nil but the episode is missing: %v", gerr)
	case err != nil && gerr == nil:
		t.Errorf("Update failed (%v) but the episode was kept", err)
	}
	if eps := listEpisodes(t, st, scU1, engram.EpisodeFilter{}); err != nil && len(eps) != 0 {
		t.Errorf("%d episodes after cancelled updates", len(eps))
	}
	// The store still works.
	Put(t, st, Episode(nsU1, "after cancel"))
}

// allStatuses asks a memory filter for every status.
var allStatuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}

func sortedDesc(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

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

package enginetest

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

func ptr[T any](v T) *T { return &v }

func testUpdateVersions(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	m := mustAddMemory(t, e, nsA, "Alice lives in Paris.")
	u, err := e.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Value: ptr("Alice lives in Lyon."), Reason: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Version != 2 || u.Value != "Alice lives in Lyon." {
		t.Fatalf("updated = v%d %q", u.Version, u.Value)
	}
	// The update sticks: search finds the new text, not the old.
	if ids := searchIDs(t, e, scA, "Lyon"); !contains(ids, m.ID) {
		t.Errorf("search Lyon = %v, want %s", ids, m.ID)
	}
	if ids := searchIDs(t, e, scA, "Paris"); len(ids) != 0 {
		t.Errorf("search Paris after update = %v, want none", ids)
	}
	// A patch that changes nothing makes no version.
	if u2, err := e.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Value: ptr("Alice lives in Lyon.")}); err != nil || u2.Version != 2 {
		t.Errorf("no-op update: v%d, %v", u2.Version, err)
	}
	h, err := e.History(ctx, scA, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Op != engram.OpAdd || h[1].Op != engram.OpUpdate {
		t.Fatalf("history = %+v", h)
	}
	if h[1].Old == nil || h[1].Old.Value != "Alice lives in Paris." || h[1].New.Value != "Alice lives in Lyon." {
		t.Errorf("history old/new wrong: %+v", h[1])
	}
	if h[1].Reason != "moved" || h[1].Actor != "test" {
		t.Errorf("reason/actor = %q/%q", h[1].Reason, h[1].Actor)
	}
	if _, err := e.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Confidence: ptr(2.0)}); code(err) != engram.EINVALID {
		t.Errorf("confidence 2: %v, want invalid", err)
	}
	if _, err := e.UpdateMemory(ctx, scA, "bad", engram.MemoryPatch{}); code(err) != engram.EINVALID {
		t.Errorf("bad id: %v, want invalid", err)
	}
	if _, err := e.UpdateMemory(ctx, scA, engram.NewID(), engram.MemoryPatch{Value: ptr("x")}); code(err) != engram.ENOTFOUND {
		t.Errorf("unknown id: %v, want not found", err)
	}
}

func testSupersede(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	m := mustAddMemory(t, e, nsA, "Alice works at Initech.")
	at := t0.Add(24 * time.Hour)
	r, err := e.SupersedeMemory(ctx, scA, m.ID, engram.SupersedeRequest{New: engram.Memory{Value: "Alice works at Globex."}, At: &at, Reason: "new job"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Old.Status != engram.StatusSuperseded || r.Old.ValidTo == nil || !r.Old.ValidTo.Equal(at) || r.Old.SupersededBy != r.New.ID {
		t.Errorf("old after supersede: %+v", r.Old)
	}
	if r.New.ValidFrom == nil || !r.New.ValidFrom.Equal(at) || r.New.Status != engram.StatusActive {
		t.Errorf("new after supersede: %+v", r.New)
	}
	if ids := searchIDs(t, e, scA, "Alice works"); len(ids) != 1 || ids[0] != r.New.ID {
		t.Errorf("search after supersede = %v, want only the new memory", ids)
	}
	if n := countMemories(t, e, scA, engram.StatusSuperseded); n != 1 {
		t.Errorf("superseded kept = %d, want 1", n)
	}
	// As of a time before the change, the old fact held.
	before := t0
	p, err := e.ListMemories(ctx, scA, engram.MemoryFilter{ValidAt: &before, Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Memories) != 1 || p.Memories[0].ID != m.ID {
		t.Errorf("valid at t0: %d memories", len(p.Memories))
	}
	if _, err := e.SupersedeMemory(ctx, scA, m.ID, engram.SupersedeRequest{New: engram.Memory{Value: "again"}}); code(err) != engram.ECONFLICT {
		t.Errorf("superseding a superseded memory: %v, want conflict", err)
	}
	h, _ := e.History(ctx, scA, m.ID)
	if len(h) != 2 || h[1].Op != engram.OpSupersede {
		t.Errorf("history of old = %+v", h)
	}
}

func testDeletes(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	m := mustAddMemory(t, e, nsA, "The wifi password is hunter2.")
	if err := e.DeleteMemory(ctx, scA, m.ID, engram.DeleteOptions{Reason: "oops"}); err != nil {
		t.Fatal(err)
	}
	if ids := searchIDs(t, e, scA, "wifi password"); len(ids) != 0 {
		t.Errorf("soft-deleted memory found by search: %v", ids)
	}
	if n := countMemories(t, e, scA); n != 0 {
		t.Errorf("soft-deleted memory listed")
	}
	got, err := e.GetMemory(ctx, scA, m.ID)
	if err != nil || got.Status != engram.StatusDeleted {
		t.Fatalf("get soft-deleted: %v %v", got, err)
	}
	if _, err := e.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Value: ptr("x")}); code(err) != engram.ECONFLICT {
		t.Errorf("update deleted: %v, want conflict", err)
	}
	r, err := e.RestoreMemory(ctx, scA, m.ID, "")
	if err != nil || r.Status != engram.StatusActive || r.Version != 3 {
		t.Fatalf("restore: %+v %v", r, err)
	}
	if ids := searchIDs(t, e, scA, "wifi password"); len(ids) != 1 {
		t.Errorf("restored memory not found: %v", ids)
	}
	if _, err := e.RestoreMemory(ctx, scA, m.ID, ""); code(err) != engram.ECONFLICT {
		t.Errorf("restore active: %v, want conflict", err)
	}
	if err := e.DeleteMemory(ctx, scA, m.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetMemory(ctx, scA, m.ID); code(err) != engram.ENOTFOUND {
		t.Errorf("get after hard delete: %v", err)
	}
	if _, err := e.History(ctx, scA, m.ID); code(err) != engram.ENOTFOUND {
		t.Errorf("history after hard delete: %v", err)
	}
	if ids := searchIDs(t, e, scA, "hunter2"); len(ids) != 0 {
		t.Errorf("hard-deleted memory found: %v", ids)
	}
	var buf []engram.Record
	if err := e.Export(ctx, scA, func(r engram.Record) error { buf = append(buf, r); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, r := range buf {
		if r.Type == engram.RecordMemory || r.Type == engram.RecordVersion {
			t.Errorf("export after hard delete still has %s", r.Type)
		}
	}
	if err := e.DeleteMemory(ctx, scA, m.ID, engram.DeleteOptions{Hard: true}); code(err) != engram.ENOTFOUND {
		t.Errorf("second hard delete: %v, want not found", err)
	}
}

func testRollback(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	m := mustAddMemory(t, e, nsA, "Favourite colour: blue.")
	for _, v := range []string{"Favourite colour: green.", "Favourite colour: red."} {
		if _, err := e.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Value: ptr(v)}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.Rollback(ctx, scA, m.ID, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != "Favourite colour: blue." || r.Version != 4 {
		t.Errorf("rollback = v%d %q", r.Version, r.Value)
	}
	h, _ := e.History(ctx, scA, m.ID)
	if len(h) != 4 || h[3].Reason != "rollback to version 1" {
		t.Errorf("history after rollback = %+v", h)
	}
	if ids := searchIDs(t, e, scA, "red"); len(ids) != 0 {
		t.Errorf("rolled-back text still found")
	}
	if _, err := e.Rollback(ctx, scA, m.ID, 9, ""); code(err) != engram.ENOTFOUND {
		t.Errorf("rollback to missing version: %v", err)
	}
	if _, err := e.Rollback(ctx, scA, m.ID, 0, ""); code(err) != engram.EINVALID {
		t.Errorf("rollback to 0: %v", err)
	}
	// A deleted memory comes back by rollback.
	if err := e.DeleteMemory(ctx, scA, m.ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, err := e.Rollback(ctx, scA, m.ID, 2, ""); err != nil || r.Status != engram.StatusActive || r.Value != "Favourite colour: green." {
		t.Errorf("rollback deleted: %+v %v", r, err)
	}
}

func testDeleteScope(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	mustAddEpisodes(t, e, nsA, "alice one", "alice two")
	other := nsA
	other.Session = "s2"
	mustAddEpisodes(t, e, other, "alice other session")
	mustAddEpisodes(t, e, nsB, "bob one")

	if _, err := e.DeleteScope(ctx, engram.Scope{Org: "acme", Project: "p"}); code(err) != engram.EINVALID {
		t.Fatalf("project-wide delete: %v, want invalid", err)
	}
	c, err := e.DeleteScope(ctx, engram.Scope{Org: "acme", Project: "p", User: "alice", Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Episodes != 2 || c.Memories != 2 {
		t.Errorf("session purge counts = %+v", c)
	}
	if n := countEpisodes(t, e, scA); n != 1 {
		t.Errorf("alice episodes left = %d, want 1 (other session)", n)
	}
	if _, err := e.DeleteScope(ctx, scA); err != nil {
		t.Fatal(err)
	}
	if n := countEpisodes(t, e, scA) + countMemories(t, e, scA); n != 0 {
		t.Errorf("alice records left = %d", n)
	}
	if ids := searchIDs(t, e, scA, "alice"); len(ids) != 0 {
		t.Errorf("search finds purged: %v", ids)
	}
	if n := countEpisodes(t, e, scB); n != 1 {
		t.Errorf("bob's episodes = %d, want 1", n)
	}
}

func testDeleteEpisode(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	res := mustAddEpisodes(t, e, nsA, "to be forgotten")
	id := res.Episodes[0].ID
	if _, err := e.DeleteEpisode(ctx, scB, id); code(err) != engram.ENOTFOUND {
		t.Errorf("delete other user's episode: %v", err)
	}
	if _, err := e.DeleteEpisode(ctx, scA, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetEpisode(ctx, scA, id); code(err) != engram.ENOTFOUND {
		t.Errorf("get deleted episode: %v", err)
	}
}

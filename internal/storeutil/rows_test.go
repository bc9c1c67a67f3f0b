package storeutil_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// row is one result row of fixed values, scanned as the drivers do.
type row []any

func (r row) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("scan %d values into %d", len(r), len(dest))
	}
	for i, d := range dest {
		switch p := d.(type) {
		case *string:
			*p = r[i].(string)
		case *float64:
			*p = r[i].(float64)
		default:
			return fmt.Errorf("cannot scan into %T", d)
		}
	}
	return nil
}

func TestCommunitiesGathersMembersAndSources(t *testing.T) {
	var cs storeutil.Communities
	cs.Add(engram.Community{ID: "c1"})
	cs.Add(engram.Community{ID: "c2"})
	members, sources := storeutil.MemberRows[row](&cs), storeutil.SourceRows[row](&cs)
	for _, r := range []row{{"c2", "e1"}, {"c1", "e2"}, {"c2", "e3"}} {
		if err := members(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := sources(row{"c1", "m1"}); err != nil {
		t.Fatal(err)
	}
	got := cs.List()
	if len(got) != 2 || fmt.Sprint(got[0].Members, got[0].Sources, got[1].Members, got[1].Sources) != "[e2] [m1] [e1 e3] []" {
		t.Errorf("communities = %+v", got)
	}
	if ids := cs.IDs(); fmt.Sprint(ids) != "[c1 c2]" {
		t.Errorf("IDs = %v", ids)
	}
	if got[1].Sources == nil {
		t.Error("a community without sources has a nil list; want an empty one")
	}
}

func TestEvidenceRowsFillsEachRelation(t *testing.T) {
	rs := []engram.Relation{{ID: "r1"}, {ID: "r2"}}
	ids, add := storeutil.EvidenceRows[row](rs)
	if fmt.Sprint(ids) != "[r1 r2]" {
		t.Errorf("ids = %v", ids)
	}
	if err := add(row{"r2", "m1", 0.5}); err != nil {
		t.Fatal(err)
	}
	if rs[0].Evidence == nil || len(rs[0].Evidence) != 0 || len(rs[1].Evidence) != 1 || rs[1].Evidence[0].Weight != 0.5 {
		t.Errorf("evidence = %+v, %+v", rs[0].Evidence, rs[1].Evidence)
	}
}

func TestOneAndPages(t *testing.T) {
	if _, err := storeutil.One([]engram.Community(nil), nil, "community", "x"); engram.ErrorCode(err) != engram.ENOTFOUND || engram.ErrorMessage(err) != "community x not found" {
		t.Errorf("One of none: %v", err)
	}
	boom := errors.New("boom")
	if _, err := storeutil.One([]int{1}, boom, "n", "1"); err != boom {
		t.Errorf("One passes %v, want the read's error", err)
	}
	ms := []engram.Memory{{ID: engram.NewID()}, {ID: engram.NewID()}, {ID: engram.NewID()}}
	page, next, err := storeutil.MemoryPage(ms, 2, nil)
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("MemoryPage = %v, %q, %v", page, next, err)
	}
	if id, err := storeutil.MemoryAfter(next); err != nil || id != ms[1].ID {
		t.Errorf("MemoryAfter(next) = %q, %v; want %s", id, err, ms[1].ID)
	}
	if _, err := storeutil.JobAfter(next); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("a memory cursor read as a job cursor: %v, want EINVALID", err)
	}
	if _, _, err := storeutil.MemoryPage(ms, 2, boom); err != boom {
		t.Errorf("MemoryPage passes %v, want the read's error", err)
	}
	es := []engram.Entity{{ID: engram.NewID(), Norm: "ana"}, {ID: engram.NewID(), Norm: "bo"}}
	_, next, _ = storeutil.EntityPage(es, 1, nil)
	if norm, id, err := storeutil.EntityAfter(next); err != nil || norm != "ana" || id != es[0].ID {
		t.Errorf("EntityAfter(next) = %q, %q, %v", norm, id, err)
	}
}

func TestDecodeVersionStates(t *testing.T) {
	v := engram.Version{MemoryID: "m", Version: 2}
	if err := storeutil.DecodeVersionStates(&v, nil, []byte(`{"abstraction":"x","metadata":{"n":12345678901234567890}}`)); err != nil {
		t.Fatal(err)
	}
	if v.Old != nil || v.New == nil || v.New.Abstraction != "x" || fmt.Sprint(v.New.Metadata["n"]) != "12345678901234567890" {
		t.Errorf("version states: old %v new %+v", v.Old, v.New)
	}
	if err := storeutil.DecodeVersionStates(&v, []byte("{"), nil); err == nil {
		t.Error("a malformed state decoded")
	}
}

func TestRecordEntityDeletion(t *testing.T) {
	snap := &engram.Entity{ID: "e", Name: "Ana"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name     string
		ctx      context.Context
		forgets  bool
		wantSnap bool
		wantOp   string
	}{
		{"delete", context.Background(), true, false, engram.EntityDeleted},
		{"merge", engram.WithEntityChange(context.Background(), engram.EntityChange{Op: engram.EntityMerged, At: at}), false, true, engram.EntityMerged},
	} {
		forgot := false
		var got engram.EntityChange
		var gotSnap *engram.Entity
		var gotAt time.Time
		err := storeutil.RecordEntityDeletion(c.ctx, snap, func() error { forgot = true; return nil },
			func(ch engram.EntityChange, s *engram.Entity, a time.Time) error {
				got, gotSnap, gotAt = ch, s, a
				return nil
			})
		if err != nil || forgot != c.forgets || (gotSnap != nil) != c.wantSnap || got.Op != c.wantOp || gotAt.IsZero() {
			t.Errorf("%s: err %v, forgot %v, snapshot %v, op %q, at %v", c.name, err, forgot, gotSnap, got.Op, gotAt)
		}
		if c.name == "merge" && !gotAt.Equal(at) {
			t.Errorf("merge recorded at %v, want the change's %v", gotAt, at)
		}
	}
	boom := errors.New("boom")
	if err := storeutil.RecordEntityDeletion(context.Background(), snap, func() error { return boom },
		func(engram.EntityChange, *engram.Entity, time.Time) error {
			t.Error("recorded after forget failed")
			return nil
		}); err != boom {
		t.Errorf("a failed forget gives %v, want its error", err)
	}
}

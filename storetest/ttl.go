package storetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// testTTLFilter: the filter judges TTLs at its Now: an active memory past
// its expires_at is listed and searched only as expired; with ValidAt it
// judges at ValidAt, where a memory stored as expired whose TTL had not
// passed yet still counts as active.
func testTTLFilter(t *testing.T, open Opener) {
	st := open(t)
	lapsed, later, plain, swept := Memory(nsU1, "lapsed parcel note"), Memory(nsU1, "later parcel note"),
		Memory(nsU1, "plain parcel note"), Memory(nsU1, "swept parcel note")
	lapsed.ExpiresAt, later.ExpiresAt = Ptr(At(time.Hour)), Ptr(At(3*time.Hour))
	swept.ExpiresAt, swept.Status = Ptr(At(time.Hour)), engram.StatusExpired
	deleted := Memory(nsU1, "deleted parcel note")
	deleted.ExpiresAt, deleted.Status = Ptr(At(time.Hour)), engram.StatusDeleted
	Put(t, st, lapsed, later, plain, swept, deleted)
	now := At(2 * time.Hour)
	asOf := At(30 * time.Minute)
	for _, c := range []struct {
		name string
		f    engram.MemoryFilter
		want []*engram.Memory
	}{
		{"current", engram.MemoryFilter{Now: now}, []*engram.Memory{later, plain}},
		{"before every TTL", engram.MemoryFilter{Now: At(0)}, []*engram.Memory{lapsed, later, plain}},
		{"expired", engram.MemoryFilter{Now: now, Statuses: []engram.Status{engram.StatusExpired}}, []*engram.Memory{lapsed, swept}},
		{"active and expired", engram.MemoryFilter{Now: now, Statuses: []engram.Status{engram.StatusActive, engram.StatusExpired}}, []*engram.Memory{lapsed, later, plain, swept}},
		{"deleted is not judged", engram.MemoryFilter{Now: now, Statuses: []engram.Status{engram.StatusDeleted}}, []*engram.Memory{deleted}},
		{"as of before the TTL", engram.MemoryFilter{Now: now, ValidAt: &asOf}, []*engram.Memory{lapsed, later, plain, swept}},
		{"expired as of before the TTL", engram.MemoryFilter{Now: now, ValidAt: &asOf, Statuses: []engram.Status{engram.StatusExpired}}, nil},
		{"as of after the TTL", engram.MemoryFilter{Now: At(0), ValidAt: &now}, []*engram.Memory{later, plain}},
	} {
		want := ids(c.want)
		f := c.f
		f.Limit = engram.MaxLimit
		view(t, st, func(r engram.Reader) error {
			ms, _, err := r.ListMemories(ctx, scU1, f)
			if err != nil {
				return err
			}
			if got := sortedIDs(ms); !slices.Equal(got, want) {
				t.Errorf("%s: list = %v, want %v", c.name, got, want)
			}
			hits, err := r.SearchText(ctx, scU1, "parcel", f, 20)
			if err != nil {
				return err
			}
			got := make([]string, len(hits))
			for i, h := range hits {
				got[i] = h.Memory.ID
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: search = %v, want %v", c.name, got, want)
			}
			return nil
		})
	}
}

func ids(ms []*engram.Memory) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	slices.Sort(out)
	return out
}

func sortedIDs(ms []engram.Memory) []string {
	out := memoryIDs(ms)
	slices.Sort(out)
	return out
}

// testLapsed: Expirer.Lapsed finds the active memories of every tenant
// whose TTL has passed, soonest first, at most limit of them.
func testLapsed(t *testing.T, open Opener) {
	st := open(t)
	a, b, c := Memory(nsU1, "a"), Memory(nsOther, "b"), Memory(nsU2, "c")
	a.ExpiresAt, b.ExpiresAt, c.ExpiresAt = Ptr(At(2*time.Hour)), Ptr(At(time.Hour)), Ptr(At(5*time.Hour))
	gone := Memory(nsU1, "deleted")
	gone.ExpiresAt, gone.Status = Ptr(At(time.Hour)), engram.StatusDeleted
	Put(t, st, a, b, c, gone, Memory(nsU1, "no ttl"))
	view(t, st, func(r engram.Reader) error {
		ms, err := r.Lapsed(ctx, At(3*time.Hour), 10)
		if err != nil {
			return err
		}
		got := map[string]engram.Namespace{}
		var order []string
		for _, m := range ms {
			got[m.ID] = m.Namespace
			order = append(order, m.ID)
		}
		if want := []string{b.ID, a.ID}; !slices.Equal(order, want) || got[b.ID] != nsOther {
			t.Errorf("Lapsed = %v (%v), want %v", order, slices.Collect(maps.Values(got)), want)
		}
		if ms, err := r.Lapsed(ctx, At(3*time.Hour), 1); err != nil || len(ms) != 1 || ms[0].ID != b.ID {
			t.Errorf("Lapsed with limit 1 = %v, %v", ms, err)
		}
		_, err = r.Lapsed(ctx, At(0), 0)
		wantCode(t, "Lapsed with limit 0", err, engram.EINVALID)
		return nil
	})
}

// testTouchCounts: an id listed n times in one Touch gains n accesses.
func testTouchCounts(t *testing.T, open Opener) {
	st := open(t)
	m, n := Memory(nsU1, "read three times"), Memory(nsU1, "read once")
	Put(t, st, m, n)
	update(t, st, func(tx engram.Tx) error {
		return tx.Touch(ctx, nsU1, []string{m.ID, n.ID, m.ID, m.ID}, At(time.Hour))
	})
	if got := mustMemory(t, st, scU1, m.ID).AccessCount; got != 3 {
		t.Errorf("access count of an id listed three times = %d, want 3", got)
	}
	if got := mustMemory(t, st, scU1, n.ID).AccessCount; got != 1 {
		t.Errorf("access count of an id listed once = %d, want 1", got)
	}
}

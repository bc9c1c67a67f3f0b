package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

const day = 24 * time.Hour

func testMemoryFilters(t *testing.T, open Opener) {
	st := open(t)
	mk := func(name string, kind engram.Kind, status engram.Status, created time.Duration, from, to *time.Time, md map[string]any) *engram.Memory {
		m := Memory(nsU1, "common "+name)
		m.Kind, m.Status, m.CreatedAt, m.UpdatedAt = kind, status, At(created), At(created)
		m.ValidFrom, m.ValidTo, m.Metadata = from, to, md
		return m
	}
	m1 := mk("first: loves 50% off_sales", engram.KindSemantic, engram.StatusActive, time.Hour, nil, nil, map[string]any{
		"color": "red", "n": 3, "flag": true, "tags": []any{"a", "b"}, "obj": map[string]any{"x": 1, "y": "z"},
		"nil": nil, "a.b": "dot", "名前": "太郎", "num_str": "3", engram.MetaFingerprint: "fp1",
	})
	m1.Abstraction = "Shopping habit"
	m1.Cues = []string{"Alice Smith", "Paris", `Dr. "Bob" \ co`}
	m2 := mk("second", engram.KindEpisodic, engram.StatusActive, 2*time.Hour, Ptr(T0), Ptr(At(10*day)),
		map[string]any{"color": "blue", "n": 3.5, "flag": false, "one": 1, engram.MetaFingerprint: 7})
	m3 := mk("third", engram.KindProcedural, engram.StatusSuperseded, 3*time.Hour, Ptr(At(5*day)), nil,
		map[string]any{"color": "red", "n": 4, engram.MetaFingerprint: []any{"fp1"}})
	m4 := mk("fourth", engram.KindCore, engram.StatusDeleted, 4*time.Hour, nil, Ptr(At(2*day)), nil)
	m5 := mk("fifth", engram.KindSemantic, engram.StatusExpired, 5*time.Hour, Ptr(At(20*day)), Ptr(At(30*day)),
		map[string]any{"tags": []any{"b", "a"}})
	// A memory of another user matches every filter but is out of scope.
	stranger := mk("stranger: loves 50% off_sales alice", engram.KindSemantic, engram.StatusActive, time.Hour, nil, nil, m1.Metadata)
	stranger.Namespace = nsU2
	e1, e2 := engram.NewID(), engram.NewID()
	m1.Sources, m2.Sources, stranger.Sources = []string{e1, e2}, []string{e2}, []string{e1}
	Put(t, st, m1, m2, m3, m4, m5, stranger)

	names := map[string]string{m1.ID: "m1", m2.ID: "m2", m3.ID: "m3", m4.ID: "m4", m5.ID: "m5", stranger.ID: "stranger"}
	named := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = names[id]
		}
		slices.Sort(out)
		return out
	}
	all := allStatuses
	cases := []struct {
		name string
		f    engram.MemoryFilter
		want []string
	}{
		{"default is active only", engram.MemoryFilter{}, []string{"m1", "m2"}},
		{"every status", engram.MemoryFilter{Statuses: all}, []string{"m1", "m2", "m3", "m4", "m5"}},
		{"some statuses", engram.MemoryFilter{Statuses: []engram.Status{engram.StatusSuperseded, engram.StatusDeleted}}, []string{"m3", "m4"}},
		{"kind", engram.MemoryFilter{Kinds: []engram.Kind{engram.KindSemantic}, Statuses: all}, []string{"m1", "m5"}},
		{"kinds", engram.MemoryFilter{Kinds: []engram.Kind{engram.KindCore, engram.KindEpisodic}, Statuses: all}, []string{"m2", "m4"}},
		{"created after is inclusive", engram.MemoryFilter{CreatedAfter: Ptr(At(2 * time.Hour)), Statuses: all}, []string{"m2", "m3", "m4", "m5"}},
		{"created before is exclusive", engram.MemoryFilter{CreatedBefore: Ptr(At(2 * time.Hour)), Statuses: all}, []string{"m1"}},
		{"created range", engram.MemoryFilter{CreatedAfter: Ptr(At(2 * time.Hour)), CreatedBefore: Ptr(At(4 * time.Hour)), Statuses: all}, []string{"m2", "m3"}},
		{"valid at", engram.MemoryFilter{ValidAt: Ptr(At(day)), Statuses: all}, []string{"m1", "m2", "m4"}},
		{"valid at a start is inside", engram.MemoryFilter{ValidAt: Ptr(At(5 * day)), Statuses: all}, []string{"m1", "m2", "m3"}},
		{"valid at an end is outside", engram.MemoryFilter{ValidAt: Ptr(At(10 * day)), Statuses: all}, []string{"m1", "m3"}},
		{"valid overlap", engram.MemoryFilter{ValidAfter: Ptr(At(12 * day)), ValidBefore: Ptr(At(25 * day)), Statuses: all}, []string{"m1", "m3", "m5"}},
		{"valid after alone", engram.MemoryFilter{ValidAfter: Ptr(At(10 * day)), Statuses: all}, []string{"m1", "m3", "m5"}},
		{"valid before alone", engram.MemoryFilter{ValidBefore: Ptr(At(5 * day)), Statuses: all}, []string{"m1", "m2", "m4"}},
		{"metadata string", engram.MemoryFilter{Metadata: map[string]any{"color": "red"}, Statuses: all}, []string{"m1", "m3"}},
		{"metadata int", engram.MemoryFilter{Metadata: map[string]any{"n": 3}, Statuses: all}, []string{"m1"}},
		{"metadata float equal to int", engram.MemoryFilter{Metadata: map[string]any{"n": 3.0}, Statuses: all}, []string{"m1"}},
		{"metadata float", engram.MemoryFilter{Metadata: map[string]any{"n": 3.5}, Statuses: all}, []string{"m2"}},
		{"metadata number is not a string", engram.MemoryFilter{Metadata: map[string]any{"num_str": 3}, Statuses: all}, nil},
		{"metadata string is not a number", engram.MemoryFilter{Metadata: map[string]any{"n": "3"}, Statuses: all}, nil},
		{"metadata string is not an array", engram.MemoryFilter{Metadata: map[string]any{"tags": `["a","b"]`}, Statuses: all}, nil},
		{"metadata string is not an object", engram.MemoryFilter{Metadata: map[string]any{"obj": `{"x":1,"y":"z"}`}, Statuses: all}, nil},
		{"metadata string is not a boolean", engram.MemoryFilter{Metadata: map[string]any{"flag": "true"}, Statuses: all}, nil},
		{"metadata number is not a boolean", engram.MemoryFilter{Metadata: map[string]any{"flag": 1}, Statuses: all}, nil},
		{"metadata boolean is not a number", engram.MemoryFilter{Metadata: map[string]any{"one": true}, Statuses: all}, nil},
		{"metadata true", engram.MemoryFilter{Metadata: map[string]any{"flag": true}, Statuses: all}, []string{"m1"}},
		{"metadata false", engram.MemoryFilter{Metadata: map[string]any{"flag": false}, Statuses: all}, []string{"m2"}},
		{"metadata array", engram.MemoryFilter{Metadata: map[string]any{"tags": []string{"a", "b"}}, Statuses: all}, []string{"m1"}},
		{"metadata object", engram.MemoryFilter{Metadata: map[string]any{"obj": map[string]any{"y": "z", "x": 1}}, Statuses: all}, []string{"m1"}},
		{"metadata null", engram.MemoryFilter{Metadata: map[string]any{"nil": nil}, Statuses: all}, []string{"m1"}},
		{"metadata null needs the key", engram.MemoryFilter{Metadata: map[string]any{"absent": nil}, Statuses: all}, nil},
		{"metadata dotted key is literal", engram.MemoryFilter{Metadata: map[string]any{"a.b": "dot"}, Statuses: all}, []string{"m1"}},
		{"metadata unicode key", engram.MemoryFilter{Metadata: map[string]any{"名前": "太郎"}, Statuses: all}, []string{"m1"}},
		{"metadata keys are ANDed", engram.MemoryFilter{Metadata: map[string]any{"color": "red", "n": 4}, Statuses: all}, []string{"m3"}},
		{"metadata in", engram.MemoryFilter{MetadataIn: map[string][]any{"color": {"blue", "green"}}, Statuses: all}, []string{"m2"}},
		{"metadata in numbers", engram.MemoryFilter{MetadataIn: map[string][]any{"n": {3, 4}}, Statuses: all}, []string{"m1", "m3"}},
		{"metadata in and equal", engram.MemoryFilter{MetadataIn: map[string][]any{"n": {3, 4}}, Metadata: map[string]any{"color": "red"}}, []string{"m1"}},
		// The indexed key (engram.MetaFingerprint) matches as any key does:
		// a string only a string, not a number or an array holding it.
		{"fingerprint in", engram.MemoryFilter{MetadataIn: map[string][]any{engram.MetaFingerprint: {"fp1", "7", `["fp1"]`}}, Statuses: all}, []string{"m1"}},
		{"fingerprint in numbers", engram.MemoryFilter{MetadataIn: map[string][]any{engram.MetaFingerprint: {7}}, Statuses: all}, []string{"m2"}},
		{"contains in a cue, any case", engram.MemoryFilter{Contains: "ALICE smith"}, []string{"m1"}},
		{"contains in the abstraction", engram.MemoryFilter{Contains: "shopping HABIT"}, []string{"m1"}},
		{"contains is literal about %", engram.MemoryFilter{Contains: "50%", Statuses: all}, []string{"m1"}},
		{"contains is literal about _", engram.MemoryFilter{Contains: "f_s", Statuses: all}, []string{"m1"}},
		{"contains a lone %", engram.MemoryFilter{Contains: "%", Statuses: all}, []string{"m1"}},
		{"contains no match", engram.MemoryFilter{Contains: "zzz", Statuses: all}, nil},
		{"contains does not span cues", engram.MemoryFilter{Contains: "smith\nparis", Statuses: all}, nil},
		{"contains does not see cue encoding", engram.MemoryFilter{Contains: `Smith","Paris`, Statuses: all}, nil},
		{"contains quotes and backslashes in a cue", engram.MemoryFilter{Contains: `"bob" \ c`, Statuses: all}, []string{"m1"}},
		{"sources", engram.MemoryFilter{Sources: []string{e1}, Statuses: all}, []string{"m1"}},
		{"sources any of", engram.MemoryFilter{Sources: []string{engram.NewID(), e2}, Statuses: all}, []string{"m1", "m2"}},
		{"sources unknown", engram.MemoryFilter{Sources: []string{engram.NewID()}, Statuses: all}, nil},
		{"sources and ids", engram.MemoryFilter{Sources: []string{e2}, IDs: []string{m2.ID}, Statuses: all}, []string{"m2"}},
		{"everything at once", engram.MemoryFilter{Kinds: []engram.Kind{engram.KindSemantic}, CreatedBefore: Ptr(At(2 * time.Hour)),
			ValidAt: Ptr(T0), Metadata: map[string]any{"color": "red"}, Contains: "paris"}, []string{"m1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := named(memoryIDs(listMemories(t, st, scU1, c.f)))
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("ListMemories = %v, want %v", got, c.want)
			}
			// Search applies the same filter; every memory has "common".
			got = named(hitIDs(search(t, st, scU1, "common", c.f, engram.MaxLimit)))
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("SearchText = %v, want %v", got, c.want)
			}
		})
	}
}

func testInvalidFilters(t *testing.T, open Opener) {
	st := open(t)
	// Two records per list give a cursor with limit 1.
	Put(t, st, Memory(nsU1, "x"), Episode(nsU1, "x"), Audit(nsU1, "x"))
	Put(t, st, Memory(nsU1, "y"), Episode(nsU1, "y"), Audit(nsU1, "y"))
	var mcursor, ecursor, acursor string
	view(t, st, func(r engram.Reader) error {
		var err error
		if _, mcursor, err = r.ListMemories(ctx, scU1, engram.MemoryFilter{Limit: 1}); err != nil {
			return err
		}
		if _, ecursor, err = r.ListEpisodes(ctx, scU1, engram.EpisodeFilter{Limit: 1}); err != nil {
			return err
		}
		_, acursor, err = r.Audit(ctx, scU1, engram.AuditFilter{Limit: 1})
		return err
	})
	if mcursor == "" || ecursor == "" || acursor == "" {
		t.Fatalf("no cursors from pages of 1 of 2: %q %q %q", mcursor, ecursor, acursor)
	}
	memCases := map[string]engram.MemoryFilter{
		"unknown kind":         {Kinds: []engram.Kind{"gossip"}},
		"unknown status":       {Statuses: []engram.Status{"gone"}},
		"negative limit":       {Limit: -1},
		"limit above max":      {Limit: engram.MaxLimit + 1},
		"garbage cursor":       {Cursor: "!!not a cursor!!"},
		"episode cursor":       {Cursor: ecursor},
		"audit cursor":         {Cursor: acursor},
		"truncated cursor":     {Cursor: mcursor[:len(mcursor)/2]},
		"empty metadata_in":    {MetadataIn: map[string][]any{"k": {}}},
		"metadata key too big": {Metadata: map[string]any{string(make([]byte, 5000)): 1}},
		"malformed source":     {Sources: []string{"not an id"}},
		"too many sources":     {Sources: slices.Repeat([]string{engram.NewID()}, engram.MaxLimit+1)},
	}
	view(t, st, func(r engram.Reader) error {
		for name, f := range memCases {
			_, _, err := r.ListMemories(ctx, scU1, f)
			wantCode(t, "ListMemories "+name, err, engram.EINVALID)
			if f.Cursor == "" && f.Limit == 0 {
				_, err = r.SearchText(ctx, scU1, "x", f, 10)
				wantCode(t, "SearchText "+name, err, engram.EINVALID)
			}
		}
		for _, k := range []int{-1, engram.MaxLimit + 1} {
			_, err := r.SearchText(ctx, scU1, "x", engram.MemoryFilter{}, k)
			wantCode(t, fmt.Sprintf("SearchText limit %d", k), err, engram.EINVALID)
		}
		for name, f := range map[string]engram.EpisodeFilter{
			"negative limit": {Limit: -1}, "limit above max": {Limit: engram.MaxLimit + 1},
			"garbage cursor": {Cursor: "%%%"}, "memory cursor": {Cursor: mcursor},
		} {
			_, _, err := r.ListEpisodes(ctx, scU1, f)
			wantCode(t, "ListEpisodes "+name, err, engram.EINVALID)
		}
		for name, f := range map[string]engram.AuditFilter{
			"negative limit": {Limit: -1}, "limit above max": {Limit: engram.MaxLimit + 1},
			"garbage cursor": {Cursor: "x"}, "memory cursor": {Cursor: mcursor},
		} {
			_, _, err := r.Audit(ctx, scU1, f)
			wantCode(t, "Audit "+name, err, engram.EINVALID)
		}
		return nil
	})
}

func testEpisodeFilters(t *testing.T, open Opener) {
	st := open(t)
	mk := func(role, speaker, content string, at time.Duration, md map[string]any) *engram.Episode {
		e := Episode(nsU1, content)
		e.Role, e.Speaker, e.OccurredAt, e.Metadata = role, speaker, At(at), md
		return e
	}
	e1 := mk("user", "alice", "Hello World from Alice", 0, map[string]any{"channel": "web", "n": 1})
	e2 := mk("assistant", "bot", "Hi there", time.Hour, map[string]any{"channel": "app"})
	e3 := mk("user", "bob", "100% sure_thing", 2*time.Hour, nil)
	e4 := mk("tool", "", "tool output", 2*time.Hour, map[string]any{"n": 1.5})
	other := mk("user", "alice", "Hello World from Alice", 0, map[string]any{"channel": "web", "n": 1})
	other.Namespace = nsU2
	// Inserted out of order: lists sort by (occurred_at, id).
	Put(t, st, e4, e2, other, e3, e1)
	names := map[string]string{e1.ID: "e1", e2.ID: "e2", e3.ID: "e3", e4.ID: "e4", other.ID: "other"}
	cases := []struct {
		name string
		f    engram.EpisodeFilter
		want []string // in list order
	}{
		{"none", engram.EpisodeFilter{}, []string{"e1", "e2", "e3", "e4"}},
		{"role", engram.EpisodeFilter{Roles: []string{"user"}}, []string{"e1", "e3"}},
		{"roles", engram.EpisodeFilter{Roles: []string{"user", "tool"}}, []string{"e1", "e3", "e4"}},
		{"speaker", engram.EpisodeFilter{Speaker: "alice"}, []string{"e1"}},
		{"occurred after is inclusive", engram.EpisodeFilter{OccurredAfter: Ptr(At(time.Hour))}, []string{"e2", "e3", "e4"}},
		{"occurred before is exclusive", engram.EpisodeFilter{OccurredBefore: Ptr(At(time.Hour))}, []string{"e1"}},
		{"metadata", engram.EpisodeFilter{Metadata: map[string]any{"channel": "web"}}, []string{"e1"}},
		{"metadata number", engram.EpisodeFilter{Metadata: map[string]any{"n": 1}}, []string{"e1"}},
		{"metadata float", engram.EpisodeFilter{Metadata: map[string]any{"n": 1.5}}, []string{"e4"}},
		{"contains any case", engram.EpisodeFilter{Contains: "WORLD"}, []string{"e1"}},
		{"contains literal %", engram.EpisodeFilter{Contains: "0% s"}, []string{"e3"}},
		{"contains literal _", engram.EpisodeFilter{Contains: "_"}, []string{"e3"}},
		{"combined", engram.EpisodeFilter{Roles: []string{"user"}, OccurredAfter: Ptr(At(time.Minute))}, []string{"e3"}},
	}
	e34 := []string{"e3", "e4"}
	if e4.ID < e3.ID {
		e34 = []string{"e4", "e3"}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			// e3 and e4 share occurred_at, so their order is by id.
			if i := slices.Index(want, "e3"); i >= 0 && i+1 < len(want) && want[i+1] == "e4" {
				want = append(slices.Clone(want[:i]), e34...)
			}
			var got []string
			for _, e := range listEpisodes(t, st, scU1, c.f) {
				got = append(got, names[e.ID])
			}
			if !slices.Equal(got, want) {
				t.Errorf("ListEpisodes = %v, want %v", got, want)
			}
		})
	}
}

func testAuditFilters(t *testing.T, open Opener) {
	st := open(t)
	a1 := Audit(nsU1, "memory.add")
	a1.At = T0
	a2 := Audit(nsU1, "memory.update")
	a2.At = At(time.Hour)
	a3 := Audit(nsU1, "scope.delete")
	a3.At = At(2 * time.Hour)
	Put(t, st, a1, a2, a3, Audit(nsU2, "memory.add"))
	cases := []struct {
		name string
		f    engram.AuditFilter
		want []*engram.AuditEntry // newest first
	}{
		{"none", engram.AuditFilter{}, []*engram.AuditEntry{a3, a2, a1}},
		{"op", engram.AuditFilter{Ops: []string{"memory.add"}}, []*engram.AuditEntry{a1}},
		{"ops", engram.AuditFilter{Ops: []string{"memory.add", "scope.delete"}}, []*engram.AuditEntry{a3, a1}},
		{"after is inclusive", engram.AuditFilter{After: Ptr(At(time.Hour))}, []*engram.AuditEntry{a3, a2}},
		{"before is exclusive", engram.AuditFilter{Before: Ptr(At(time.Hour))}, []*engram.AuditEntry{a1}},
		{"window", engram.AuditFilter{After: Ptr(At(time.Minute)), Before: Ptr(At(3 * time.Hour))}, []*engram.AuditEntry{a3, a2}},
	}
	for _, c := range cases {
		got := listAudit(t, st, scU1, c.f)
		sameJSON(t, "Audit "+c.name, got, c.want)
	}
}

func testPaginateMemories(t *testing.T, open Opener) {
	st := open(t)
	var recs []any
	var active, all []string
	for i := range 23 {
		m := Memory(nsU1, fmt.Sprintf("page memory %d", i))
		if i%4 == 3 {
			m.Status = engram.StatusDeleted
		} else {
			active = append(active, m.ID)
		}
		all = append(all, m.ID)
		recs = append(recs, m)
		if i%5 == 0 {
			recs = append(recs, Memory(nsU2, "someone else's"))
		}
	}
	Put(t, st, recs...)
	for _, c := range []struct {
		name  string
		f     engram.MemoryFilter
		want  []string
		limit int
	}{
		{"active by 5", engram.MemoryFilter{}, active, 5},
		{"all by 5", engram.MemoryFilter{Statuses: allStatuses}, all, 5},
		{"all by 1", engram.MemoryFilter{Statuses: allStatuses}, all, 1},
		{"all by exactly 23", engram.MemoryFilter{Statuses: allStatuses}, all, 23},
		{"all by 24", engram.MemoryFilter{Statuses: allStatuses}, all, 24},
		{"active by exact divisor", engram.MemoryFilter{}, active, len(active) / 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.Limit = c.limit
			var got []string
			pages := 0
			view(t, st, func(r engram.Reader) error {
				for {
					page, next, err := r.ListMemories(ctx, scU1, f)
					if err != nil {
						return err
					}
					pages++
					if len(page) > c.limit {
						t.Errorf("page of %d, limit %d", len(page), c.limit)
					}
					if next != "" && len(page) != c.limit {
						t.Errorf("short page of %d with a next cursor", len(page))
					}
					got = append(got, memoryIDs(page)...)
					if next == "" || pages > 100 {
						return nil
					}
					f.Cursor = next
				}
			})
			if want := sortedDesc(c.want); !slices.Equal(got, want) {
				t.Errorf("walked %v, want %v", got, want)
			}
			if want := (len(c.want) + c.limit - 1) / c.limit; pages != want {
				t.Errorf("%d pages, want %d", pages, want)
			}
		})
	}
}

func testPaginateEpisodes(t *testing.T, open Opener) {
	st := open(t)
	var eps []*engram.Episode
	var recs []any
	for i := range 17 {
		e := Episode(nsU1, fmt.Sprintf("page episode %d", i))
		// Many share a timestamp, and insertion order differs from time order.
		e.OccurredAt = At(time.Duration((17-i)/3) * time.Second)
		eps = append(eps, e)
		recs = append(recs, e)
	}
	recs = append(recs, Episode(nsU2, "someone else's"))
	Put(t, st, recs...)
	slices.SortFunc(eps, func(a, b *engram.Episode) int {
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	var want []string
	for _, e := range eps {
		want = append(want, e.ID)
	}
	for _, limit := range []int{1, 2, 4, 17, 50} {
		var got []string
		pages := 0
		f := engram.EpisodeFilter{Limit: limit}
		view(t, st, func(r engram.Reader) error {
			for pages < 100 {
				page, next, err := r.ListEpisodes(ctx, scU1, f)
				if err != nil {
					return err
				}
				pages++
				got = append(got, episodeIDs(page)...)
				if next == "" {
					break
				}
				f.Cursor = next
			}
			return nil
		})
		if !slices.Equal(got, want) {
			t.Errorf("limit %d walked %v, want %v", limit, got, want)
		}
		if want := (len(want) + limit - 1) / limit; pages != want {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, want)
		}
	}
	// The order of one page of everything matches too.
	got := episodeIDs(listEpisodes(t, st, scU1, engram.EpisodeFilter{}))
	if !slices.Equal(got, want) {
		t.Errorf("one page: %v, want %v", got, want)
	}
}

func testPaginateAudit(t *testing.T, open Opener) {
	st := open(t)
	var want []string
	var recs []any
	for range 12 {
		a := Audit(nsU1, "memory.add")
		want = append(want, a.ID)
		recs = append(recs, a, Audit(nsU2, "memory.add"))
	}
	Put(t, st, recs...)
	for _, limit := range []int{1, 5, 12, 13} {
		var got []string
		pages := 0
		f := engram.AuditFilter{Limit: limit}
		view(t, st, func(r engram.Reader) error {
			for pages < 100 {
				page, next, err := r.Audit(ctx, scU1, f)
				if err != nil {
					return err
				}
				pages++
				got = append(got, auditIDs(page)...)
				if next == "" {
					break
				}
				f.Cursor = next
			}
			return nil
		})
		if !slices.Equal(got, sortedDesc(want)) {
			t.Errorf("limit %d walked %v, want %v", limit, got, sortedDesc(want))
		}
		if want := (len(want) + limit - 1) / limit; pages != want {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, want)
		}
	}
}

// testFilterIDs checks that MemoryFilter.IDs keeps exactly the listed
// memories, still within the scope and the other filters.
func testFilterIDs(t *testing.T, open Opener) {
	st := open(t)
	a := Memory(nsU1, "alpha one")
	b := Memory(nsU1, "alpha two")
	c := Memory(nsU1, "alpha three")
	other := Memory(nsU2, "alpha foreign")
	Put(t, st, a, b, c, other)
	s := engram.ScopeOf(nsU1)
	s.Session = ""
	var got []engram.Memory
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		got, _, err = r.ListMemories(ctx, s, engram.MemoryFilter{IDs: []string{a.ID, c.ID, other.ID}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range got {
		ids[m.ID] = true
	}
	if len(got) != 2 || !ids[a.ID] || !ids[c.ID] {
		t.Errorf("IDs filter returned %d memories %v, want exactly a and c", len(got), ids)
	}
	var hits []engram.TextHit
	err = st.View(ctx, func(r engram.Reader) error {
		var err error
		hits, err = r.SearchText(ctx, s, "alpha", engram.MemoryFilter{IDs: []string{b.ID}}, 10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Memory.ID != b.ID {
		t.Errorf("IDs filter on search returned %d hits", len(hits))
	}
}

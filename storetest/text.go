package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func testSearchRanking(t *testing.T, open Opener) {
	st := open(t)
	both := Memory(nsU1, "The quarterly budget review meeting is on Friday afternoon")
	one := Memory(nsU1, "Budget cuts hurt the garden club badly this spring season")
	unrelated := Memory(nsU1, "My cat likes to sleep in the sun on the windowsill")
	Put(t, st, unrelated, one, both)
	hits := search(t, st, scU1, "budget meeting", engram.MemoryFilter{}, 10)
	if got, want := hitIDs(hits), []string{both.ID, one.ID}; !slices.Equal(got, want) {
		t.Fatalf("hits %v, want [both terms, one term] %v", got, want)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hit %d scores %v above hit %d's %v", i, hits[i].Score, i-1, hits[i-1].Score)
		}
	}
	if hits[0].Score <= hits[1].Score {
		t.Errorf("a document with both terms scores %v, not above one with one term (%v)", hits[0].Score, hits[1].Score)
	}
	// Hits carry the whole memory.
	sameJSON(t, "hit memory", hits[0].Memory, both)

	// Matching is case-insensitive and finds a term in the abstraction and cues.
	cued := Memory(nsU1, "Met for coffee")
	cued.Abstraction = "Catch-up with Siobhan"
	cued.Cues = []string{"Galway", "Siobhan O'Brien"}
	Put(t, st, cued)
	for _, q := range []string{"SIOBHAN", "galway", "catch"} {
		if got := hitIDs(search(t, st, scU1, q, engram.MemoryFilter{}, 10)); !slices.Equal(got, []string{cued.ID}) {
			t.Errorf("search %q = %v, want the cued memory", q, got)
		}
	}
}

func testSearchStopWords(t *testing.T, open Opener) {
	st := open(t)
	withThe := Memory(nsU1, "the answer")
	budget := Memory(nsU1, "budget plan")
	Put(t, st, withThe, budget)
	// Only stop words: they are searched rather than dropped.
	if got := hitIDs(search(t, st, scU1, "the", engram.MemoryFilter{}, 10)); !slices.Equal(got, []string{withThe.ID}) {
		t.Errorf("stop-word-only query = %v, want the memory containing it", got)
	}
	// With a content word, stop words are dropped and do not match alone.
	if got := hitIDs(search(t, st, scU1, "the budget", engram.MemoryFilter{}, 10)); !slices.Equal(got, []string{budget.ID}) {
		t.Errorf("\"the budget\" = %v, want only the budget memory", got)
	}
}

func testSearchNoTerms(t *testing.T, open Opener) {
	st := open(t)
	Put(t, st, Memory(nsU1, "anything at all"))
	for _, q := range []string{"", "   ", "!!! ??? ...", "\t\n", "—", `"" ''`} {
		view(t, st, func(r engram.Reader) error {
			hits, err := r.SearchText(ctx, scU1, q, engram.MemoryFilter{}, 10)
			if err != nil || len(hits) != 0 {
				t.Errorf("SearchText(%q) = %d hits, %v; want none, nil", q, len(hits), err)
			}
			return nil
		})
	}
}

func testSearchInjection(t *testing.T, open Opener) {
	st := open(t)
	m := Memory(nsU1, "budget value near the river")
	Put(t, st, m)
	for _, q := range []string{
		`"a" OR b*`, `NEAR(`, `NEAR(budget river, 2)`, `budget"`, `"budget`, `value:budget`,
		`{value abstraction}: budget`, `^budget`, `-budget`, `budget*`, `(budget`, `budget)`,
		`AND`, `OR OR`, `NOT budget`, `budget AND`, `"`, `*`, `'`, `\`, `:`, `+budget`,
		`'); DROP TABLE memories; --`, `budget' OR '1'='1`, "\x00budget", "bud\xffget", `$1`, `?`,
		`@budget`, `%`, `_`, `\u0301`, "\u0301\u0301",
	} {
		view(t, st, func(r engram.Reader) error {
			if _, err := r.SearchText(ctx, scU1, q, engram.MemoryFilter{}, 10); err != nil {
				t.Errorf("SearchText(%q): %v", q, err)
			}
			return nil
		})
	}
	// Syntax characters are separators: the words around them still count.
	for _, q := range []string{`value:budget`, `NEAR(budget river, 2)`, `budget*`, `"budget`, `NOT budget`} {
		if got := hitIDs(search(t, st, scU1, q, engram.MemoryFilter{}, 10)); !slices.Equal(got, []string{m.ID}) {
			t.Errorf("SearchText(%q) = %v, want the budget memory", q, got)
		}
	}
	// The store survived.
	if _, err := getMemory(t, st, scU1, m.ID); err != nil {
		t.Fatalf("GetMemory after injection attempts: %v", err)
	}
}

func testSearchLimit(t *testing.T, open Opener) {
	st := open(t)
	var recs []any
	for range 30 {
		recs = append(recs, Memory(nsU1, "repeated limit word"))
	}
	Put(t, st, recs...)
	for _, c := range []struct{ k, want int }{{1, 1}, {7, 7}, {30, 30}, {100, 30}, {0, 30}} {
		if got := len(search(t, st, scU1, "limit", engram.MemoryFilter{}, c.k)); got != c.want {
			t.Errorf("limit %d: %d hits, want %d", c.k, got, c.want)
		}
	}
}

func testSearchCJK(t *testing.T, open Opener) {
	st := open(t)
	zh := Memory(nsU1, "我昨天在北京吃了烤鸭，味道非常好。")
	ja := Memory(nsU1, "私は毎朝コーヒーを飲みます。来週、東京で会議があります。")
	ko := Memory(nsU1, "저는 서울에서 일해요")
	mixed := Memory(nsU1, "I visited 東京タワー yesterday with Kenji")
	Put(t, st, zh, ja, ko, mixed)
	cases := []struct {
		q    string
		want []string
	}{
		{"北京", []string{zh.ID}},
		{"烤鸭", []string{zh.ID}},
		{"味道非常好", []string{zh.ID}},
		{"上海", nil},
		{"コーヒー", []string{ja.ID}},
		{"会議", []string{ja.ID}},
		{"東京", []string{ja.ID, mixed.ID}},
		{"東京タワー", []string{mixed.ID}},
		{"大阪", nil},
		{"서울", []string{ko.ID}},
		{"visited", []string{mixed.ID}},
		{"kenji", []string{mixed.ID}},
	}
	for _, c := range cases {
		got := hitIDs(search(t, st, scU1, c.q, engram.MemoryFilter{}, 10))
		if !sameSet(got, c.want) {
			t.Errorf("SearchText(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}

func testReplaceMemory(t *testing.T, open Opener) {
	st := open(t)
	m := Memory(nsU1, "apple pie recipe")
	m.Abstraction = "dessert"
	m.Cues = []string{"grandma"}
	m.Sources = []string{engram.NewID()}
	other := Memory(nsU1, "apple orchard")
	Put(t, st, m, other)

	repl := *m
	repl.Value, repl.Abstraction, repl.Cues = "banana bread", "baking", []string{"uncle"}
	repl.Version, repl.UpdatedAt = 2, At(time.Hour)
	repl.Metadata = map[string]any{"edited": true}
	repl.Sources = []string{engram.NewID(), engram.NewID()}
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &repl) })
	sameJSON(t, "replaced memory", mustMemory(t, st, scU1, m.ID), &repl)
	sameJSON(t, "the other memory after a replace", mustMemory(t, st, scU1, other.ID), other)
	for q, want := range map[string][]string{
		"apple": {other.ID}, "dessert": nil, "grandma": nil,
		"banana": {m.ID}, "baking": {m.ID}, "uncle": {m.ID},
	} {
		if got := hitIDs(search(t, st, scU1, q, engram.MemoryFilter{}, 10)); !sameSet(got, want) {
			t.Errorf("after replace, search %q = %v, want %v", q, got, want)
		}
	}

	// A replacement that keeps the text keeps it searchable, and status
	// filters see the new status.
	deleted := repl
	deleted.Status, deleted.Version = engram.StatusDeleted, 3
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &deleted) })
	if got := hitIDs(search(t, st, scU1, "banana", engram.MemoryFilter{}, 10)); len(got) != 0 {
		t.Errorf("a deleted memory is found by a default search: %v", got)
	}
	f := engram.MemoryFilter{Statuses: []engram.Status{engram.StatusDeleted}}
	if got := hitIDs(search(t, st, scU1, "banana", f, 10)); !slices.Equal(got, []string{m.ID}) {
		t.Errorf("search for deleted memories = %v, want the replaced one", got)
	}
	sameJSON(t, "memory after status change", mustMemory(t, st, scU1, m.ID), &deleted)

	// Changing only the cues, or only the abstraction, re-indexes too.
	cues := deleted
	cues.Status, cues.Cues = engram.StatusActive, []string{"aunt"}
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &cues) })
	for q, want := range map[string][]string{"uncle": nil, "aunt": {m.ID}, "baking": {m.ID}} {
		if got := hitIDs(search(t, st, scU1, q, engram.MemoryFilter{}, 10)); !sameSet(got, want) {
			t.Errorf("after replacing the cues, search %q = %v, want %v", q, got, want)
		}
	}
	abs := cues
	abs.Abstraction = "toast"
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &abs) })
	for q, want := range map[string][]string{"baking": nil, "toast": {m.ID}, "aunt": {m.ID}, "banana": {m.ID}} {
		if got := hitIDs(search(t, st, scU1, q, engram.MemoryFilter{}, 10)); !sameSet(got, want) {
			t.Errorf("after replacing the abstraction, search %q = %v, want %v", q, got, want)
		}
	}

	// A memory of another tenant with the same id is not replaced.
	foreign := abs
	foreign.Namespace = nsOther
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &foreign) })
	wantCode(t, "ReplaceMemory in another tenant", err, engram.ENOTFOUND)
}

func testPurgeMemory(t *testing.T, open Opener) {
	st := open(t)
	gone := Memory(nsU1, "purge this pelican")
	gone.Sources = []string{engram.NewID()}
	kept := Memory(nsU1, "keep this pelican")
	Put(t, st, gone, kept, Version(gone, 1, engram.OpAdd), Version(gone, 2, engram.OpUpdate), Version(kept, 1, engram.OpAdd))

	// Another tenant's namespace cannot purge it.
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsOther, gone.ID) })
	mustMemory(t, st, scU1, gone.ID)

	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, gone.ID) })
	if _, err := getMemory(t, st, scU1, gone.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetMemory after purge: %v", err)
	}
	view(t, st, func(r engram.Reader) error {
		_, err := r.Versions(ctx, scU1, gone.ID)
		wantCode(t, "Versions after purge", err, engram.ENOTFOUND)
		vs, err := r.Versions(ctx, scU1, kept.ID)
		if err != nil || len(vs) != 1 {
			t.Errorf("versions of the kept memory: %d, %v", len(vs), err)
		}
		return nil
	})
	if got := hitIDs(search(t, st, scU1, "pelican", engram.MemoryFilter{Statuses: allStatuses}, 10)); !slices.Equal(got, []string{kept.ID}) {
		t.Errorf("search after purge = %v, want only the kept memory", got)
	}
	for _, r := range exportAll(t, st, scU1) {
		if (r.Memory != nil && r.Memory.ID == gone.ID) || (r.Version != nil && r.Version.MemoryID == gone.ID) {
			t.Errorf("export still has a %s of the purged memory", r.Type)
		}
	}
	// Purging again, or an id never stored, is not an error.
	update(t, st, func(tx engram.Tx) error {
		if err := tx.PurgeMemory(ctx, nsU1, gone.ID); err != nil {
			return err
		}
		return tx.PurgeMemory(ctx, nsU1, engram.NewID())
	})
	// The id can be used again afterwards.
	again := *gone
	again.Value = "a new pelican"
	Put(t, st, &again)
	if got := mustMemory(t, st, scU1, gone.ID); got.Value != "a new pelican" {
		t.Errorf("re-inserted memory has value %q", got.Value)
	}
}

func testPurgeEpisode(t *testing.T, open Opener) {
	st := open(t)
	gone := Episode(nsU1, "purge this")
	kept := Episode(nsU1, "keep this")
	m := Memory(nsU1, "formed from the purged episode")
	m.Sources = []string{gone.ID}
	Put(t, st, gone, kept, m)
	update(t, st, func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsOther, gone.ID) })
	if _, err := getEpisode(t, st, scU1, gone.ID); err != nil {
		t.Fatalf("another tenant purged the episode: %v", err)
	}
	update(t, st, func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsU1, gone.ID) })
	if _, err := getEpisode(t, st, scU1, gone.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetEpisode after purge: %v", err)
	}
	if got := episodeIDs(listEpisodes(t, st, scU1, engram.EpisodeFilter{})); !slices.Equal(got, []string{kept.ID}) {
		t.Errorf("episodes after purge = %v", got)
	}
	// Memories formed from it stay, sources and all.
	sameJSON(t, "memory of a purged episode", mustMemory(t, st, scU1, m.ID), m)
	update(t, st, func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsU1, gone.ID) })
}

func testExportOrder(t *testing.T, open Opener) {
	st := open(t)
	e1, e2, e3 := Episode(nsU1, "one"), Episode(nsU1, "two"), Episode(nsU1, "three")
	e1.OccurredAt, e2.OccurredAt, e3.OccurredAt = At(time.Hour), T0, At(time.Hour)
	m1, m2 := Memory(nsU1, "m one"), Memory(nsU1, "m two")
	m2.Status = engram.StatusDeleted // every status is exported
	a1, a2 := Audit(nsU1, "first"), Audit(nsU1, "second")
	foreign := Memory(nsU2, "not mine")
	Put(t, st, e3, e1, e2, m2, m1, foreign,
		Version(m2, 1, engram.OpAdd), Version(m1, 2, engram.OpUpdate), Version(m1, 1, engram.OpAdd),
		a2, a1, Audit(nsU2, "not mine"))

	var got []string
	for _, r := range exportAll(t, st, scU1) {
		switch r.Type {
		case engram.RecordEpisode:
			got = append(got, "episode "+r.Episode.Content)
		case engram.RecordMemory:
			got = append(got, "memory "+r.Memory.Value)
		case engram.RecordVersion:
			got = append(got, "version "+r.Version.New.Value+" "+string(r.Version.Op))
		case engram.RecordAudit:
			got = append(got, "audit "+r.Audit.Op)
		}
	}
	// Episodes by (occurred_at, id): e2 first, then e1 and e3 by id (e3 was made
	// after e1, so its id is larger).
	want := []string{"episode two", "episode one", "episode three", "memory m one", "memory m two",
		"version m one ADD", "version m one UPDATE", "version m two ADD", "audit first", "audit second"}
	if !slices.Equal(got, want) {
		t.Errorf("export order\n got %q\nwant %q", got, want)
	}
}

func testExportStops(t *testing.T, open Opener) {
	st := open(t)
	Put(t, st, Episode(nsU1, "a"), Episode(nsU1, "b"), Memory(nsU1, "c"), Audit(nsU1, "d"))
	calls := 0
	err := st.View(ctx, func(r engram.Reader) error {
		return r.Export(ctx, scU1, func(engram.Record) error {
			calls++
			if calls == 2 {
				return errBoom
			}
			return nil
		})
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("Export returned %v, want fn's error", err)
	}
	if calls != 2 {
		t.Errorf("fn called %d times after failing on the 2nd", calls)
	}
}

// testSearchOtherNamespaces: rows of other tenants and users that match
// the query, however many, change neither which memories a search returns
// nor their order; a memory moved to another agent of its user is
// searched there.
func testSearchOtherNamespaces(t *testing.T, open Opener) {
	st := open(t)
	// One term, once in each, in texts of different lengths: their order
	// depends on nothing another namespace could change.
	short := Memory(nsU1, "orchard visit")
	mid := Memory(nsU1, "the orchard behind the old farmhouse")
	long := Memory(nsU1, "we walked through the orchard near the river on a long and sunny afternoon")
	shared := Memory(engram.Namespace{Org: nsU1.Org, Project: nsU1.Project}, "orchard rota for the whole team")
	Put(t, st, short, mid, long, shared)
	withShared := scU1
	withShared.IncludeShared = true
	before := hitIDs(search(t, st, scU1, "orchard", engram.MemoryFilter{}, engram.MaxLimit))
	beforeShared := hitIDs(search(t, st, withShared, "orchard", engram.MemoryFilter{}, engram.MaxLimit))
	if !sameSet(before, []string{short.ID, mid.ID, long.ID}) {
		t.Fatalf("search before = %v, want the three memories of u1", before)
	}
	if !sameSet(beforeShared, []string{short.ID, mid.ID, long.ID, shared.ID}) {
		t.Fatalf("search with shared before = %v, want u1's three and the shared one", beforeShared)
	}

	var noise []any
	for i := range 150 {
		noise = append(noise,
			Memory(nsOther, "orchard orchard orchard, an orchard in every sentence"),
			Memory(nsU2, "orchard"),
			Memory(engram.Namespace{Org: nsU1.Org, Project: "web", User: nsU1.User}, "the orchard"))
		if i%10 == 0 {
			noise = append(noise, Memory(engram.Namespace{Org: nsU1.Org, Project: nsU1.Project, Agent: "a1"}, "orchard agent note"))
		}
	}
	Put(t, st, noise...)
	if got := hitIDs(search(t, st, scU1, "orchard", engram.MemoryFilter{}, engram.MaxLimit)); !slices.Equal(got, before) {
		t.Errorf("search after other namespaces' rows = %v, want %v as before", got, before)
	}
	if got := hitIDs(search(t, st, withShared, "orchard", engram.MemoryFilter{}, engram.MaxLimit)); !slices.Equal(got, beforeShared) {
		t.Errorf("search with shared after other namespaces' rows = %v, want %v as before", got, beforeShared)
	}
	if got := hitIDs(search(t, st, scU1, "orchard", engram.MemoryFilter{}, 2)); !slices.Equal(got, before[:2]) {
		t.Errorf("top 2 after other namespaces' rows = %v, want %v", got, before[:2])
	}

	// Memory ids are unique per user, so a replace names the memory's user:
	// one naming u2, who holds no such memory, is ENOTFOUND and moves
	// nothing; one naming another agent of u1 moves it there.
	moved := *long
	moved.Namespace = nsU2
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &moved) })
	wantCode(t, "a replace naming another user", err, engram.ENOTFOUND)
	if got := hitIDs(search(t, st, engram.ScopeOf(nsU2), "afternoon", engram.MemoryFilter{}, engram.MaxLimit)); len(got) != 0 {
		t.Errorf("u2's search after the refused move = %v, want none", got)
	}
	moved.Namespace = nsU1
	moved.Namespace.Agent = "a2"
	update(t, st, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &moved) })
	if got := hitIDs(search(t, st, engram.ScopeOf(moved.Namespace), "orchard", engram.MemoryFilter{}, engram.MaxLimit)); !slices.Equal(got, []string{long.ID}) {
		t.Errorf("a2's search after the move = %v, want the moved memory", got)
	}
}

// testExportPages reads the export of a scope a page of two at a time, each
// page in its own transaction, and gets what one Export gives, in its order;
// bad kinds, limits and cursors are EINVALID.
func testExportPages(t *testing.T, open Opener) {
	st := open(t)
	e1, e2, e3 := Episode(nsU1, "eins"), Episode(nsU1, "dos"), Episode(nsU1, "三")
	e1.OccurredAt, e2.OccurredAt, e3.OccurredAt = At(time.Hour), At(time.Hour), T0
	m1, m2, m3 := Memory(nsU1, "m1"), Memory(nsU1, "m2"), Memory(nsU1, "m3")
	Put(t, st, e1, e2, e3, m1, m2, m3, Memory(nsU2, "not mine"), Episode(nsU2, "not mine"),
		Version(m1, 1, engram.OpAdd), Version(m1, 2, engram.OpUpdate), Version(m2, 1, engram.OpAdd),
		Audit(nsU1, "a"), Audit(nsU1, "b"), Audit(nsU1, "c"), Audit(nsU2, "not mine"))

	var got []engram.Record
	for _, kind := range []string{engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion, engram.RecordAudit} {
		for after, pages := "", 0; ; pages++ {
			var (
				page []engram.Record
				next string
			)
			view(t, st, func(r engram.Reader) error {
				var err error
				page, next, err = r.ExportPage(ctx, scU1, kind, after, 2)
				return err
			})
			if len(page) > 2 || (next != "" && len(page) != 2) {
				t.Fatalf("%s page %d: %d records, next %q", kind, pages, len(page), next)
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			after = next
		}
	}
	sameJSON(t, "paged export", got, exportAll(t, st, scU1))
	if len(got) != 3+3+3+3 {
		t.Errorf("paged export gave %d records, want 12", len(got))
	}

	var memCursor string
	view(t, st, func(r engram.Reader) error {
		_, memCursor, _ = r.ExportPage(ctx, scU1, engram.RecordMemory, "", 1)
		return nil
	})
	for _, c := range []struct {
		what, kind, after string
		limit             int
	}{
		{"unknown kind", "vector", "", 2},
		{"zero limit", engram.RecordMemory, "", 0},
		{"cursor of another kind", engram.RecordAudit, memCursor, 2},
		{"garbage cursor", engram.RecordVersion, "%%%", 2},
	} {
		view(t, st, func(r engram.Reader) error {
			_, _, err := r.ExportPage(ctx, scU1, c.kind, c.after, c.limit)
			wantCode(t, c.what, err, engram.EINVALID)
			return nil
		})
	}
}

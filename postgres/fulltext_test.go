package postgres_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
)

// TestFullTextIndexPG checks what the conformance suite leaves to the
// backend: with memories_text dropped the store's own search still finds
// the same memories (reading the tenant's rows); an invalid index that a
// failed concurrent build left counts as off and is replaced by a valid
// GIN index when turned on; and a switch waits for the store's advisory
// lock, so it never runs during another server's scrub rewrite.
func TestFullTextIndexPG(t *testing.T) {
	u := emptiedURL(t)
	db := openAt(t, withParam(t, u, postgres.ScrubIntervalParam, "off"), postgres.Options{})
	other, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	a := storetest.Memory(ns, "the lighthouse keeper rows out at dawn")
	b := storetest.Memory(ns, "a lighthouse guide was printed")
	storetest.Put(t, db, a, b, storetest.Memory(ns, "the ferry leaves at nine"))
	indexDef := func() string {
		t.Helper()
		var def string
		err := other.QueryRow(ctx, `SELECT coalesce((SELECT indexdef FROM pg_indexes
			WHERE schemaname = current_schema() AND indexname = 'memories_text'), '')`).Scan(&def)
		if err != nil {
			t.Fatal(err)
		}
		return def
	}
	find := func(when string) {
		t.Helper()
		var hits []engram.TextHit
		err := db.View(ctx, func(r engram.Reader) error {
			var err error
			hits, err = r.SearchText(ctx, engram.ScopeOf(ns), "lighthouse", engram.MemoryFilter{}, 10)
			return err
		})
		var got []string
		for _, h := range hits {
			got = append(got, h.Memory.ID)
		}
		slices.Sort(got)
		want := []string{a.ID, b.ID}
		slices.Sort(want)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: SearchText = %v, %v; want %v", when, got, err, want)
		}
	}

	if err := db.SetFullTextIndexed(ctx, false); err != nil {
		t.Fatal(err)
	}
	if def := indexDef(); def != "" {
		t.Fatalf("memories_text is still there after it was turned off: %s", def)
	}
	find("index off")

	// A failed concurrent build leaves an invalid index behind.
	if _, err := other.Exec(ctx, "CREATE UNIQUE INDEX CONCURRENTLY memories_text ON memories (org)"); err == nil {
		t.Fatal("a unique index over duplicate values was built")
	}
	var on bool
	if err := db.View(ctx, func(r engram.Reader) error {
		var err error
		on, err = r.FullTextIndexed(ctx)
		return err
	}); err != nil || on {
		t.Fatalf("with an invalid memories_text, FullTextIndexed = %v, %v; want false", on, err)
	}

	const lock = "(x'656e6772'::int, hashtext(current_schema()))"
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock"+lock); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.SetFullTextIndexed(ctx, true) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("SetFullTextIndexed returned (%v) while another server held the lock", err)
	default:
	}
	if _, err := other.Exec(ctx, "SELECT pg_advisory_unlock"+lock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("SetFullTextIndexed(true): %v", err)
	}
	if def := indexDef(); !strings.Contains(def, "USING gin") || !strings.Contains(def, "tsv") {
		t.Errorf("after turning it on, memories_text is %q, want a GIN index over tsv", def)
	}
	if err := db.View(ctx, func(r engram.Reader) error {
		var err error
		on, err = r.FullTextIndexed(ctx)
		return err
	}); err != nil || !on {
		t.Errorf("after turning it on, FullTextIndexed = %v, %v", on, err)
	}
	find("index on")
}

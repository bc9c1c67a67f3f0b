package sqlite_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// TestMigrationNamespaceTokens opens a database whose full-text index has
// the shape of the first schema (no namespace column) and checks that
// migration 2 rebuilds it from the memories: every memory is found again,
// by value, abstraction, cues and CJK text, under its own namespace only.
func TestMigrationNamespaceTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engram.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	nsU2 := engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	nsOther := engram.Namespace{Org: "globex", Project: "app", User: "u1"}
	mine := storetest.Memory(nsU1, "Siobhan booked the ferry to Inis Mór")
	mine.Abstraction = "Siobhan's island trip"
	mine.Cues = []string{"Galway harbour"}
	cjk := storetest.Memory(nsU1, "来週、東京で会議があります。")
	shared := storetest.Memory(engram.Namespace{Org: "acme", Project: "app"}, "ferry timetable for everyone")
	theirs := storetest.Memory(nsU2, "Siobhan missed the ferry")
	other := storetest.Memory(nsOther, "Siobhan's ferry in another tenant")
	storetest.Put(t, db, mine, cjk, shared, theirs, other)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to the first schema's index, filled as it was (without the
	// CJK transform, which migration 2 must apply again).
	raw := rawDB(t, db)
	for _, q := range []string{
		"DROP TABLE memories_fts",
		`CREATE VIRTUAL TABLE memories_fts USING fts5(value, abstraction, cues,
			content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2')`,
		"INSERT INTO memories_fts (rowid, value, abstraction, cues) SELECT rid, value, abstraction, coalesce(cues, '') FROM memories",
		`CREATE VIRTUAL TABLE episodes_fts USING fts5(content, content = '', contentless_delete = 1,
			tokenize = 'unicode61 remove_diacritics 2')`, // dropped by migration 15
		"INSERT INTO episodes_fts (rowid, content) VALUES (1, 'an episode')",
		"DROP TABLE api_keys",                    // migration 3
		"DROP TABLE IF EXISTS vault_keys",        // migration 5
		"ALTER TABLE episodes DROP COLUMN media", // migration 11
		"ALTER TABLE jobs DROP COLUMN kind",      // migration 17
		"ALTER TABLE jobs DROP COLUMN memories",  // migration 17
		"ALTER TABLE jobs DROP COLUMN ops",       // migration 17
		"DELETE FROM schema_migrations WHERE version >= 2",
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open the old database: %v", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("integrity after the migration: %v", err)
	}
	raw = rawDB(t, db)
	if n := count(t, raw, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'episodes_fts%'"); n != 0 {
		t.Errorf("after the migrations %d tables of episodes_fts remain", n)
	}
	raw.Close()
	withShared := scU1
	withShared.IncludeShared = true
	for _, c := range []struct {
		s    engram.Scope
		q    string
		want []string
	}{
		{scU1, "ferry", []string{mine.ID}},
		{scU1, "island", []string{mine.ID}},  // abstraction
		{scU1, "harbour", []string{mine.ID}}, // cues
		{scU1, "東京", []string{cjk.ID}},       // CJK bigrams
		{withShared, "ferry", []string{mine.ID, shared.ID}},
		{engram.ScopeOf(nsU2), "siobhan", []string{theirs.ID}},
		{engram.ScopeOf(nsOther), "siobhan", []string{other.ID}},
	} {
		var hits []engram.TextHit
		err := db.View(ctx, func(r engram.Reader) error {
			hits, err = r.SearchText(ctx, c.s, c.q, engram.MemoryFilter{}, 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(hits)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("search %q in %+v after the migration = %v, want %v", c.q, c.s, got, want)
		}
	}
}

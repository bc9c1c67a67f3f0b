package sqlite

import (
	"database/sql"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// FuzzMatchQuery runs the MATCH expression built from arbitrary search text
// against a real FTS5 table with the schema of memories_fts: SQLite must
// accept it (nothing typed is read as FTS5 syntax), and a memory whose
// value is that very text must be found by it. Text that is not UTF-8
// (which the service never stores) is only checked for syntax: the
// tokenizer reads a truncated sequence together with the byte after it.
func FuzzMatchQuery(f *testing.F) {
	for _, s := range []string{
		"budget meeting", `"a" OR b* NEAR(`, "AND", "NOT x", "col:term", "{value cues}: x", "^start",
		"東京都 budget", "京", "a\x00b", `'); DROP TABLE memories_fts; --`, "-x +y", "ǅemal İstanbul Straße",
		"café CAFÉ cafe\u0301", "\xff\xfe", "x)y(z", "near/3 a b",
		"\u036d", "\u0903 \u0301", "x\u036dy", "\u07b20", "e\ufffef \ufffe", "g\U0010fffdh \ue000",
	} {
		f.Add(s, "acme", "app", "u1", false)
	}
	f.Add("shared notes", "acme", "app", "u1", true)

	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	f.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE memories_fts USING fts5(
		value, abstraction, cues, ns,
		content = '', contentless_delete = 1,
		tokenize = 'unicode61 remove_diacritics 2')`); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, text, org, project, user string, shared bool) {
		terms := matchQuery(text)
		if terms == "" {
			return
		}
		s := engram.Scope{Org: org, Project: project, User: user, IncludeShared: shared}
		match := scopeMatch(s, terms)
		if _, err := db.Exec(`DELETE FROM memories_fts`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO memories_fts (rowid, value, abstraction, cues, ns) VALUES (1, ?, '', '', ?)`,
			ftsText(text), nsToken(org, project, user)); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM (SELECT rowid, `+bm25Expr+` FROM memories_fts WHERE memories_fts MATCH ?)`, match).Scan(&n); err != nil {
			t.Fatalf("text %q: MATCH %s: %v", text, match, err)
		}
		if n != 1 && utf8.ValidString(text) {
			t.Fatalf("text %q: MATCH %s finds %d rows, want the one holding the text", text, match, n)
		}
	})
}

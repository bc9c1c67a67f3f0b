package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/engramhq/engram"

	"github.com/engramhq/engram/textsearch"
)

// Column weights of bm25() over memories_fts (value, abstraction, cues). The
// abstraction is a curated one-line summary, so a term there says more about
// what the memory is about than the same term in the value: weight 2. Cues
// are short anchor phrases (names, places); BM25's length normalisation
// already favours a match in a short field, so they get a smaller boost.
const (
	weightValue       = 1.0
	weightAbstraction = 2.0
	weightCues        = 1.5
)

// ftsText is the text indexed for s: CJK runs become bigrams (see
// textsearch.Segment), since the unicode61 tokenizer would keep a whole run
// as one token.
func ftsText(s string) string { return textsearch.Segment(s) }

// cuesText is the text indexed for a memory's cues.
func cuesText(cues []string) string { return textsearch.SegmentCues(cues) }

// matchQuery builds an FTS5 MATCH expression from free text: every term is a
// double-quoted string, so nothing a user types can be read as FTS5 syntax
// (NEAR, column filters, prefix stars, boolean operators), and the terms are
// ORed so that any of them can match while BM25 rewards documents matching
// more. A term with no letter, digit or private-use character is left out:
// unicode61 may read all it holds as separators (it does combining marks and
// some unassigned code points), and a phrase of no tokens matches nothing
// even where the text holds it. It returns "" when q has no terms.
func matchQuery(q string) string {
	var b strings.Builder
	for _, t := range textsearch.Terms(q) {
		if !hasWordChar(t) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		// A CJK term becomes several bigrams inside one string: FTS5 reads
		// that as a phrase, which matches the bigrams only when adjacent.
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(ftsText(t)), `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// hasWordChar reports whether s holds a letter, a digit or a private-use
// character, which unicode61 reads as parts of words.
func hasWordChar(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
	}) >= 0
}

// nsToken is the token that the ns column of memories_fts holds for every
// memory of one (tenant, user). It is a hash, so it is one unicode61 token
// whatever the names contain, and distinct namespaces practically never
// share one; queries match it only in the ns column, so a user's words can
// never collide with it either. Agent and session are left out: a scope
// narrows by them in SQL, and tokens per user keep a query's OR short.
func nsToken(org, project, user string) string {
	h := sha256.New()
	for _, s := range []string{org, project, user} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "ns" + hex.EncodeToString(h.Sum(nil)[:16])
}

// scopeMatch builds the MATCH expression of a search in s for the terms of
// matchQuery: the terms restricted to the text columns, ANDed with the
// namespace tokens of every row s can contain (its user's and, with
// IncludeShared, the project's shared rows, whose user is empty). The SQL
// conditions on the memories table still decide what the scope contains;
// the tokens only keep FTS5 from walking other namespaces' postings. It
// returns "" when terms is "".
func scopeMatch(s engram.Scope, terms string) string {
	if terms == "" {
		return ""
	}
	tok := `"` + nsToken(s.Org, s.Project, s.User) + `"`
	if s.IncludeShared && s.User != "" {
		tok += ` OR "` + nsToken(s.Org, s.Project, "") + `"`
	}
	return "ns : (" + tok + ") AND {value abstraction cues} : (" + terms + ")"
}

// The full-text index of memories is optional (engram.FullTextSwitch):
// the engine's in-memory index serves every namespace up to its limit,
// and all of them when memories_fts is gone. Whether it is there is read
// from the schema in every transaction that would touch it, so a switch
// made by another process is seen by the next transaction. A migration
// that changes memories_fts must allow for its absence.

// memoriesFTSSQL makes memories_fts as migration 8 did.
var memoriesFTSSQL = []string{
	`CREATE VIRTUAL TABLE memories_fts USING fts5(
		value, abstraction, cues, ns,
		content = '',
		tokenize = 'unicode61 remove_diacritics 2')`,
	`INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)`,
}

// ftsTablesSQL counts the memories_fts table: 1 when the index is there.
const ftsTablesSQL = `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'memories_fts'`

// FullTextIndexed implements engram.FullTextReader: whether memories_fts
// is there. It fails with the database's error.
func (t *base) FullTextIndexed(ctx context.Context) (bool, error) {
	var n int
	if err := t.queryRow(ctx, ftsTablesSQL).Scan(&n); err != nil {
		return false, mapErr(ctx, "read the schema", err)
	}
	return n > 0, nil
}

// SetFullTextIndexed implements engram.FullTextSwitch in one write
// transaction. Off drops memories_fts, whose freed pages secure_delete
// zeroes; on makes it and indexes every memory of every tenant, which
// holds other writes for as long as that takes. It fails with the
// database's error, and then nothing changed.
func (db *DB) SetFullTextIndexed(ctx context.Context, on bool) error {
	return db.update(ctx, func(t *tx) error {
		has, err := t.FullTextIndexed(ctx)
		if err != nil || has == on {
			return err
		}
		sctx, err := t.stmtCtx(ctx)
		if err != nil {
			return err
		}
		if !on {
			_, err := t.stx.ExecContext(sctx, "DROP TABLE memories_fts")
			return mapErr(ctx, "drop the full-text index", err)
		}
		for _, q := range memoriesFTSSQL {
			if _, err := t.stx.ExecContext(sctx, q); err != nil {
				return mapErr(ctx, "make the full-text index", err)
			}
		}
		if err := reindexMemories(sctx, t.stx); err != nil {
			return mapErr(ctx, "make the full-text index", err)
		}
		return nil
	})
}

// Deleting from the text indexes. They are contentless (they hold Go's
// CJK-bigram transform of the text, see ftsText) and have FTS5's
// secure-delete option on, so a row is removed with FTS5's 'delete' command
// given the text it was indexed with, and its entries are erased from the
// index's segments at once: no deleted word survives in the file until a
// merge. The cost is bounded by the row's own terms.

// indexedMemory is what memories_fts indexed for one memory row.
type indexedMemory struct {
	rid                int64
	org, project, user string
	value, abstraction string
	cues               sql.NullString // JSON list, as stored
}

// unindexMemory removes r's row from memories_fts, when there is one.
func (t *base) unindexMemory(ctx context.Context, r indexedMemory) error {
	if on, err := t.FullTextIndexed(ctx); err != nil || !on {
		return err
	}
	cues, err := decodeCues(r.cues)
	if err != nil {
		return fmt.Errorf("sqlite: unindex memory row %d: %w", r.rid, err)
	}
	_, err = t.exec(ctx, deleteMemoryFTSSQL, r.rid, ftsText(r.value), ftsText(r.abstraction), cuesText(cues),
		nsToken(r.org, r.project, r.user))
	return mapErr(ctx, "unindex memory", err)
}

func decodeCues(s sql.NullString) ([]string, error) {
	if !s.Valid || s.String == "" {
		return nil, nil
	}
	var cues []string
	if err := json.Unmarshal([]byte(s.String), &cues); err != nil {
		return nil, fmt.Errorf("cues are not a JSON list of strings: %w", err)
	}
	return cues, nil
}

// unindexScope removes the text index rows of the memories matching the
// condition mw (on alias m), reading them a page at a time.
func (t *base) unindexScope(ctx context.Context, mw string, margs []any) error {
	if on, err := t.FullTextIndexed(ctx); err != nil || !on {
		return err
	}
	const page = 500
	for after := int64(-1); ; {
		var rs []indexedMemory
		err := t.each(ctx, "purge scope", "SELECT m.rid, m.org, m.project, m.user_id, m.value, m.abstraction, m.cues FROM memories m WHERE "+
			mw+" AND m.rid > ? ORDER BY m.rid LIMIT ?", append(append([]any{}, margs...), after, page), func(sc scanner) error {
			var r indexedMemory
			if err := sc.Scan(&r.rid, &r.org, &r.project, &r.user, &r.value, &r.abstraction, &r.cues); err != nil {
				return err
			}
			rs = append(rs, r)
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := t.unindexMemory(ctx, r); err != nil {
				return err
			}
		}
		if len(rs) < page {
			return nil
		}
		after = rs[len(rs)-1].rid
	}
}

package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storecheck"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

func TestMain(m *testing.M) {
	// Every test database logs its migration; keep test output readable.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	code := m.Run()
	closeCorpora()
	os.Exit(code)
}

// openDB opens a new database in a temporary directory, closed when the test
// ends.
func openDB(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) engram.Store { return openDB(t) })
}

var ctx = context.Background()

var (
	nsU1 = engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	scU1 = engram.ScopeOf(nsU1)
)

// rawDB opens a second, independent handle on db's file, to look at what
// the interface does not show.
func rawDB(t testing.TB, db *sqlite.DB) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: db.Path()}
	raw, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

func count(t testing.TB, raw *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := raw.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func search(t testing.TB, db *sqlite.DB, q string, f engram.MemoryFilter) []engram.TextHit {
	t.Helper()
	var hits []engram.TextHit
	err := db.View(ctx, func(r engram.Reader) error {
		var err error
		hits, err = r.SearchText(ctx, scU1, q, f, 50)
		return err
	})
	if err != nil {
		t.Fatalf("SearchText(%q): %v", q, err)
	}
	return hits
}

func hitIDs(hs []engram.TextHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Memory.ID)
	}
	return out
}

func TestOpenCreatesAndReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b c?#%", "engram.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	m := storetest.Memory(nsU1, "persisted across opens")
	storetest.Put(t, db, m)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at the given path: %v", err)
	}
	db = nil
	db2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db2.Close()
	if got := hitIDs(search(t, db2, "persisted", engram.MemoryFilter{})); len(got) != 1 || got[0] != m.ID {
		t.Errorf("after reopening, search = %v", got)
	}
	// Migrations ran once.
	raw := rawDB(t, db2)
	if n := count(t, raw, "SELECT count(*) FROM schema_migrations"); n < 1 {
		t.Errorf("%d rows in schema_migrations", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM schema_migrations WHERE version = 1 AND name = '0001_init.sql'"); n != 1 {
		t.Errorf("migration 1 recorded %d times", n)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	db := openDB(t)
	raw := rawDB(t, db)
	if _, err := raw.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 0)"); err != nil {
		t.Fatal(err)
	}
	if db2, err := sqlite.Open(ctx, db.Path()); err == nil {
		db2.Close()
		t.Fatal("Open accepted a database with a newer schema")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("error %q does not say the schema is newer", err)
	}
}

func TestOpenRefusesGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not a database ", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := sqlite.Open(ctx, path); err == nil {
		db.Close()
		t.Fatal("Open accepted a file that is not a database")
	}
}

func TestPragmas(t *testing.T) {
	db := openDB(t)
	raw := rawDB(t, db)
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestIntegrityCheck shows that IntegrityCheck passes after every kind of
// write and detects index rows that are missing or left behind.
func TestIntegrityCheck(t *testing.T) {
	db := openDB(t)
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("empty database: %v", err)
	}
	other := engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	var recs []any
	var mems []*engram.Memory
	var eps []*engram.Episode
	for i := range 10 {
		ns := nsU1
		if i%2 == 1 {
			ns = other
		}
		m := storetest.Memory(ns, fmt.Sprintf("memory %d about lighthouses", i))
		e := storetest.Episode(ns, fmt.Sprintf("episode %d about lighthouses", i))
		mems, eps = append(mems, m), append(eps, e)
		recs = append(recs, m, e, storetest.Version(m, 1, engram.OpAdd))
	}
	storetest.Put(t, db, recs...)
	steps := []struct {
		name string
		fn   func(tx engram.Tx) error
	}{
		{"replace", func(tx engram.Tx) error {
			m := *mems[0]
			m.Value = "now about harbours"
			return tx.ReplaceMemory(ctx, &m)
		}},
		{"purge memory", func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, mems[2].ID) }},
		{"purge episode", func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsU1, eps[2].ID) }},
		{"purge scope", func(tx engram.Tx) error {
			_, err := tx.PurgeScope(ctx, engram.ScopeOf(other))
			return err
		}},
	}
	raw := rawDB(t, db)
	for _, s := range steps {
		if err := db.Update(ctx, s.fn); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Errorf("after %s: %v", s.name, err)
		}
		// Every memory has exactly its index row.
		if rows, idx := count(t, raw, "SELECT count(*) FROM memories"), count(t, raw, "SELECT count(*) FROM memories_fts_docsize"); rows != idx {
			t.Errorf("after %s: %d memories but %d index rows", s.name, rows, idx)
		}
	}

	// Break the index behind the store's back: both directions are reported.
	// (The index is contentless, so a row's entry is dropped from its
	// docsize shadow table, which is what the check reads.)
	if _, err := raw.Exec("DELETE FROM memories_fts_docsize WHERE id = (SELECT min(rid) FROM memories)"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("INSERT INTO memories_fts (rowid, value, abstraction, cues, ns) VALUES (999999, 'orphan', '', '', 'ns')"); err != nil {
		t.Fatal(err)
	}
	err := db.IntegrityCheck(ctx)
	if err == nil {
		t.Fatal("IntegrityCheck passed with a broken index")
	}
	for _, want := range []string{"1 memories are missing from memories_fts", "memories_fts has 1 rows without a row in memories"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("IntegrityCheck error %q does not report %q", err, want)
		}
	}
}

func putVectors(t testing.TB, db *sqlite.DB, m *engram.Memory, embedder string, vecs ...engram.FieldVector) {
	t.Helper()
	if err := db.Update(ctx, func(tx engram.Tx) error {
		return tx.PutVectors(ctx, m.Namespace, m.ID, embedder, vecs)
	}); err != nil {
		t.Fatalf("PutVectors: %v", err)
	}
}

func TestPurgeRemovesVectorsAndSources(t *testing.T) {
	db := openDB(t)
	raw := rawDB(t, db)
	u2 := engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	a, b, c := storetest.Memory(nsU1, "a"), storetest.Memory(nsU1, "b"), storetest.Memory(u2, "c")
	for _, m := range []*engram.Memory{a, b, c} {
		m.Sources = []string{engram.NewID(), engram.NewID()}
	}
	storetest.Put(t, db, a, b, c)
	// Two embedders' vectors coexist, as during a re-embedding.
	for _, m := range []*engram.Memory{a, b, c} {
		putVectors(t, db, m, "old", engram.FieldVector{Field: engram.FieldAbstraction, Vec: []float32{1, 2}},
			engram.FieldVector{Field: engram.FieldValue, Vec: []float32{3, 4}})
		putVectors(t, db, m, "new", engram.FieldVector{Field: engram.FieldValue, Vec: []float32{5, 6, 7}})
	}
	vectors := func(id string) int {
		return count(t, raw, "SELECT count(*) FROM memory_vectors WHERE memory_id = ?", id)
	}
	sources := func(id string) int {
		return count(t, raw, "SELECT count(*) FROM memory_sources WHERE memory_id = ?", id)
	}
	for _, m := range []*engram.Memory{a, b, c} {
		if vectors(m.ID) != 3 || sources(m.ID) != 2 {
			t.Fatalf("memory %s: %d vectors, %d sources before purging", m.Value, vectors(m.ID), sources(m.ID))
		}
	}
	// Replacing the sources replaces the rows.
	b2 := *b
	b2.Sources = []string{engram.NewID()}
	if err := db.Update(ctx, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &b2) }); err != nil {
		t.Fatal(err)
	}
	if n := count(t, raw, "SELECT count(*) FROM memory_sources WHERE memory_id = ? AND episode_id = ?", b.ID, b2.Sources[0]); n != 1 || sources(b.ID) != 1 {
		t.Errorf("after replacing sources: %d rows, want only the new source", sources(b.ID))
	}
	if vectors(b.ID) != 3 {
		t.Errorf("ReplaceMemory left %d vectors, want the 3 it had", vectors(b.ID))
	}

	if err := db.Update(ctx, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, a.ID) }); err != nil {
		t.Fatal(err)
	}
	if vectors(a.ID) != 0 || sources(a.ID) != 0 {
		t.Errorf("after PurgeMemory: %d vectors, %d sources", vectors(a.ID), sources(a.ID))
	}
	if vectors(b.ID) != 3 || vectors(c.ID) != 3 {
		t.Errorf("PurgeMemory removed other memories' vectors")
	}
	if err := db.Update(ctx, func(tx engram.Tx) error {
		_, err := tx.PurgeScope(ctx, scU1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if vectors(b.ID) != 0 || sources(b.ID) != 0 {
		t.Errorf("after PurgeScope: %d vectors, %d sources", vectors(b.ID), sources(b.ID))
	}
	if vectors(c.ID) != 3 || sources(c.ID) != 2 {
		t.Errorf("PurgeScope of u1 removed u2's vectors or sources")
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestVectorLayout pins the on-disk form of a vector, which a round trip
// through the same code could not: little-endian float32s, their count in
// dim, and a schema that refuses a blob of another length.
func TestVectorLayout(t *testing.T) {
	db := openDB(t)
	raw := rawDB(t, db)
	m := storetest.Memory(nsU1, "laid out")
	storetest.Put(t, db, m)
	putVectors(t, db, m, "e", engram.FieldVector{Field: engram.FieldValue, Vec: []float32{1, -2, 0.5}})
	var dim int
	var blob []byte
	if err := raw.QueryRow("SELECT dim, vec FROM memory_vectors WHERE memory_id = ? AND embedder = 'e' AND field = 'value'", m.ID).Scan(&dim, &blob); err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f}
	if dim != 3 || !slices.Equal(blob, want) {
		t.Errorf("stored dim %d, vec % x; want 3, % x", dim, blob, want)
	}
	if _, err := raw.Exec(`INSERT INTO memory_vectors (org, project, user_id, memory_id, embedder, field, dim, vec)
		VALUES ('acme', 'app', 'u1', ?, 'bad', 'value', 3, x'0000803f')`, m.ID); err == nil {
		t.Error("the schema accepted a blob shorter than its dim")
	}
}

// TestMetaDeleteRemovesRow: an empty value reads back like a missing key,
// so only the table shows that SetMeta deleted it.
func TestMetaDeleteRemovesRow(t *testing.T) {
	db := openDB(t)
	raw := rawDB(t, db)
	set := func(k, v string) {
		t.Helper()
		if err := db.Update(ctx, func(tx engram.Tx) error { return tx.SetMeta(ctx, k, v) }); err != nil {
			t.Fatal(err)
		}
	}
	set("a", "1")
	set("b", "2")
	set("a", "")
	if n := count(t, raw, "SELECT count(*) FROM meta"); n != 1 {
		t.Errorf("%d meta rows after deleting one of two, want 1", n)
	}
}

func TestTimesAreMicroseconds(t *testing.T) {
	db := openDB(t)
	m := storetest.Memory(nsU1, "timed")
	m.ValidTo = storetest.Ptr(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))
	storetest.Put(t, db, m)
	var created, validTo int64
	var validFrom sql.NullInt64
	if err := rawDB(t, db).QueryRow("SELECT created_at, valid_from, valid_to FROM memories WHERE id = ?", m.ID).Scan(&created, &validFrom, &validTo); err != nil {
		t.Fatal(err)
	}
	if created != m.CreatedAt.UnixMicro() || validTo != m.ValidTo.UnixMicro() || validFrom.Valid {
		t.Errorf("stored %d, %v, %d; want %d, NULL, %d", created, validFrom, validTo, m.CreatedAt.UnixMicro(), m.ValidTo.UnixMicro())
	}
}

func TestSearchFoldsDiacritics(t *testing.T) {
	db := openDB(t)
	cafe, naive := storetest.Memory(nsU1, "Meet at the café on Rue Crémieux"), storetest.Memory(nsU1, "a naive plan")
	storetest.Put(t, db, cafe, naive)
	for q, want := range map[string]string{"cafe": cafe.ID, "CAFÉ": cafe.ID, "cremieux": cafe.ID, "naïve": naive.ID} {
		if got := hitIDs(search(t, db, q, engram.MemoryFilter{})); len(got) != 1 || got[0] != want {
			t.Errorf("search %q = %v, want [%s]", q, got, want)
		}
	}
}

func TestSearchWeightsAbstractionAndCues(t *testing.T) {
	db := openDB(t)
	// The same words in each memory, with "ferry" in a different field.
	inValue := storetest.Memory(nsU1, "took the ferry across the bay at dawn")
	inValue.Abstraction, inValue.Cues = "morning crossing plans", []string{"harbour"}
	inAbs := storetest.Memory(nsU1, "took the boat across the bay at dawn")
	inAbs.Abstraction, inAbs.Cues = "morning ferry plans", []string{"harbour"}
	inCue := storetest.Memory(nsU1, "took the boat across the bay at dawn")
	inCue.Abstraction, inCue.Cues = "morning crossing plans", []string{"ferry"}
	filler := storetest.Memory(nsU1, "unrelated filler about gardening")
	filler.Abstraction, filler.Cues = "weekend plans", []string{"harbour"}
	storetest.Put(t, db, inValue, inAbs, inCue, filler, storetest.Memory(nsU1, "more filler text"))
	hits := search(t, db, "ferry", engram.MemoryFilter{})
	if got, want := hitIDs(hits), []string{inAbs.ID, inCue.ID, inValue.ID}; !slices.Equal(got, want) {
		t.Errorf("ranking = %v, want abstraction %s, cue %s, value %s", got, inAbs.ID, inCue.ID, inValue.ID)
	}
}

func TestSearchCJKIsPhrase(t *testing.T) {
	db := openDB(t)
	apart := storetest.Memory(nsU1, "東京と京都に行きました")
	together := storetest.Memory(nsU1, "東京都に住んでいます")
	storetest.Put(t, db, apart, together)
	// The bigrams of 東京都 appear in both, adjacent only in one.
	if got := hitIDs(search(t, db, "東京都", engram.MemoryFilter{})); !slices.Equal(got, []string{together.ID}) {
		t.Errorf("search 東京都 = %v, want only %s", got, together.ID)
	}
	if got := hitIDs(search(t, db, "京都", engram.MemoryFilter{})); len(got) != 2 {
		t.Errorf("search 京都 = %v, want both", got)
	}
}

// TestReadersDoNotWaitForWriter holds a write transaction open and reads
// meanwhile: WAL and the separate read pool let the read finish.
func TestReadersDoNotWaitForWriter(t *testing.T) {
	db := openDB(t)
	m := storetest.Memory(nsU1, "committed before")
	storetest.Put(t, db, m)
	inside, release := make(chan struct{}), make(chan struct{})
	uncommitted := storetest.Memory(nsU1, "uncommitted")
	done := make(chan error, 1)
	go func() {
		done <- db.Update(ctx, func(tx engram.Tx) error {
			if err := tx.InsertMemory(ctx, uncommitted); err != nil {
				return err
			}
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	read := make(chan error, 1)
	go func() {
		read <- db.View(ctx, func(r engram.Reader) error {
			if _, err := r.GetMemory(ctx, scU1, m.ID); err != nil {
				return err
			}
			if _, err := r.GetMemory(ctx, scU1, uncommitted.ID); !engram.IsNotFound(err) {
				return fmt.Errorf("uncommitted memory visible to a reader: %v", err)
			}
			return nil
		})
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("View waited for an open Update")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestUpdatesSerialize runs read-modify-write updates from many goroutines;
// none may fail or be lost.
func TestUpdatesSerialize(t *testing.T) {
	db := openDB(t)
	m := storetest.Memory(nsU1, "counter")
	storetest.Put(t, db, m)
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				errs <- db.Update(ctx, func(tx engram.Tx) error {
					cur, err := tx.GetMemory(ctx, scU1, m.ID)
					if err != nil {
						return err
					}
					cur.Version++
					return tx.ReplaceMemory(ctx, cur)
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var got *engram.Memory
	if err := db.View(ctx, func(r engram.Reader) error {
		var err error
		got, err = r.GetMemory(ctx, scU1, m.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := 1 + workers*each; got.Version != want {
		t.Errorf("version %d after %d increments from 1, want %d", got.Version, workers*each, want)
	}
}

func TestMetadataKeyRefused(t *testing.T) {
	db := openDB(t)
	for _, k := range []string{`a"b`, `a\b`, "a\nb", ""} {
		err := db.View(ctx, func(r engram.Reader) error {
			_, _, err := r.ListMemories(ctx, scU1, engram.MemoryFilter{Metadata: map[string]any{k: 1}})
			return err
		})
		if engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("metadata key %q: %v, want EINVALID", k, err)
		}
	}
}

func TestWriteInViewFails(t *testing.T) {
	db := openDB(t)
	m := storetest.Memory(nsU1, "stored")
	storetest.Put(t, db, m)
	putVectors(t, db, m, "e", engram.FieldVector{Field: engram.FieldValue, Vec: []float32{1}})
	for name, write := range map[string]func(tx storecheck.Tx) error{
		"InsertEpisode": func(tx storecheck.Tx) error { return tx.InsertEpisode(ctx, storetest.Episode(nsU1, "sneaky")) },
		"PutVectors": func(tx storecheck.Tx) error {
			return tx.PutVectors(ctx, nsU1, m.ID, "e", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{2}}})
		},
		"DeleteVectorsExcept": func(tx storecheck.Tx) error {
			_, err := tx.DeleteVectorsExcept(ctx, "other")
			return err
		},
		"SetMeta": func(tx storecheck.Tx) error { return tx.SetMeta(ctx, "k", "v") },
	} {
		err := db.View(ctx, func(r engram.Reader) error {
			if _, ok := r.(engram.Tx); ok {
				return nil // the checked reader must not be a Tx: fails below
			}
			// Past the checks, the store's own transaction refuses too.
			tx, ok := storecheck.Inner(r).(storecheck.Tx)
			if !ok {
				return errors.New("not a Tx")
			}
			return write(tx)
		})
		if err == nil {
			t.Errorf("%s through View's reader succeeded", name)
		}
	}
}

// TestIntegrityCheckFindsCorruption overwrites part of a page near the end
// of the file, where the last-written table and index pages are.
func TestIntegrityCheckFindsCorruption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corrupt.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []any
	for i := range 2000 {
		recs = append(recs, storetest.Memory(nsU1, fmt.Sprintf("memory number %d with some words", i)))
	}
	storetest.Put(t, db, recs...)
	if err := db.Close(); err != nil { // checkpoints the WAL into the file
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", 256))
	for _, p := range []int64{st.Size()/page - 2, st.Size() / page / 2} {
		if _, err := f.WriteAt(junk, p*page+200); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen (only the schema page is read): %v", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err == nil {
		t.Error("IntegrityCheck passed a corrupted file")
	}
}

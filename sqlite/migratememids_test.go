package sqlite_test

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// memoryKeyMigration is the migration that keys memory ids, and every
// table that names a memory, per user instead of per tenant.
const memoryKeyMigration = 21

// memoryTables are the tables migration 21 builds again.
var memoryTables = []string{"memories", "memory_sources", "memory_versions", "memory_vectors",
	"entity_mentions", "relation_evidence", "community_sources", "memories_fts"}

// TestMigrationMemoryIDsPerUser builds a database with the migrations
// before memoryKeyMigration, whose memory ids were unique per tenant,
// fills every table that names a memory behind the store's back, and
// opens it: every row is kept and read back through the store (the text
// index too, keyed by the kept rowid), the foreign keys hold, and another
// user may then hold the same memory id while the same user may not.
func TestMigrationMemoryIDsPerUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engram.db")
	raw, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String())
	if err != nil {
		t.Fatal(err)
	}
	applyOldMigrations(t, raw, memoryKeyMigration)
	id, ent := insertOldMemories(t, raw)
	before := map[string]int{}
	for _, table := range memoryTables {
		before[table] = count(t, raw, "SELECT count(*) FROM "+table)
	}
	raw.Close()

	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open the old database: %v", err)
	}
	defer db.Close()
	raw = rawDB(t, db)
	for _, table := range memoryTables {
		if n := count(t, raw, "SELECT count(*) FROM "+table); n != before[table] {
			t.Errorf("%s has %d rows after the migration, had %d", table, n, before[table])
		}
	}
	if n := count(t, raw, "SELECT count(*) FROM pragma_foreign_key_check"); n != 0 {
		t.Errorf("%d rows break a foreign key after the migration", n)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("integrity after the migration: %v", err)
	}
	checkOldMemoryKept(t, db, id, ent)

	u1 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "a", Session: "s1"}
	theirs := storetest.Memory(engram.Namespace{Org: "acme", Project: "app", User: "u2"}, "Je travaille à Lyon.")
	theirs.ID = id
	storetest.Put(t, db, theirs)
	twin := storetest.Memory(engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s2"}, "twice")
	twin.ID = id
	err = db.Update(ctx, func(tx engram.Tx) error { return tx.InsertMemory(ctx, twin) })
	if engram.ErrorCode(err) != engram.ECONFLICT {
		t.Errorf("the same user's memory id again: %v, want ECONFLICT", err)
	}
	if err := db.Update(ctx, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, u1, id) }); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"memory_sources", "memory_versions", "memory_vectors", "entity_mentions", "relation_evidence", "community_sources"} {
		if n := count(t, raw, "SELECT count(*) FROM "+table+" WHERE org = 'acme' AND memory_id = ?", id); n != 0 {
			t.Errorf("%s keeps %d rows of u1's purged memory", table, n)
		}
	}
	if got := getMemoryOf(t, db, engram.ScopeOf(theirs.Namespace), id); got == nil || got.Value != theirs.Value {
		t.Errorf("u2's memory after u1's purge = %+v", got)
	}
}

// insertOldMemories writes, as the store encoded them, a memory of acme's
// u1 with a source, a version, a vector, a mention, relation evidence and
// a community source, the project's memory, and globex's memory under
// the first one's id (which the old key allowed). It returns that id and
// u1's entity.
func insertOldMemories(t *testing.T, raw *sql.DB) (string, string) {
	t.Helper()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	at := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC).UnixMicro()
	id, shared, ep := engram.NewID(), engram.NewID(), engram.NewID()
	ent, other, rel, com := engram.NewID(), engram.NewID(), engram.NewID(), engram.NewID()
	mem := `INSERT INTO memories (org, project, user_id, agent, session, id, kind, value, cues, sources, metadata, status,
		created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, 'semantic', ?, ?, ?, ?, 'active', ?, ?, 1)`
	exec(mem, "acme", "app", "u1", "a", "s1", id, "Ich wohne in Köln.", `["Köln"]`, `["`+ep+`"]`, `{"canal":"móvil"}`, at, at)
	exec(mem, "acme", "app", "", "", "", shared, "项目的记录", nil, nil, nil, at, at)
	exec(mem, "globex", "app", "u1", "", "", id, "Vivo en Sevilla.", nil, nil, nil, at, at)
	exec(`INSERT INTO memory_sources (org, project, episode_id, memory_id) VALUES ('acme', 'app', ?, ?)`, ep, id)
	for _, org := range []string{"acme", "globex"} {
		exec(`INSERT INTO memory_versions (org, project, user_id, agent, session, memory_id, version, op, at)
			VALUES (?, 'app', 'u1', '', '', ?, 1, 'add', ?)`, org, id, at)
		exec(`INSERT INTO memory_vectors (org, project, memory_id, embedder, field, dim, vec) VALUES (?, 'app', ?, 'e', 'value', 2, ?)`,
			org, id, storeutil.EncodeVec([]float32{1, 0.5}))
	}
	for _, e := range []struct{ id, name string }{{ent, "Ana"}, {other, "Köln"}} {
		exec(`INSERT INTO entities (org, project, user_id, id, name, norm, type, status, created_at, updated_at)
			VALUES ('acme', 'app', 'u1', ?, ?, ?, 'person', 'active', ?, ?)`, e.id, e.name, engram.NormalizeName(e.name), at, at)
	}
	exec(`INSERT INTO entity_mentions (org, project, user_id, entity_id, memory_id, at) VALUES ('acme', 'app', 'u1', ?, ?, ?)`, ent, id, at)
	exec(`INSERT INTO relations (org, project, user_id, id, source, target, label, created_at)
		VALUES ('acme', 'app', 'u1', ?, ?, ?, 'lives_in', ?)`, rel, ent, other, at)
	exec(`INSERT INTO relation_evidence (org, project, relation_id, memory_id, weight) VALUES ('acme', 'app', ?, ?, 1)`, rel, id)
	exec(`INSERT INTO communities (org, project, user_id, id, summary, size, sources, updated_at)
		VALUES ('acme', 'app', 'u1', ?, 'Ana in Köln', 2, 1, ?)`, com, at)
	exec(`INSERT INTO community_members (org, project, entity_id, community_id) VALUES ('acme', 'app', ?, ?), ('acme', 'app', ?, ?)`,
		ent, com, other, com)
	exec(`INSERT INTO community_sources (org, project, memory_id, community_id) VALUES ('acme', 'app', ?, ?)`, id, com)
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.ReindexMemories(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return id, ent
}

// checkOldMemoryKept reads u1's memory id back through the store with
// everything that names it.
func checkOldMemoryKept(t *testing.T, db *sqlite.DB, id, ent string) {
	t.Helper()
	s := engram.Scope{Org: "acme", Project: "app", User: "u1"}
	m := getMemoryOf(t, db, s, id)
	if m == nil || m.Value != "Ich wohne in Köln." || m.Namespace.Session != "s1" || len(m.Sources) != 1 ||
		!slices.Equal(m.Cues, []string{"Köln"}) || m.Metadata["canal"] != "móvil" {
		t.Fatalf("u1's memory after the migration = %+v", m)
	}
	if other := getMemoryOf(t, db, engram.Scope{Org: "globex", Project: "app", User: "u1"}, id); other == nil || other.Value != "Vivo en Sevilla." {
		t.Errorf("globex's memory after the migration = %+v", other)
	}
	err := db.View(ctx, func(r engram.Reader) error {
		if vs, err := r.Versions(ctx, s, id); err != nil || len(vs) != 1 {
			t.Errorf("versions = %+v, %v; want one", vs, err)
		}
		if recs, err := r.GetVectors(ctx, m.Namespace, "e", []string{id}); err != nil || len(recs) != 1 || !slices.Equal(recs[0].Vec, []float32{1, 0.5}) {
			t.Errorf("vectors = %+v, %v; want the one stored", recs, err)
		}
		if ms, err := r.MemoryMentions(ctx, s, []string{id}); err != nil || len(ms) != 1 || ms[0].EntityID != ent {
			t.Errorf("mentions = %+v, %v; want Ana's", ms, err)
		}
		if rels, err := r.Relations(ctx, s, nil, engram.RelationFilter{Memory: id}); err != nil || len(rels) != 1 || len(rels[0].Evidence) != 1 {
			t.Errorf("relations of the memory = %+v, %v; want one with its evidence", rels, err)
		}
		if ms, _, err := r.ListMemories(ctx, s, engram.MemoryFilter{Sources: m.Sources}); err != nil || len(ms) != 1 {
			t.Errorf("memories of its source = %+v, %v; want it", ms, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if hits := search(t, db, "Köln", engram.MemoryFilter{}); len(hits) != 1 || hits[0].Memory.ID != id {
		t.Errorf("search after the migration = %+v, want the memory", hits)
	}
}

func getMemoryOf(t *testing.T, db *sqlite.DB, s engram.Scope, id string) *engram.Memory {
	t.Helper()
	var m *engram.Memory
	err := db.View(ctx, func(r engram.Reader) error {
		var err error
		m, err = r.GetMemory(ctx, s, id)
		return err
	})
	if err != nil {
		t.Errorf("GetMemory %s in %+v: %v", id, s, err)
	}
	return m
}

package postgres_test

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
)

// TestMigrationMemoryIDsPerUser puts memories with their versions,
// vectors, mentions, relation evidence and community sources in a schema,
// takes the tables back to the keys they had before migration 21 (one
// memory id per tenant, no user beside the memory id where there was
// none), and opens it again: every record is kept, each table is keyed by
// the memory's user, and another user may then hold the same memory id
// while the same user may not.
func TestMigrationMemoryIDsPerUser(t *testing.T) {
	u := schemaURL(t)
	schema := mustSchema(t, u)
	first := openAt(t, u, postgres.Options{})
	u1 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "a", Session: "s1"}
	mine := storetest.Memory(u1, "Ich wohne in Köln.")
	mine.Metadata = map[string]any{"canal": "móvil"}
	shared := storetest.Memory(engram.Namespace{Org: "acme", Project: "app"}, "项目的记录")
	elsewhere := *mine
	elsewhere.Namespace, elsewhere.Value, elsewhere.Metadata = engram.Namespace{Org: "globex", Project: "app", User: "u1"}, "Vivo en Sevilla.", nil
	storetest.Put(t, first, mine, shared, &elsewhere, storetest.Version(mine, 1, engram.OpAdd))
	ana, koeln := storetest.Entity(u1, "Ana", "person"), storetest.Entity(u1, "Köln", "place")
	rel := storetest.Relation(ana, koeln, mine.ID)
	storetest.PutGraph(t, first, ana, koeln, engram.Mention{EntityID: ana.ID, MemoryID: mine.ID, Namespace: ana.Namespace, At: storetest.T0}, rel)
	com := &engram.Community{ID: engram.NewID(), Namespace: ana.Namespace, Members: sortedIDs(ana.ID, koeln.ID),
		Summary: "Ana in Köln", Sources: []string{mine.ID}, UpdatedAt: storetest.T0}
	mustUpdate(t, first, func(tx engram.Tx) error {
		if err := tx.PutVectors(ctx, u1, mine.ID, "e", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{1, 0.5}}}); err != nil {
			return err
		}
		return tx.PutCommunity(ctx, com)
	})
	revertMemoryKeys(t, schema)

	db := openAt(t, u, postgres.Options{})
	for table, want := range map[string][]string{"memories": {"tenant", "user_id", "id"},
		"memory_versions": {"tenant", "user_id", "memory_id", "version"},
		"memory_vectors":  {"tenant", "user_id", "memory_id", "embedder", "field"}} {
		if key := primaryKey(t, schema, table); !slices.Equal(key, want) {
			t.Errorf("%s is keyed by %v after the migration, want %v", table, key, want)
		}
	}
	s := engram.ScopeOf(engram.Namespace{Org: "acme", Project: "app", User: "u1"})
	err := db.View(ctx, func(r engram.Reader) error {
		for _, want := range []*engram.Memory{mine, shared, &elsewhere} {
			got, err := r.GetMemory(ctx, engram.ScopeOf(want.Namespace), want.ID)
			if a, b := asJSON(t, got), asJSON(t, want); err != nil || a != b {
				t.Errorf("memory after the migration = %s, %v; want %s", a, err, b)
			}
		}
		if vs, err := r.Versions(ctx, s, mine.ID); err != nil || len(vs) != 1 {
			t.Errorf("versions = %+v, %v; want one", vs, err)
		}
		if recs, err := r.GetVectors(ctx, u1, "e", []string{mine.ID}); err != nil || len(recs) != 1 || !slices.Equal(recs[0].Vec, []float32{1, 0.5}) {
			t.Errorf("vectors = %+v, %v; want the one stored", recs, err)
		}
		if ms, err := r.MemoryMentions(ctx, s, []string{mine.ID}); err != nil || len(ms) != 1 || ms[0].EntityID != ana.ID {
			t.Errorf("mentions = %+v, %v; want Ana's", ms, err)
		}
		if rels, err := r.Relations(ctx, s, nil, engram.RelationFilter{Memory: mine.ID}); err != nil || len(rels) != 1 || len(rels[0].Evidence) != 1 {
			t.Errorf("relations of the memory = %+v, %v; want one with its evidence", rels, err)
		}
		if c, err := r.GetCommunity(ctx, s, com.ID); err != nil || !slices.Equal(c.Sources, com.Sources) {
			t.Errorf("community = %+v, %v; want its source", c, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	theirs := *mine
	theirs.Namespace = engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	storetest.Put(t, db, &theirs)
	twin := *mine
	twin.Namespace.Session = "s2"
	err = db.Update(ctx, func(tx engram.Tx) error { return tx.InsertMemory(ctx, &twin) })
	wantCode(t, "the same user's memory id again", err, engram.ECONFLICT)
	mustUpdate(t, db, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, u1, mine.ID) })
	var n int
	if err := adminPool(t).QueryRow(ctx, `SELECT (SELECT count(*) FROM `+schema+`.memory_vectors)
		+ (SELECT count(*) FROM `+schema+`.relation_evidence) + (SELECT count(*) FROM `+schema+`.community_sources)
		+ (SELECT count(*) FROM `+schema+`.entity_mentions)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows naming u1's purged memory are left (%v)", n, err)
	}
}

// revertMemoryKeys takes the tables that name a memory in schema back to
// their keys before migration 21.
func revertMemoryKeys(t *testing.T, schema string) {
	t.Helper()
	for _, q := range []string{
		"ALTER TABLE " + schema + ".memory_vectors DROP CONSTRAINT memory_vectors_memory_fkey",
		"ALTER TABLE " + schema + ".entity_mentions DROP CONSTRAINT entity_mentions_memory_fkey",
		"ALTER TABLE " + schema + ".relation_evidence DROP CONSTRAINT relation_evidence_memory_fkey",
		"ALTER TABLE " + schema + ".community_sources DROP CONSTRAINT community_sources_memory_fkey",
		"ALTER TABLE " + schema + ".memories DROP CONSTRAINT memories_pkey",
		"ALTER TABLE " + schema + ".memories ADD CONSTRAINT memories_pkey PRIMARY KEY (tenant, id)",
		"DROP INDEX " + schema + ".memories_by_key",
		"CREATE INDEX memories_by_key ON " + schema + ".memories (org, project, id)",
		"ALTER TABLE " + schema + ".memory_versions DROP CONSTRAINT memory_versions_pkey",
		"ALTER TABLE " + schema + ".memory_versions ADD CONSTRAINT memory_versions_pkey PRIMARY KEY (tenant, memory_id, version)",
		"ALTER TABLE " + schema + ".memory_vectors DROP CONSTRAINT memory_vectors_pkey",
		"ALTER TABLE " + schema + ".memory_vectors DROP COLUMN user_id",
		"ALTER TABLE " + schema + ".memory_vectors ADD CONSTRAINT memory_vectors_pkey PRIMARY KEY (tenant, memory_id, embedder, field)",
		"ALTER TABLE " + schema + ".relation_evidence DROP COLUMN user_id",
		"ALTER TABLE " + schema + ".community_sources DROP COLUMN user_id",
		"ALTER TABLE " + schema + ".memory_vectors ADD FOREIGN KEY (tenant, memory_id) REFERENCES " + schema + ".memories (tenant, id) ON DELETE CASCADE",
		"ALTER TABLE " + schema + ".entity_mentions ADD FOREIGN KEY (tenant, memory_id) REFERENCES " + schema + ".memories (tenant, id) ON DELETE CASCADE",
		"ALTER TABLE " + schema + ".relation_evidence ADD FOREIGN KEY (tenant, memory_id) REFERENCES " + schema + ".memories (tenant, id) ON DELETE CASCADE",
		"ALTER TABLE " + schema + ".community_sources ADD FOREIGN KEY (tenant, memory_id) REFERENCES " + schema + ".memories (tenant, id) ON DELETE CASCADE",
		"DELETE FROM " + schema + ".schema_migrations WHERE version >= 21",
	} {
		if _, err := adminPool(t).Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func sortedIDs(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

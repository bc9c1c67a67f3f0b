package postgres_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
)

// TestMigrationIDsPerUser puts episodes, audit entries and observations in
// a schema, takes their tables back to the keys they had before migration
// 19 (one id per tenant), and opens it again: every record is kept, field
// for field, the keys are (tenant, user_id, id), and another user may then
// hold the same ids while the same user may not.
func TestMigrationIDsPerUser(t *testing.T) {
	u := schemaURL(t)
	schema := mustSchema(t, u)
	first := openAt(t, u, postgres.Options{})
	u1 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "a", Session: "s1"}
	mine := storetest.Episode(u1, "Vivo en Sevilla.")
	mine.Metadata = map[string]any{"canal": "móvil"}
	shared := storetest.Episode(engram.Namespace{Org: "acme", Project: "app"}, "项目的记录")
	elsewhere := *mine
	elsewhere.Namespace, elsewhere.Content, elsewhere.Metadata = engram.Namespace{Org: "globex", Project: "app", User: "u1"}, "Ich wohne in Köln.", nil
	entry := storetest.Audit(u1, "episode.add", mine.ID)
	obs := &engram.Observation{ID: engram.NewID(), Namespace: engram.Namespace{Org: "acme", Project: "app", User: "u1"}, Modality: "face",
		Embedding: []float32{1, 0, 0.25}, IdentityID: engram.NewID(), EpisodeID: mine.ID, Span: &engram.MediaSpan{StartMS: 10, EndMS: 900}, At: storetest.T0}
	storetest.Put(t, first, mine, shared, &elsewhere, entry)
	mustUpdate(t, first, func(tx engram.Tx) error { return tx.InsertObservation(ctx, obs) })
	for _, table := range []string{"episodes", "audit", "identity_observations"} {
		for _, q := range []string{
			"ALTER TABLE " + schema + "." + table + " DROP CONSTRAINT " + table + "_pkey",
			"ALTER TABLE " + schema + "." + table + " ADD CONSTRAINT " + table + "_pkey PRIMARY KEY (tenant, id)",
		} {
			if _, err := adminPool(t).Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if _, err := adminPool(t).Exec(ctx, "DELETE FROM "+schema+".schema_migrations WHERE version >= 19"); err != nil {
		t.Fatal(err)
	}

	db := openAt(t, u, postgres.Options{})
	for _, table := range []string{"episodes", "audit", "identity_observations"} {
		if key, want := primaryKey(t, schema, table), []string{"tenant", "user_id", "id"}; !slices.Equal(key, want) {
			t.Errorf("%s is keyed by %v after the migration, want %v", table, key, want)
		}
	}
	err := db.View(ctx, func(r engram.Reader) error {
		for _, want := range []*engram.Episode{mine, shared, &elsewhere} {
			got, err := r.GetEpisode(ctx, engram.ScopeOf(want.Namespace), want.ID)
			if a, b := asJSON(t, got), asJSON(t, want); err != nil || a != b {
				t.Errorf("episode after the migration = %s, %v; want %s", a, err, b)
			}
		}
		got, _, err := r.Audit(ctx, engram.ScopeOf(u1), engram.AuditFilter{})
		if a, b := asJSON(t, got), asJSON(t, []*engram.AuditEntry{entry}); err != nil || a != b {
			t.Errorf("audit after the migration = %s, %v; want %s", a, err, b)
		}
		os, err := r.ListObservations(ctx, engram.ScopeOf(obs.Namespace), engram.ObservationFilter{IDs: []string{obs.ID}})
		if a, b := asJSON(t, os), asJSON(t, []*engram.Observation{obs}); err != nil || a != b {
			t.Errorf("observations after the migration = %s, %v; want %s", a, err, b)
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
	err = db.Update(ctx, func(tx engram.Tx) error { return tx.InsertEpisode(ctx, &twin) })
	wantCode(t, "the same user's id again", err, engram.ECONFLICT)
}

// primaryKey returns the columns of the primary key of table in schema, in
// order.
func primaryKey(t *testing.T, schema, table string) []string {
	t.Helper()
	var key []string
	if err := adminPool(t).QueryRow(ctx, `SELECT array_agg(a.attname ORDER BY k.ord)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace,
			unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
			JOIN pg_attribute a ON a.attnum = k.attnum
		WHERE n.nspname = $1 AND c.relname = $2 AND i.indisprimary AND a.attrelid = i.indrelid`, schema, table).Scan(&key); err != nil {
		t.Fatal(err)
	}
	return key
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

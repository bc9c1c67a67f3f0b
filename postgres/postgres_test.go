package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	ctx   = context.Background()
	quiet = slog.New(slog.DiscardHandler)
)

// testURL returns the URL of the test database from
// ENGRAM_TEST_POSTGRES_URL (scripts/pg.sh sets it). Without it the test is
// skipped, unless ENGRAM_REQUIRE_POSTGRES=1, which CI sets: then it fails.
func testURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("ENGRAM_TEST_POSTGRES_URL")
	if u == "" {
		if os.Getenv("ENGRAM_REQUIRE_POSTGRES") == "1" {
			t.Fatal("ENGRAM_TEST_POSTGRES_URL is not set but ENGRAM_REQUIRE_POSTGRES=1; run the tests through scripts/pg.sh")
		}
		t.Skip("ENGRAM_TEST_POSTGRES_URL is not set; run through scripts/pg.sh to test against PostgreSQL")
	}
	return u
}

var admin struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
}

// adminPool is a connection pool to the test database for setting up and
// inspecting schemas behind the store's back.
func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := testURL(t)
	admin.once.Do(func() {
		admin.pool, admin.err = pgxpool.New(ctx, u)
		if admin.err != nil {
			return
		}
		// Installed once in public, so that no test schema owns it: dropping
		// a schema that held the extension would take other schemas'
		// indexes with it.
		_, admin.err = admin.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public")
	})
	if admin.err != nil {
		t.Fatalf("connect to the test database: %v", admin.err)
	}
	return admin.pool
}

// schemaURL creates an empty schema, dropped when the test ends, and returns
// the test database's URL with a search_path that selects it: each store a
// test opens starts empty, without the cost of a database per test.
func schemaURL(t testing.TB) string {
	t.Helper()
	p := adminPool(t)
	name := "t_" + strings.ToLower(engram.NewID())
	if _, err := p.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := p.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return withParam(t, testURL(t), "search_path", name)
}

func withParam(t testing.TB, raw, key, value string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// openAt opens a store at url, closed when the test ends.
func openAt(t testing.TB, url string, opts postgres.Options) *postgres.DB {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	db, err := postgres.Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

// openFresh opens a store in an empty, migrated schema.
func openFresh(t testing.TB, opts postgres.Options) *postgres.DB {
	t.Helper()
	return openAt(t, emptiedURL(t), opts)
}

// spare holds migrated schemas that tests have finished with, emptied:
// creating and migrating a schema per test would take most of the suite's
// time.
var spare struct {
	sync.Mutex
	schemas []string
	all     []string
}

// emptiedURL returns the URL of a migrated schema without any rows, given
// back emptied when the test ends.
func emptiedURL(t testing.TB) string {
	t.Helper()
	p := adminPool(t)
	spare.Lock()
	var name string
	if n := len(spare.schemas); n > 0 {
		name, spare.schemas = spare.schemas[n-1], spare.schemas[:n-1]
	}
	spare.Unlock()
	if name == "" {
		name = "r_" + strings.ToLower(engram.NewID())
		if _, err := p.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
			t.Fatalf("create schema: %v", err)
		}
		spare.Lock()
		spare.all = append(spare.all, name)
		spare.Unlock()
	}
	t.Cleanup(func() {
		// Runs after the store's Close (cleanups run last first). A store
		// left open in a transaction would make this wait, hence the timeout.
		_, err := p.Exec(context.Background(), "SET lock_timeout = '5s'; TRUNCATE "+name+".episodes, "+name+".memories, "+
			name+".memory_versions, "+name+".audit, "+name+".memory_vectors, "+name+".change_counters, "+
			name+".changes, "+name+".meta, "+name+".jobs, "+name+".vault_keys, "+
			name+".entities, "+name+".entity_keys, "+name+".entity_mentions, "+name+".relations, "+name+".relation_evidence, "+
			name+".entity_versions, "+name+".identity_modalities, "+name+".identities, "+name+".identity_observations, "+name+".persons, "+name+".identity_events, "+name+".resources, "+name+".resource_chunks, "+name+".communities, "+name+".community_members, "+name+".community_sources, "+name+".graph_dirty")
		if err != nil {
			if !strings.Contains(err.Error(), "does not exist") { // never migrated
				t.Errorf("empty schema %s: %v", name, err)
			}
			return
		}
		spare.Lock()
		spare.schemas = append(spare.schemas, name)
		spare.Unlock()
	})
	return withParam(t, testURL(t), "search_path", name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	closeCorpora()
	if admin.pool != nil {
		for _, name := range spare.all {
			if _, err := admin.pool.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
				fmt.Fprintf(os.Stderr, "drop schema %s: %v\n", name, err)
				code = 1
			}
		}
		admin.pool.Close()
	}
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(t *testing.T) engram.Store { return openFresh(t, postgres.Options{}) })
}

func TestEngine(t *testing.T) {
	testURL(t)
	enginetest.Run(t, func(t *testing.T) engram.Store { return openFresh(t, postgres.Options{}) })
}

// count returns the number of rows of a table in the schema of url, read
// behind the store's back.
func count(t testing.TB, url, table, where string, args ...any) int {
	t.Helper()
	p, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var n int
	q := "SELECT count(*) FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	if err := p.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func wantCode(t testing.TB, what string, err error, code string) {
	t.Helper()
	if got := engram.ErrorCode(err); got != code {
		t.Errorf("%s: error code %q (%v), want %q", what, got, err, code)
	}
}

func mustUpdate(t testing.TB, st engram.Store, fn func(engram.Tx) error) {
	t.Helper()
	if err := st.Update(ctx, fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func ExampleOpen() {
	db, err := postgres.Open(context.Background(), "postgres://engram:secret@127.0.0.1:5432/engram", postgres.Options{})
	if err != nil {
		fmt.Println(engram.ErrorCode(err))
		return
	}
	defer db.Close()
}

// TestPlanCacheMode: connections plan every statement for its arguments
// unless the URL says otherwise.
func TestPlanCacheMode(t *testing.T) {
	u := emptiedURL(t)
	for _, c := range []struct{ url, want string }{
		{u, "force_custom_plan"},
		{withParam(t, u, "plan_cache_mode", "auto"), "auto"},
	} {
		db := openAt(t, c.url, postgres.Options{})
		if got, err := postgres.Setting(ctx, db, "plan_cache_mode"); err != nil || got != c.want {
			t.Errorf("plan_cache_mode = %q, %v; want %q", got, err, c.want)
		}
	}
}

// TestByIDPlans: the reads of memories and vectors by id, which every
// search runs, look each id up by primary key even when the statistics
// describe a table far smaller than it is (a table analysed while nearly
// empty, as a new server's is for its first minute): a join or scan
// planned on such statistics once read the whole table for a hundred ids.
func TestByIDPlans(t *testing.T) {
	u := emptiedURL(t)
	st := openAt(t, u, postgres.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	put := func(n int) []string {
		t.Helper()
		var ids []string
		err := st.Update(ctx, func(tx engram.Tx) error {
			for i := range n {
				m := storetest.Memory(ns, fmt.Sprintf("memory %d", i))
				if err := tx.InsertMemory(ctx, m); err != nil {
					return err
				}
				if err := tx.PutVectors(ctx, ns, m.ID, "e", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{0.6, 0.8}}}); err != nil {
					return err
				}
				ids = append(ids, m.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	p, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	put(3)
	if _, err := p.Exec(ctx, "ANALYZE memories, memory_vectors"); err != nil {
		t.Fatal(err)
	}
	ids := put(3000)[:100]
	for name, c := range map[string]struct {
		sql  string
		args []any
	}{
		"GetMemories": {postgres.GetMemoriesSQL, []any{ns.Tenant(), ids, []string{ns.User, ""}}},
		"GetVectors":  {postgres.GetVectorsSQL, []any{ns.Tenant(), ids, string(engram.StatusActive), "e", ns.User}},
	} {
		text := explain(t, p, c.sql, c.args)
		if strings.Contains(text, "Seq Scan on memor") || strings.Contains(text, "Hash Join") || !strings.Contains(text, "Index") {
			t.Errorf("%s: plan\n%s\nreads more than the ids' rows", name, text)
		}
	}
	// A page of ScanVectors reads each memory's vectors by key, also where
	// the statistics make a page large: joined as one set, the planner
	// hashes the whole vector table (Hash Right Join over a Seq Scan here).
	if _, err := p.Exec(ctx, "ANALYZE memories, memory_vectors"); err != nil {
		t.Fatal(err)
	}
	sql, args := postgres.VectorPageSQL(engram.ScopeOf(ns), "e", "", 10_000)
	if text := explain(t, p, sql, args); strings.Contains(text, "Seq Scan on memory_vectors") || strings.Contains(text, "Hash") ||
		!strings.Contains(text, "Index Scan using memory_vectors_pkey") {
		t.Errorf("ScanVectors page: plan\n%s\nreads the vectors other than by key", text)
	}
}

// TestFingerprintPlan: formation's lookup of a batch's fingerprints reads
// their index, not every memory of the user, in a namespace of thousands.
func TestFingerprintPlan(t *testing.T) {
	u := emptiedURL(t)
	st := openAt(t, u, postgres.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	err := st.Update(ctx, func(tx engram.Tx) error {
		for i := range 3000 {
			m := storetest.Memory(ns, fmt.Sprintf("turn %d", i))
			m.Kind, m.Metadata = engram.KindEpisodic, map[string]any{engram.MetaFingerprint: fmt.Sprintf("fp%d", i)}
			if err := tx.InsertMemory(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Exec(ctx, "ANALYZE memories"); err != nil {
		t.Fatal(err)
	}
	sql, args, err := postgres.ListMemoriesSQL(engram.ScopeOf(ns), engram.MemoryFilter{Kinds: []engram.Kind{engram.KindEpisodic}, Limit: engram.MaxLimit,
		MetadataIn: map[string][]any{engram.MetaFingerprint: {"fp7", "fp2999", "none"}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := explain(t, p, sql, args); !strings.Contains(text, "memories_by_fingerprint") || strings.Contains(text, "Seq Scan") {
		t.Errorf("fingerprint lookup: plan\n%s\nreads more than the index of fingerprints", text)
	}
	var got []engram.Memory
	if err := st.View(ctx, func(r engram.Reader) error {
		got, _, err = r.ListMemories(ctx, engram.ScopeOf(ns), engram.MemoryFilter{MetadataIn: map[string][]any{engram.MetaFingerprint: {"fp7", "fp2999", "none"}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("memories with fingerprints fp7, fp2999 or none: %d, want 2", len(got))
	}
}

// explain returns PostgreSQL's plan of sql with args, one line per step.
func explain(t *testing.T, p *pgxpool.Pool, sql string, args []any) string {
	t.Helper()
	rows, err := p.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

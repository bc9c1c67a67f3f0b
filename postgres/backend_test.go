package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/netproxy"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
)

var (
	nsU1 = engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	nsU2 = engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	scU1 = engram.ScopeOf(nsU1)
)

func TestMigrateIdempotent(t *testing.T) {
	u := schemaURL(t)
	db := openAt(t, u, postgres.Options{SkipMigrations: true})
	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatalf("Migrate on an empty schema: %v", err)
	}
	if want := migrationFiles(t); !slices.Equal(applied, want) {
		t.Errorf("Migrate on an empty schema applied %v, want %v", applied, want)
	}
	for i := range 2 {
		if applied, err := db.Migrate(ctx); err != nil || len(applied) != 0 {
			t.Errorf("Migrate #%d on an up-to-date schema = %v, %v; want nothing", i+2, applied, err)
		}
	}
	// Opening again applies nothing either, and the store works.
	again := openAt(t, u, postgres.Options{})
	storetest.Put(t, again, storetest.Memory(nsU1, "after migrating twice"))
	if n, want := count(t, u, "schema_migrations", ""), len(migrationFiles(t)); n != want {
		t.Errorf("schema_migrations has %d rows, want %d", n, want)
	}
}

func TestMigrateConcurrent(t *testing.T) {
	u := schemaURL(t)
	const servers = 4
	dbs := make([]*postgres.DB, servers)
	for i := range dbs {
		dbs[i] = openAt(t, u, postgres.Options{SkipMigrations: true})
	}
	var wg sync.WaitGroup
	applied := make([][]string, servers)
	errs := make([]error, servers)
	start := make(chan struct{})
	for i, db := range dbs {
		wg.Go(func() {
			<-start
			applied[i], errs[i] = db.Migrate(ctx)
		})
	}
	close(start)
	wg.Wait()
	// Each migration takes the lock on its own, so servers may share the
	// work (one applies 0001, another 0002 and 0003); what must hold is
	// that each is applied exactly once, and each server's in order.
	all := migrationFiles(t)
	times := map[string]int{}
	for i := range dbs {
		if errs[i] != nil {
			t.Errorf("server %d: Migrate: %v", i, errs[i])
		}
		if !slices.IsSorted(applied[i]) {
			t.Errorf("server %d applied %v, out of order", i, applied[i])
		}
		for _, name := range applied[i] {
			times[name]++
		}
	}
	for _, name := range all {
		if times[name] != 1 {
			t.Errorf("%s was applied %d times, want exactly 1 (applied: %v)", name, times[name], applied)
		}
	}
	// Plain Opens racing on a fresh schema all succeed too.
	u2 := schemaURL(t)
	for i := range servers {
		wg.Go(func() {
			db, err := postgres.Open(ctx, u2, postgres.Options{Logger: quiet})
			if err != nil {
				t.Errorf("concurrent Open %d: %v", i, err)
				return
			}
			db.Close()
		})
	}
	wg.Wait()
	if n, want := count(t, u2, "schema_migrations", ""), len(migrationFiles(t)); n != want {
		t.Errorf("after concurrent Opens schema_migrations has %d rows, want %d", n, want)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	u := schemaURL(t)
	openAt(t, u, postgres.Options{})
	p := adminPool(t)
	schema := mustSchema(t, u)
	if _, err := p.Exec(ctx, "INSERT INTO "+schema+".schema_migrations (version, name) VALUES (999, '0999_future.sql')"); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, u, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than") {
		t.Errorf("Open of a schema at version 999 = %v, want an error saying it is newer", err)
	}
}

func mustSchema(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{"postgres://x:y@127.0.0.1:notaport/db", "mysql://", "host=127.0.0.1 port=oops"} {
		_, err := postgres.Open(ctx, u, postgres.Options{})
		wantCode(t, "Open("+u+")", err, engram.EINVALID)
		if err != nil && strings.Contains(err.Error(), "y@") {
			t.Errorf("the error for %q shows the password: %v", u, err)
		}
	}
}

// withHost returns raw with its host:port replaced.
func withHost(t testing.TB, raw, hostport string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = hostport
	return u.String()
}

func TestUnreachableAtOpen(t *testing.T) {
	addr := netproxy.ClosedAddr(t)
	u := "postgres://engram:engram@" + addr + "/engram?sslmode=disable"
	start := time.Now()
	_, err := postgres.Open(ctx, u, postgres.Options{ConnectTimeout: 2 * time.Second})
	wantCode(t, "Open of an unreachable database", err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, addr) || !strings.Contains(msg, "unreachable") {
		t.Errorf("message %q does not say that the database at %s is unreachable", msg, addr)
	}
	if strings.Contains(engram.ErrorMessage(err), "engram:engram") {
		t.Errorf("message %q shows credentials", engram.ErrorMessage(err))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %v to give up", d)
	}
}

// TestConnectTimeout: a server that accepts connections but never answers
// is given up on after ConnectTimeout.
func TestConnectTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	start := time.Now()
	_, err = postgres.Open(ctx, "postgres://u:p@"+ln.Addr().String()+"/db?sslmode=disable", postgres.Options{ConnectTimeout: 300 * time.Millisecond})
	wantCode(t, "Open of a database that never answers", err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, ln.Addr().String()) || !strings.Contains(msg, "did not answer in time") {
		t.Errorf("message %q does not say the database at %s did not answer in time", msg, ln.Addr())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open gave up after %v with a connect timeout of 300ms", d)
	}
}

func TestDatabaseGoesAway(t *testing.T) {
	direct := schemaURL(t)
	pu, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	px := netproxy.Start(t, pu.Host)
	u := withHost(t, direct, px.Addr)
	db := openAt(t, u, postgres.Options{ConnectTimeout: 2 * time.Second})
	kept := storetest.Memory(nsU1, "written while the database was there")
	storetest.Put(t, db, kept)

	px.Cut()
	err = db.Ready(ctx)
	wantCode(t, "Ready without the database", err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, px.Addr) {
		t.Errorf("Ready's message %q does not name the database at %s", msg, px.Addr)
	}
	err = db.Update(ctx, func(tx engram.Tx) error { return tx.InsertMemory(ctx, storetest.Memory(nsU1, "lost")) })
	wantCode(t, "Update without the database", err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "unreachable") || !strings.Contains(msg, px.Addr) {
		t.Errorf("Update's message %q does not say the database at %s is unreachable", msg, px.Addr)
	}
	err = db.View(ctx, func(r engram.Reader) error {
		_, err := r.GetMemory(ctx, scU1, kept.ID)
		return err
	})
	wantCode(t, "View without the database", err, engram.EUNAVAILABLE)

	// The database comes back: the store recovers without a restart.
	px.Restore()
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready after the database came back: %v", err)
	}

	// The connection breaks in the middle of a transaction, after a write
	// (fn goes on), and just before the commit: nothing is kept.
	half1, half2 := storetest.Episode(nsU1, "first half"), storetest.Episode(nsU1, "second half")
	err = db.Update(ctx, func(tx engram.Tx) error {
		if err := tx.InsertEpisode(ctx, half1); err != nil {
			return err
		}
		px.Cut()
		return tx.InsertEpisode(ctx, half2)
	})
	wantCode(t, "Update cut in the middle", err, engram.EUNAVAILABLE)
	px.Restore()
	late := storetest.Episode(nsU1, "cut before commit")
	err = db.Update(ctx, func(tx engram.Tx) error {
		if err := tx.InsertEpisode(ctx, late); err != nil {
			return err
		}
		px.Cut()
		return nil
	})
	wantCode(t, "Update cut before the commit", err, engram.EUNAVAILABLE)
	px.Restore()
	for _, e := range []*engram.Episode{half1, half2, late} {
		err := db.View(ctx, func(r engram.Reader) error {
			_, err := r.GetEpisode(ctx, scU1, e.ID)
			return err
		})
		wantCode(t, "episode "+e.Content+" of a failed Update", err, engram.ENOTFOUND)
	}
	if n := count(t, direct, "episodes", ""); n != 0 {
		t.Errorf("%d episodes in the database after failed updates, want 0", n)
	}
	// And it works again.
	storetest.Put(t, db, storetest.Memory(nsU1, "after the outage"))
}

func TestStatementTimeout(t *testing.T) {
	u := schemaURL(t)
	db := openAt(t, u, postgres.Options{StatementTimeout: 200 * time.Millisecond})
	storetest.Put(t, db, storetest.Memory(nsU1, "locked away"))

	// Another session holds a lock on memories; the store's statements wait
	// for it until the statement timeout cancels them.
	p := adminPool(t)
	ltx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ltx.Rollback(context.Background())
	if _, err := ltx.Exec(ctx, "LOCK TABLE "+mustSchema(t, u)+".memories IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = db.View(ctx, func(r engram.Reader) error {
		_, err := r.SearchText(ctx, scU1, "locked", engram.MemoryFilter{}, 10)
		return err
	})
	wantCode(t, "search blocked past the statement timeout", err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "statement timeout") || !strings.Contains(msg, "200ms") {
		t.Errorf("message %q does not name the statement timeout of 200ms", msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a server-side timeout looks like the caller's deadline: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the blocked search returned after %v", d)
	}
	err = db.Update(ctx, func(tx engram.Tx) error { return tx.InsertMemory(ctx, storetest.Memory(nsU1, "blocked write")) })
	wantCode(t, "write blocked past the statement timeout", err, engram.EUNAVAILABLE)
	ltx.Rollback(ctx)
	if n := count(t, u, "memories", ""); n != 1 {
		t.Errorf("%d memories after the timed-out write, want 1", n)
	}

	// A caller's deadline stays the caller's: context.DeadlineExceeded.
	if _, err := p.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	ltx2, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ltx2.Rollback(context.Background())
	if _, err := ltx2.Exec(ctx, "LOCK TABLE "+mustSchema(t, u)+".memories IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	slow := openAt(t, u, postgres.Options{StatementTimeout: time.Minute})
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err = slow.View(dctx, func(r engram.Reader) error {
		_, err := r.SearchText(dctx, scU1, "locked", engram.MemoryFilter{}, 10)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("search past the caller's deadline: %v, want context.DeadlineExceeded", err)
	}
}

// TestTextIndex checks what the tsvector holds: lower-case words, CJK
// bigrams, no stemming, e-mail addresses and numbers split as the embedded
// store splits them, and the A/B/C weights of abstraction, cues and value.
func TestTextIndex(t *testing.T) {
	u := schemaURL(t)
	db := openAt(t, u, postgres.Options{})
	m := storetest.Memory(nsU1, "我昨天在北京吃了烤鸭。Running to ana@example.com, v2.5!")
	m.Abstraction = "Häuser in 東京"
	m.Cues = []string{"Ana", "コーヒー"}
	storetest.Put(t, db, m)
	var tsv string
	if err := adminPool(t).QueryRow(ctx, "SELECT tsv::text FROM "+mustSchema(t, u)+".memories WHERE id = $1", m.ID).Scan(&tsv); err != nil {
		t.Fatal(err)
	}
	for _, lex := range []string{"'häuser':1A", "'東京':3A", "'ana':", "'コー':", "'ーヒ':", "'ヒー':", "'北京':",
		"'烤鸭':", "'running':", "'example':", "'com':", "'v2':", "'5':"} {
		if !strings.Contains(tsv, lex) {
			t.Errorf("tsvector %s lacks %s", tsv, lex)
		}
	}
	for _, lex := range []string{"'run'", "'ana@example.com'", "'北京吃'", "'häus'", "'2.5'"} {
		if strings.Contains(tsv, lex) {
			t.Errorf("tsvector %s has %s", tsv, lex)
		}
	}
	if !strings.Contains(tsv, "'ana':4B") {
		t.Errorf("tsvector %s does not weigh the cue Ana B", tsv)
	}
	search := func(q string) []string {
		var ids []string
		err := db.View(ctx, func(r engram.Reader) error {
			hits, err := r.SearchText(ctx, scU1, q, engram.MemoryFilter{}, 10)
			for _, h := range hits {
				ids = append(ids, h.Memory.ID)
			}
			return err
		})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return ids
	}
	for q, want := range map[string]bool{
		"häuser": true, "HÄUSER": true, "haus": false, "run": false, "running": true, "example": true,
		"烤鸭": true, "北京烤鸭": false /* a phrase of bigrams, not adjacent here */, "コーヒー": true, "東京": true,
	} {
		if got := len(search(q)) == 1; got != want {
			t.Errorf("search %q finds the memory: %v, want %v", q, got, want)
		}
	}

	// A term in the abstraction outranks the same term in the value.
	inAbs, inValue := storetest.Memory(nsU1, "notes from the week"), storetest.Memory(nsU1, "we talked about the walrus")
	inAbs.Abstraction = "walrus"
	storetest.Put(t, db, inValue, inAbs)
	if got := search("walrus"); !slices.Equal(got, []string{inAbs.ID, inValue.ID}) {
		t.Errorf("search walrus = %v, want the abstraction match %s first", got, inAbs.ID)
	}
}

// TestSchemaLeadsWithTenant checks the sharding rule on the real schema:
// every primary key and index of a tenant table leads with the tenant.
func TestSchemaLeadsWithTenant(t *testing.T) {
	u := schemaURL(t)
	openAt(t, u, postgres.Options{})
	rows, err := adminPool(t).Query(ctx, `SELECT i.indexrelid::regclass::text, c.relname,
			(SELECT array_agg(a.attname ORDER BY k.ord) FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1`, mustSchema(t, u))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var index, table string
		var cols []string
		if err := rows.Scan(&index, &table, &cols); err != nil {
			t.Fatal(err)
		}
		seen++
		switch {
		case table == "meta" || table == "schema_migrations" || table == "api_keys":
			// Not tenant data: a reference table when sharded.
		case strings.HasSuffix(index, "memories_lapsing"):
			// The sweeper's index: it finds lapsed memories across
			// tenants by time (each shard holds its own part when sharded).
			if cols[0] != "expires_at" {
				t.Errorf("index %s on %v does not lead with expires_at", index, cols)
			}
		case table == "vault_keys" || strings.HasSuffix(index, "memories_by_key"):
			if !slices.Equal(cols[:2], []string{"org", "project"}) {
				t.Errorf("index %s on %v does not lead with org, project", index, cols)
			}
		case len(cols) == 0 || cols[0] != "tenant":
			t.Errorf("index %s of %s on %v does not lead with tenant", index, table, cols)
		}
		if strings.HasSuffix(index, "memories_text") && !slices.Equal(cols, []string{"tenant", "tsv"}) {
			t.Errorf("the full-text index is on %v, want (tenant, tsv) with btree_gin installed", cols)
		}
		if strings.HasSuffix(index, "memories_by_source") && !slices.Equal(cols, []string{"tenant", "sources"}) {
			t.Errorf("the sources index is on %v, want (tenant, sources) with btree_gin installed", cols)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Errorf("only %d indexes found", seen)
	}
}

// TestRefusedTextKeepsTransaction: text PostgreSQL cannot store is refused
// before it reaches the server, so the transaction stays usable, as in the
// embedded store.
func TestRefusedTextKeepsTransaction(t *testing.T) {
	db := openFresh(t, postgres.Options{})
	good := storetest.Memory(nsU1, "fine text")
	nul := storetest.Memory(nsU1, "nul \x00 inside")
	nulCue := storetest.Memory(nsU1, "cue with nul")
	nulCue.Cues = []string{"a\x00b"}
	nulMeta := storetest.Memory(nsU1, "metadata with nul")
	nulMeta.Metadata = map[string]any{"k": "v\x00"}
	nulEp := storetest.Episode(nsU1, "episode \x00")
	dup := storetest.Memory(nsU1, "duplicate")
	storetest.Put(t, db, dup)
	mustUpdate(t, db, func(tx engram.Tx) error {
		for _, m := range []*engram.Memory{nul, nulCue, nulMeta} {
			wantCode(t, "InsertMemory "+m.Value, tx.InsertMemory(ctx, m), engram.EINVALID)
		}
		wantCode(t, "InsertEpisode with NUL", tx.InsertEpisode(ctx, nulEp), engram.EINVALID)
		wantCode(t, "InsertMemory duplicate", tx.InsertMemory(ctx, dup), engram.ECONFLICT)
		wantCode(t, "SetMeta with NUL", tx.SetMeta(ctx, "k", "a\x00"), engram.EINVALID)
		return tx.InsertMemory(ctx, good)
	})
	err := db.View(ctx, func(r engram.Reader) error {
		_, err := r.GetMemory(ctx, scU1, good.ID)
		return err
	})
	if err != nil {
		t.Errorf("the memory written after refused ones was not kept: %v", err)
	}
	// A literal backslash-u0000 in text is not a NUL.
	odd := storetest.Memory(nsU1, `a literal \u0000 is fine`)
	odd.Metadata = map[string]any{"path": `C:\u0000`}
	storetest.Put(t, db, odd)
}

// TestNoLostUpdates: GetMemory inside Update locks the row, so concurrent
// read-modify-writes of one memory (two servers bumping its version) are
// serialised, not lost.
func TestNoLostUpdates(t *testing.T) {
	u := schemaURL(t)
	a, b := openAt(t, u, postgres.Options{}), openAt(t, u, postgres.Options{})
	m := storetest.Memory(nsU1, "counter")
	m.Version = 0
	storetest.Put(t, a, m)
	const each = 20
	var wg sync.WaitGroup
	for _, db := range []*postgres.DB{a, b} {
		wg.Go(func() {
			for range each {
				err := db.Update(ctx, func(tx engram.Tx) error {
					cur, err := tx.GetMemory(ctx, scU1, m.ID)
					if err != nil {
						return err
					}
					cur.Version++
					if err := tx.ReplaceMemory(ctx, cur); err != nil {
						return err
					}
					return tx.InsertVersion(ctx, storetest.Version(cur, cur.Version, engram.OpUpdate))
				})
				if err != nil {
					t.Errorf("Update: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	var got *engram.Memory
	err := a.View(ctx, func(r engram.Reader) error {
		var err error
		got, err = r.GetMemory(ctx, scU1, m.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2*each {
		t.Errorf("after %d increments by two stores the version is %d", 2*each, got.Version)
	}
}

func changes(t testing.TB, st engram.Store, s engram.Scope, after int64) ([]string, int64, error) {
	t.Helper()
	var ids []string
	var seq int64
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		ids, seq, err = r.Changes(ctx, s, after)
		return err
	})
	return ids, seq, err
}

func mustChanges(t testing.TB, st engram.Store, s engram.Scope, after int64) ([]string, int64) {
	t.Helper()
	ids, seq, err := changes(t, st, s, after)
	if err != nil {
		t.Fatalf("Changes(%+v, %d): %v", s, after, err)
	}
	return ids, seq
}

func sorted(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }

func TestChanges(t *testing.T) {
	db := openFresh(t, postgres.Options{})
	if ids, seq := mustChanges(t, db, scU1, -1); len(ids) != 0 || seq != 0 {
		t.Fatalf("Changes of a new store = %v, %d; want none, 0", ids, seq)
	}
	m1, m2 := storetest.Memory(nsU1, "one"), storetest.Memory(nsU1, "two")
	agentMem := storetest.Memory(engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "a", Session: "s"}, "agent's")
	other := storetest.Memory(nsU2, "another user")
	foreign := storetest.Memory(engram.Namespace{Org: "globex", Project: "app", User: "u1"}, "another tenant")
	storetest.Put(t, db, m1, m2, agentMem, other, foreign, storetest.Episode(nsU1, "episodes are not logged"))
	ids, s1 := mustChanges(t, db, scU1, 0)
	// One transaction: one number for the partition; agent and session are
	// ignored, other users and tenants are not included.
	if want := sorted(m1.ID, m2.ID, agentMem.ID); !slices.Equal(ids, want) || s1 != 1 {
		t.Errorf("Changes after 0 = %v, %d; want %v, 1", ids, s1, want)
	}
	if ids, _ := mustChanges(t, db, engram.Scope{Org: "acme", Project: "app", User: "u1", Agent: "zzz"}, 0); len(ids) != 3 {
		t.Errorf("Changes with an agent = %v; agent is ignored, want all 3", ids)
	}
	if ids, seq := mustChanges(t, db, scU1, s1); len(ids) != 0 || seq != s1 {
		t.Errorf("Changes after the latest = %v, %d; want none, %d", ids, seq, s1)
	}
	if ids, seq := mustChanges(t, db, scU1, -1); len(ids) != 0 || seq != s1 {
		t.Errorf("Changes(-1) = %v, %d; want none, %d", ids, seq, s1)
	}
	if ids, _ := mustChanges(t, db, engram.ScopeOf(nsU2), 0); !slices.Equal(ids, []string{other.ID}) {
		t.Errorf("u2's changes = %v, want %v", ids, []string{other.ID})
	}

	// Every kind of memory write is logged, each in its own number.
	step := func(what string, fn func(engram.Tx) error, want ...string) {
		t.Helper()
		_, before := mustChanges(t, db, scU1, -1)
		mustUpdate(t, db, fn)
		ids, seq := mustChanges(t, db, scU1, before)
		if !slices.Equal(ids, sorted(want...)) || seq != before+1 {
			t.Errorf("after %s: Changes = %v, %d; want %v, %d", what, ids, seq, sorted(want...), before+1)
		}
	}
	step("a replace", func(tx engram.Tx) error {
		r := *m1
		r.Status = engram.StatusDeleted
		return tx.ReplaceMemory(ctx, &r)
	}, m1.ID)
	step("a vector write", func(tx engram.Tx) error {
		return tx.PutVectors(ctx, nsU1, m2.ID, "emb", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{1, 2}}})
	}, m2.ID)
	step("a purge", func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, m1.ID) }, m1.ID)
	step("a scope purge", func(tx engram.Tx) error {
		_, err := tx.PurgeScope(ctx, engram.Scope{Org: "acme", Project: "app", User: "u1", Agent: "a"})
		return err
	}, agentMem.ID)
	_, before := mustChanges(t, db, scU1, -1)
	mustUpdate(t, db, func(tx engram.Tx) error {
		if err := tx.Touch(ctx, nsU1, []string{m2.ID}, storetest.T0); err != nil {
			return err
		}
		if err := tx.PurgeMemory(ctx, nsU1, engram.NewID()); err != nil { // nothing to purge
			return err
		}
		return tx.InsertAudit(ctx, storetest.Audit(nsU1, "x"))
	})
	if ids, seq := mustChanges(t, db, scU1, before); len(ids) != 0 || seq != before {
		t.Errorf("touch, an empty purge and audit changed %v (seq %d -> %d)", ids, before, seq)
	}
	// A rolled-back transaction takes no number.
	_ = db.Update(ctx, func(tx engram.Tx) error {
		if err := tx.InsertMemory(ctx, storetest.Memory(nsU1, "rolled back")); err != nil {
			return err
		}
		return errors.New("no")
	})
	if _, seq := mustChanges(t, db, scU1, -1); seq != before {
		t.Errorf("a rolled-back write moved the sequence from %d to %d", before, seq)
	}

	// Memory ids are unique per user, so a replace naming another user is
	// ENOTFOUND and tells nobody; one moving the memory to another agent
	// of its user tells that user.
	_, u1Before := mustChanges(t, db, scU1, -1)
	_, u2Before := mustChanges(t, db, engram.ScopeOf(nsU2), -1)
	moved := *m2
	moved.Namespace = nsU2
	err := db.Update(ctx, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &moved) })
	wantCode(t, "a replace naming another user", err, engram.ENOTFOUND)
	if ids, _ := mustChanges(t, db, engram.ScopeOf(nsU2), u2Before); len(ids) != 0 {
		t.Errorf("the other user's changes after a refused move = %v, want none", ids)
	}
	moved.Namespace = nsU1
	moved.Namespace.Agent = "a2"
	mustUpdate(t, db, func(tx engram.Tx) error { return tx.ReplaceMemory(ctx, &moved) })
	if ids, _ := mustChanges(t, db, scU1, u1Before); !slices.Equal(ids, []string{m2.ID}) {
		t.Errorf("the user's changes after a move to another agent = %v, want %v", ids, []string{m2.ID})
	}
	_, _, err = changes(t, db, engram.Scope{Org: "acme"}, 0)
	wantCode(t, "Changes with a bad scope", err, engram.EINVALID)
}

func TestChangesForgetOld(t *testing.T) {
	u := schemaURL(t)
	db := openAt(t, u, postgres.Options{ChangeLogKeep: 8})
	var all []string
	for i := range 30 {
		m := storetest.Memory(nsU1, fmt.Sprintf("memory %d", i))
		all = append(all, m.ID)
		storetest.Put(t, db, m)
	}
	_, latest := mustChanges(t, db, scU1, -1)
	if latest != 30 {
		t.Fatalf("latest = %d, want 30", latest)
	}
	// The last 8 numbers are always kept.
	ids, seq := mustChanges(t, db, scU1, latest-8)
	if want := sorted(all[len(all)-8:]...); !slices.Equal(ids, want) || seq != latest {
		t.Errorf("the last 8 changes = %v, %d; want %v, %d", ids, seq, want, latest)
	}
	// Older ones were pruned: asking for them is a conflict, never a silent
	// gap.
	_, _, err := changes(t, db, scU1, 1)
	wantCode(t, "Changes after a pruned number", err, engram.ECONFLICT)
	if n := count(t, u, "changes", ""); n > 8+2 {
		t.Errorf("%d change rows kept with ChangeLogKeep 8", n)
	}
}

// TestChangesInCommitOrder: writers on two stores commit concurrently
// while a reader follows Changes; every write is eventually reported, so no
// number became visible after a larger one was read.
func TestChangesInCommitOrder(t *testing.T) {
	u := schemaURL(t)
	writers := []*postgres.DB{openAt(t, u, postgres.Options{}), openAt(t, u, postgres.Options{})}
	reader := openAt(t, u, postgres.Options{})
	const perWriter = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	var written []string
	done := make(chan struct{})
	for _, db := range writers {
		for range 2 {
			wg.Go(func() {
				for i := range perWriter / 2 {
					m := storetest.Memory(nsU1, fmt.Sprintf("concurrent %d", i))
					storetest.Put(t, db, m)
					mu.Lock()
					written = append(written, m.ID)
					mu.Unlock()
				}
			})
		}
	}
	go func() { wg.Wait(); close(done) }()
	seen := map[string]bool{}
	var after int64
	poll := func() {
		ids, seq := mustChanges(t, reader, scU1, after)
		if seq < after {
			t.Fatalf("the sequence went back from %d to %d", after, seq)
		}
		for _, id := range ids {
			seen[id] = true
		}
		after = seq
	}
	for {
		select {
		case <-done:
			poll()
			for _, id := range written {
				if !seen[id] {
					t.Errorf("memory %s was written but never reported by Changes", id)
				}
			}
			if after != int64(len(written)) {
				t.Errorf("latest sequence %d after %d single-memory writes", after, len(written))
			}
			return
		default:
			poll()
		}
	}
}

func TestClosedStore(t *testing.T) {
	db, err := postgres.Open(ctx, schemaURL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = db.Migrate(ctx)
	wantCode(t, "Migrate after Close", err, engram.EUNAVAILABLE)
	err = db.Update(ctx, func(engram.Tx) error { return nil })
	wantCode(t, "Update after Close", err, engram.EUNAVAILABLE)
}

// migrationFiles lists the migrations in the migrations directory, in
// order, so that adding one needs no change here.
func migrationFiles(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("list migrations: %v (%d found)", err, len(names))
	}
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	slices.Sort(names)
	return names
}

package http_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/vault"
)

// vaultBackend is where a vault test keeps its data: a data directory for
// SQLite, a fresh schema of the test database for PostgreSQL (only when
// ENGRAM_TEST_POSTGRES_URL is set, as scripts/pg.sh does).
type vaultBackend struct {
	name string
	loc  func(t *testing.T) (loc, dir string)
}

func vaultBackends(t *testing.T) []vaultBackend {
	bs := []vaultBackend{{name: "sqlite", loc: func(t *testing.T) (string, string) {
		d := t.TempDir()
		return d, d
	}}}
	if u := os.Getenv("ENGRAM_TEST_POSTGRES_URL"); u != "" {
		bs = append(bs, vaultBackend{name: "postgres", loc: func(t *testing.T) (string, string) {
			return pgSchemaURL(t, u), t.TempDir()
		}})
	} else if os.Getenv("ENGRAM_REQUIRE_POSTGRES") == "1" {
		t.Fatal("ENGRAM_TEST_POSTGRES_URL is not set but ENGRAM_REQUIRE_POSTGRES=1; run the tests through scripts/pg.sh")
	}
	return bs
}

var pgAdmin struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
}

// pgSchemaURL makes an empty schema, dropped when the test ends, and
// returns base with a search_path selecting it.
func pgSchemaURL(t *testing.T, base string) string {
	t.Helper()
	ctx := context.Background()
	pgAdmin.once.Do(func() {
		if pgAdmin.pool, pgAdmin.err = pgxpool.New(ctx, base); pgAdmin.err == nil {
			_, pgAdmin.err = pgAdmin.pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public")
		}
	})
	if pgAdmin.err != nil {
		t.Fatalf("connect to the test database: %v", pgAdmin.err)
	}
	name := "v_" + strings.ToLower(engram.NewID())
	if _, err := pgAdmin.pool.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pgAdmin.pool.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// markerEmbedder embeds like fakeEmbedder and fails the test when asked to
// embed a text holding the marker, which only vault memories hold (never a
// query): vault memories must never be embedded.
type markerEmbedder struct {
	fakeEmbedder
	t      *testing.T
	marker string
}

func (m *markerEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, s := range texts {
		if strings.Contains(s, m.marker) {
			m.t.Errorf("the embedder was asked to embed a vault text: %q", s)
		}
	}
	return m.fakeEmbedder.Embed(ctx, texts)
}

// vaultEnv is an engine with a vault (and an embedder whose cache lives in
// the data directory) behind a real HTTP server with authentication.
type vaultEnv struct {
	eng    *engine.Engine
	srv    *httptest.Server
	loc    string
	dir    string
	master []byte
	keys   map[string]string // name -> secret
	ids    map[string]string // name -> key id
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func openVaultEngine(t *testing.T, loc, dir string, master []byte, marker string) (*engine.Engine, error) {
	t.Helper()
	opts := engine.Options{Logger: discardLogger(), AccessFlush: time.Hour}
	if master != nil {
		v, err := vault.New(master)
		if err != nil {
			t.Fatal(err)
		}
		opts.Vault = v
	}
	cache, err := embedcache.New(&markerEmbedder{fakeEmbedder: fakeEmbedder{dim: 8}, t: t, marker: marker},
		embedcache.Options{Path: filepath.Join(dir, "embeddings-cache.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	opts.Embedder = cache
	return storeopen.Engine(context.Background(), loc, opts)
}

func newVaultEnv(t *testing.T, b vaultBackend, master []byte, marker string) *vaultEnv {
	t.Helper()
	env := &vaultEnv{master: master, keys: map[string]string{}, ids: map[string]string{}}
	env.loc, env.dir = b.loc(t)
	eng, err := openVaultEngine(t, env.loc, env.dir, master, marker)
	if err != nil {
		t.Fatal(err)
	}
	env.eng = eng
	t.Cleanup(func() { eng.Close() })
	ks := engram.Keys{Store: eng.Store()}
	for _, k := range []struct{ name, org, role string }{
		{"read", "acme", engram.RoleRead}, {"write", "acme", engram.RoleWrite},
		{"admin", "acme", engram.RoleAdmin}, {"otherAdmin", "globex", engram.RoleAdmin},
	} {
		key, secret, err := ks.CreateKey(context.Background(), engram.KeySpec{Namespace: engram.Namespace{Org: k.org, Project: "app"}, Role: k.role})
		if err != nil {
			t.Fatal(err)
		}
		env.keys[k.name], env.ids[k.name] = secret, key.ID
	}
	env.srv = httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Keys: ks}))
	t.Cleanup(env.srv.Close)
	return env
}

// call sends a request with the named key and returns the response.
func (env *vaultEnv) call(t *testing.T, key, method, path, body string) rawResponse {
	t.Helper()
	return do(t, method, env.srv.URL+path, body, "Authorization", "Bearer "+env.keys[key])
}

func (env *vaultEnv) addVault(t *testing.T, key, org, value string) engram.Memory {
	t.Helper()
	body := mustJSON(t, map[string]any{
		"namespace": engram.Namespace{Org: org, Project: "app", User: "u1"},
		"memories": []map[string]any{{
			"kind": "vault", "value": value, "abstraction": "secret of " + value,
			"cues": []string{"cue " + value}, "metadata": map[string]any{"hint": "meta " + value},
		}},
	})
	r := env.call(t, key, "POST", "/v1/memories", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("add vault memory: %d %s", r.Status, r.Body)
	}
	var out struct{ Memories []engram.Memory }
	if err := json.Unmarshal(r.Body, &out); err != nil || len(out.Memories) != 1 {
		t.Fatalf("add vault memory: %s (%v)", r.Body, err)
	}
	return out.Memories[0]
}

const acme = "org=acme&project=app&user=u1"

// TestVault runs the vault's behaviour through the HTTP server on each
// backend.
func TestVault(t *testing.T) {
	for _, b := range vaultBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Run("AtRestAndAccess", func(t *testing.T) { testVaultAtRest(t, b) })
			t.Run("TamperAndTenants", func(t *testing.T) { testVaultTamper(t, b) })
			t.Run("NoMasterKey", func(t *testing.T) { testVaultNoKey(t, b) })
			t.Run("WrongMasterKey", func(t *testing.T) { testVaultWrongKey(t, b) })
			t.Run("ExportImport", func(t *testing.T) { testVaultExport(t, b) })
			t.Run("Client", func(t *testing.T) { testVaultClient(t, b) })
		})
	}
}

func testVaultAtRest(t *testing.T, b vaultBackend) {
	marker, hidden := "VAULTMARK"+randomHex(t, 8), "HIDDEN"+randomHex(t, 8)
	env := newVaultEnv(t, b, []byte(randomHex(t, 16)), hidden)
	secret := "Reisepass 护照 " + marker + " " + hidden
	m := env.addVault(t, "write", "acme", secret)
	if m.Value != secret || m.Kind != engram.KindVault {
		t.Fatalf("the writer got back %+v", m)
	}
	plain := env.call(t, "write", "POST", "/v1/memories", mustJSON(t, map[string]any{
		"namespace": engram.Namespace{Org: "acme", Project: "app", User: "u1"},
		"memories":  []map[string]any{{"value": "my passport is in the drawer"}},
	}))
	if plain.Status != http.StatusCreated {
		t.Fatalf("add: %d %s", plain.Status, plain.Body)
	}

	// Without asking for the vault, nothing shows it, whatever the role.
	for _, key := range []string{"read", "admin"} {
		for _, q := range []string{"passport", marker, "Reisepass", "护照"} {
			r := env.call(t, key, "POST", "/v1/search", mustJSON(t, map[string]any{
				"scope": engram.Scope{Org: "acme", Project: "app", User: "u1"}, "query": q}))
			if r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(m.ID)) || bytes.Contains(r.Body, []byte(marker)) {
				t.Errorf("%s search %q without vault: %d %s", key, q, r.Status, r.Body)
			}
		}
		if r := env.call(t, key, "GET", "/v1/memories?"+acme, ""); r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(m.ID)) {
			t.Errorf("%s list without vault: %d %s", key, r.Status, r.Body)
		}
		if r := env.call(t, key, "GET", "/v1/memories/"+m.ID+"?"+acme, ""); r.Status != http.StatusNotFound {
			t.Errorf("%s get without vault: %d %s", key, r.Status, r.Body)
		}
		if r := env.call(t, key, "GET", "/v1/memories/"+m.ID+"/history?"+acme, ""); r.Status != http.StatusNotFound {
			t.Errorf("%s history without vault: %d %s", key, r.Status, r.Body)
		}
	}

	// Keys that may not read the vault get 403 when they ask.
	for _, key := range []string{"read", "write"} {
		for _, req := range [][3]string{
			{"GET", "/v1/memories/" + m.ID + "?vault=true&" + acme, ""},
			{"GET", "/v1/memories?vault=true&" + acme, ""},
			{"POST", "/v1/search", mustJSON(t, map[string]any{"scope": engram.Scope{Org: "acme", Project: "app", User: "u1"}, "query": "Reisepass", "vault": true})},
			{"GET", "/v1/export?vault=true&" + acme, ""},
			{"GET", "/v1/memories/" + m.ID + "/history?vault=true&" + acme, ""},
			{"POST", "/v1/memories/list", mustJSON(t, map[string]any{"scope": engram.Scope{Org: "acme", Project: "app", User: "u1"}, "vault": true})},
		} {
			r := env.call(t, key, req[0], req[1], req[2])
			if r.Status != http.StatusForbidden || bytes.Contains(r.Body, []byte(marker)) {
				t.Errorf("%s key %s %s: %d %s, want 403", key, req[0], req[1], r.Status, r.Body)
			}
		}
	}

	// An admin key asking gets it, decrypted, and each read is audited.
	r := env.call(t, "admin", "GET", "/v1/memories/"+m.ID+"?vault=true&"+acme, "")
	var got engram.Memory
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil {
		t.Fatalf("admin get with vault: %d %s", r.Status, r.Body)
	}
	if got.Value != secret || got.Abstraction != "secret of "+secret || !slices.Equal(got.Cues, []string{"cue " + secret}) || got.Metadata["hint"] != "meta "+secret {
		t.Errorf("admin get with vault = %+v", got)
	}
	for _, q := range []string{"护照", "reisepass", marker} {
		r = env.call(t, "admin", "POST", "/v1/search", mustJSON(t, map[string]any{
			"scope": engram.Scope{Org: "acme", Project: "app", User: "u1"}, "query": q, "vault": true}))
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(m.ID)) || bytes.Contains(r.Body, []byte("drawer")) {
			t.Errorf("admin vault search %q: %d %s", q, r.Status, r.Body)
		}
	}
	if r = env.call(t, "admin", "GET", "/v1/memories?vault=true&"+acme, ""); !bytes.Contains(r.Body, []byte(marker)) {
		t.Errorf("admin list with vault: %d %s", r.Status, r.Body)
	}
	r = env.call(t, "admin", "GET", "/v1/audit?op=vault.read&"+acme, "")
	var audit engram.AuditPage
	if err := json.Unmarshal(r.Body, &audit); err != nil {
		t.Fatalf("audit: %d %s", r.Status, r.Body)
	}
	hows := map[string]bool{}
	for _, a := range audit.Entries {
		if slices.Contains(a.IDs, m.ID) && strings.Contains(a.Detail, "key "+env.ids["admin"]) {
			hows[strings.Fields(a.Detail)[0]] = true
		}
	}
	for _, how := range []string{"get", "search", "list"} {
		if !hows[how] {
			t.Errorf("no vault.read audit entry for %s naming the admin key: %s", how, r.Body)
		}
	}

	// The plaintext is in no file of the data directory, nor in any table.
	if err := env.eng.FlushAccess(context.Background()); err != nil {
		t.Fatal(err)
	}
	scanForMarker(t, env, marker)
	scanForMarker(t, env, hidden)
}

// scanForMarker fails if marker is in a file of the data directory (the
// SQLite database, its WAL and shared memory, the embedding cache) or, on
// PostgreSQL, in any row of the store's schema.
func scanForMarker(t *testing.T, env *vaultEnv, marker string) {
	t.Helper()
	files := 0
	err := filepath.Walk(env.dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, []byte(marker)) {
			t.Errorf("the plaintext marker is in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no files in the data directory %s", env.dir)
	}
	if !strings.HasPrefix(env.loc, "postgres") {
		return
	}
	u, _ := url.Parse(env.loc)
	schema := u.Query().Get("search_path")
	rows, err := pgAdmin.pool.Query(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) < 5 {
		t.Fatalf("only tables %v in schema %s", tables, schema)
	}
	for _, tb := range tables {
		var n int
		q := "SELECT count(*) FROM " + schema + "." + tb + " t WHERE t::text LIKE '%' || $1 || '%' OR t::text LIKE '%' || $2 || '%'"
		if err := pgAdmin.pool.QueryRow(context.Background(), q, marker, hex.EncodeToString([]byte(marker))).Scan(&n); err != nil {
			t.Fatalf("scan %s: %v", tb, err)
		}
		if n > 0 {
			t.Errorf("the plaintext marker is in %d rows of table %s", n, tb)
		}
	}
}

// replaceStored overwrites the stored (sealed) form of memory id of n's
// tenant with what edit makes of it, behind the server's back.
func replaceStored(t *testing.T, st engram.Store, n engram.Namespace, id string, edit func(m *engram.Memory)) {
	t.Helper()
	err := st.Update(context.Background(), func(tx engram.Tx) error {
		m, err := tx.GetMemory(context.Background(), engram.ScopeOf(n), id)
		if err != nil {
			return err
		}
		edit(m)
		return tx.ReplaceMemory(context.Background(), m)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func storedValue(t *testing.T, st engram.Store, n engram.Namespace, id string) string {
	t.Helper()
	var v string
	err := st.View(context.Background(), func(r engram.Reader) error {
		m, err := r.GetMemory(context.Background(), engram.ScopeOf(n), id)
		if err == nil {
			v = m.Value
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testVaultTamper(t *testing.T, b vaultBackend) {
	marker := "TAMPER" + randomHex(t, 8)
	env := newVaultEnv(t, b, []byte(randomHex(t, 16)), marker)
	a := env.addVault(t, "write", "acme", "acme "+marker)
	a2 := env.addVault(t, "write", "acme", "acme second "+marker)
	g := env.addVault(t, "otherAdmin", "globex", "globex "+marker)
	nsA := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	nsG := engram.Namespace{Org: "globex", Project: "app", User: "u1"}
	st := env.eng.Store()
	orig := storedValue(t, st, nsA, a.ID)
	if !strings.HasPrefix(orig, "vault:v1:") || strings.Contains(orig, marker) {
		t.Fatalf("stored value %q is not sealed", orig)
	}

	readA := func(what string) {
		t.Helper()
		r := env.call(t, "admin", "GET", "/v1/memories/"+a.ID+"?vault=true&"+acme, "")
		if r.Status != http.StatusInternalServerError || bytes.Contains(r.Body, []byte(marker)) {
			t.Errorf("%s: read answered %d %s, want 500", what, r.Status, r.Body)
		}
		r = env.call(t, "admin", "POST", "/v1/search", mustJSON(t, map[string]any{"scope": engram.Scope{Org: "acme", Project: "app", User: "u1"}, "query": marker, "vault": true}))
		if r.Status != http.StatusInternalServerError {
			t.Errorf("%s: vault search answered %d %s, want 500", what, r.Status, r.Body)
		}
	}
	// One bit of the ciphertext flipped.
	replaceStored(t, st, nsA, a.ID, func(m *engram.Memory) {
		i := len(m.Value) - 5
		c := byte('A')
		if m.Value[i] == 'A' {
			c = 'B'
		}
		m.Value = m.Value[:i] + string(c) + m.Value[i+1:]
	})
	readA("a flipped ciphertext byte")
	// Another memory's ciphertext, same tenant and key: the id is bound.
	replaceStored(t, st, nsA, a.ID, func(m *engram.Memory) { m.Value = storedValue(t, st, nsA, a2.ID) })
	readA("the ciphertext of another memory")
	// Tenant globex's ciphertext on acme's memory: acme's data key cannot
	// open it.
	replaceStored(t, st, nsA, a.ID, func(m *engram.Memory) { m.Value = storedValue(t, st, nsG, g.ID) })
	readA("the ciphertext of another tenant")
	// Restored, it reads again.
	replaceStored(t, st, nsA, a.ID, func(m *engram.Memory) { m.Value = orig })
	if r := env.call(t, "admin", "GET", "/v1/memories/"+a.ID+"?vault=true&"+acme, ""); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(marker)) {
		t.Errorf("restored ciphertext: %d %s", r.Status, r.Body)
	}
	// A key of one tenant cannot name the other.
	if r := env.call(t, "otherAdmin", "GET", "/v1/memories/"+a.ID+"?vault=true&"+acme, ""); r.Status != http.StatusForbidden {
		t.Errorf("globex key reading acme: %d %s", r.Status, r.Body)
	}
}

func testVaultNoKey(t *testing.T, b vaultBackend) {
	marker := "NOKEY" + randomHex(t, 8)
	env := newVaultEnv(t, b, nil, marker)
	r := env.call(t, "write", "POST", "/v1/memories", mustJSON(t, map[string]any{
		"namespace": engram.Namespace{Org: "acme", Project: "app", User: "u1"},
		"memories":  []map[string]any{{"value": "plain " + marker}, {"kind": "vault", "value": "secret " + marker}},
	}))
	if r.Status != http.StatusServiceUnavailable || !bytes.Contains(r.Body, []byte("ENGRAM_VAULT_KEY")) || !bytes.Contains(r.Body, []byte("memories[1]")) {
		t.Errorf("vault write without a master key: %d %s", r.Status, r.Body)
	}
	page, err := env.eng.ListMemories(engram.WithVault(context.Background(), "test"), engram.Scope{Org: "acme", Project: "app"}, engram.MemoryFilter{})
	if err != nil || len(page.Memories) != 0 {
		t.Errorf("after the refused write the store holds %v (%v)", page, err)
	}
	scanForMarker(t, env, marker)
}

func testVaultWrongKey(t *testing.T, b vaultBackend) {
	marker := "WRONG" + randomHex(t, 8)
	env := newVaultEnv(t, b, []byte(randomHex(t, 16)), marker)
	env.addVault(t, "write", "acme", marker)
	env.srv.Close()
	if err := env.eng.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := openVaultEngine(t, env.loc, env.dir, []byte(randomHex(t, 16)), marker)
	if err == nil || !strings.Contains(err.Error(), "master key") {
		t.Fatalf("an engine with another master key started: %v", err)
	}
	e, err := openVaultEngine(t, env.loc, env.dir, env.master, marker)
	if err != nil {
		t.Fatalf("the right master key: %v", err)
	}
	e.Close()
}

func testVaultExport(t *testing.T, b vaultBackend) {
	marker := "EXPORT" + randomHex(t, 8)
	env := newVaultEnv(t, b, []byte(randomHex(t, 16)), marker)
	m := env.addVault(t, "write", "acme", marker)
	r := env.call(t, "admin", "GET", "/v1/export?"+acme, "")
	if r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(`"id":"`+m.ID)) || bytes.Contains(r.Body, []byte(`"memory_id":"`+m.ID)) || bytes.Contains(r.Body, []byte("vault:v1:")) {
		t.Errorf("export without vault: %d %s", r.Status, r.Body)
	}
	r = env.call(t, "admin", "GET", "/v1/export?vault=true&"+acme, "")
	if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(marker)) || bytes.Contains(r.Body, []byte("vault:v1:")) {
		t.Errorf("export with vault: %d %s", r.Status, r.Body)
	}
	exported := r.Body
	a := env.call(t, "admin", "GET", "/v1/audit?op=vault.read&"+acme, "")
	if !bytes.Contains(a.Body, []byte(`"detail":"export by key `+env.ids["admin"])) {
		t.Errorf("no audit entry of the export: %s", a.Body)
	}
	r = do(t, "POST", env.srv.URL+"/v1/import?"+acme, string(exported),
		"Authorization", "Bearer "+env.keys["admin"], "Content-Type", engramhttp.NDJSONType)
	if r.Status != http.StatusBadRequest || !bytes.Contains(r.Body, []byte("vault")) {
		t.Errorf("import of vault records: %d %s", r.Status, r.Body)
	}
}

// testVaultClient: the Go client asks for the vault when its context
// carries engram.WithVault, as a caller of the engine does.
func testVaultClient(t *testing.T, b vaultBackend) {
	marker := "CLIENT" + randomHex(t, 8)
	env := newVaultEnv(t, b, []byte(randomHex(t, 16)), marker)
	m := env.addVault(t, "write", "acme", marker)
	sc := engram.Scope{Org: "acme", Project: "app", User: "u1"}
	ctx := context.Background()
	vctx := engram.WithVault(ctx, "client")
	admin := engramhttp.NewClient(env.srv.URL, engramhttp.ClientOptions{Key: env.keys["admin"]})
	reader := engramhttp.NewClient(env.srv.URL, engramhttp.ClientOptions{Key: env.keys["read"]})
	if _, err := admin.GetMemory(ctx, sc, m.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("client get without vault: %v", err)
	}
	if got, err := admin.GetMemory(vctx, sc, m.ID); err != nil || got.Value != marker {
		t.Errorf("client get with vault = %+v, %v", got, err)
	}
	if page, err := admin.ListMemories(vctx, sc, engram.MemoryFilter{IDs: []string{m.ID}}); err != nil || len(page.Memories) != 1 || page.Memories[0].Value != marker {
		t.Errorf("client list with vault = %+v, %v", page, err)
	}
	if vs, err := admin.History(vctx, sc, m.ID); err != nil || len(vs) != 1 || vs[0].New.Value != marker {
		t.Errorf("client history with vault = %+v, %v", vs, err)
	}
	if _, err := reader.GetMemory(vctx, sc, m.ID); engram.ErrorCode(err) != engram.EFORBIDDEN {
		t.Errorf("read-key client get with vault: %v, want EFORBIDDEN", err)
	}
	if err := admin.DeleteMemory(vctx, sc, m.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Errorf("client hard delete with vault: %v", err)
	}
}

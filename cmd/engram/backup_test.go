package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// post sends a JSON body to a server without keys and decodes its 2xx
// answer into out.
func post(t *testing.T, base, path string, body, out any) error {
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: status %d", path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// liveMemoryIDs lists the ids of the active memories of user in o/p, every
// page.
func liveMemoryIDs(t *testing.T, base, user string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	cursor := ""
	for {
		q := url.Values{"org": {"o"}, "project": {"p"}, "user": {user}, "limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		resp, err := http.Get(base + "/v1/memories?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Memories []struct{ ID string } `json:"memories"`
			Next     string                `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Memories {
			ids[m.ID] = true
		}
		if cursor = page.Next; cursor == "" {
			return ids
		}
	}
}

// searchIDs is the ids of the hits of query over user, in rank order.
func searchIDs(t *testing.T, base, user, query string) []string {
	t.Helper()
	var res struct {
		Hits []struct {
			Memory struct{ ID string } `json:"memory"`
		} `json:"hits"`
	}
	req := map[string]any{"scope": map[string]string{"org": "o", "project": "p", "user": user}, "query": query, "k": 5}
	if err := post(t, base, "/v1/search", req, &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

// TestBackupUnderWritesRestores: a backup taken from a running server while
// four clients keep adding holds every add acknowledged before it began; the
// restored data directory serves the same search answers, keeps the API
// key, and restore refuses a directory that is not empty unless --force.
func TestBackupUnderWritesRestores(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	data, out, restored := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "backup"), filepath.Join(t.TempDir(), "restored")
	c := &cli{t: t, env: env}
	keyOut := c.ok("keys", "create", "--data", data, "--org", "o", "--project", "p", "--role", "read", "--name", "kept")
	srv := startServer(t, data, env, "--rate-limit", "0", "--max-concurrent", "0")

	facts := []string{"Ann plays the cello on Sundays.", "Ich wohne seit Mai in Hamburg.", "Mi hermana vive en Sevilla.",
		"J'ai adopté un chat nommé Miso.", "我每天早上喝绿茶。", "Ann's dentist is Dr. Okafor.", "Ann runs five marathons a year."}
	var seeded struct{ Memories []struct{ ID string } }
	mems := []map[string]string{}
	for _, f := range facts {
		mems = append(mems, map[string]string{"kind": "semantic", "value": f})
	}
	if err := post(t, srv.url, "/v1/memories", map[string]any{"namespace": map[string]string{"org": "o", "project": "p", "user": "ann"}, "memories": mems}, &seeded); err != nil {
		t.Fatal(err)
	}
	queries := []string{"cello", "Hamburg", "Sevilla", "chat Miso", "绿茶", "dentist", "marathons"}
	before := map[string][]string{}
	for _, q := range queries {
		before[q] = searchIDs(t, srv.url, "ann", q)
	}

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := map[string]string{"org": "o", "project": "p", "user": fmt.Sprintf("w%d", w)}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var res struct{ Memories []struct{ ID string } }
				body := map[string]any{"namespace": ns, "memories": []map[string]string{{"kind": "semantic", "value": fmt.Sprintf("writer %d note %d", w, i)}}}
				if err := post(t, srv.url, "/v1/memories", body, &res); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				mu.Lock()
				acked = append(acked, res.Memories[0].ID)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	ackedBefore := slices.Clone(acked)
	mu.Unlock()
	c.ok("backup", "--data", data, "--out", out)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	mu.Lock()
	t.Logf("%d adds acknowledged before the backup began, %d in all", len(ackedBefore), len(acked))
	mu.Unlock()
	if len(ackedBefore) == 0 {
		t.Fatal("no write was acknowledged before the backup; the test tests nothing")
	}
	srv.stop(t)
	checkIndexFilesRestored(t, c, env, data, before)

	if stderr := c.fail(1, "restore", "--backup", out, "--data", data); !strings.Contains(stderr, "not empty") {
		t.Errorf("restore into the live data directory: stderr %q", stderr)
	}
	c.ok("restore", "--backup", out, "--data", restored)
	back := startServer(t, restored, env)
	have := map[string]bool{}
	for w := range 4 {
		for id := range liveMemoryIDs(t, back.url, fmt.Sprintf("w%d", w)) {
			have[id] = true
		}
	}
	for _, id := range ackedBefore {
		if !have[id] {
			t.Errorf("memory %s, acknowledged before the backup began, is not in the restore", id)
		}
	}
	for _, q := range queries {
		if got := searchIDs(t, back.url, "ann", q); !slices.Equal(got, before[q]) || len(got) == 0 {
			t.Errorf("search %q: restored %v, original %v", q, got, before[q])
		}
	}
	back.stop(t)
	if keys := c.ok("keys", "list", "--data", restored, "--org", "o", "--project", "p"); !strings.Contains(keys, "kept") {
		t.Errorf("the API key is not in the restore (created: %s; listed: %s)", keyOut, keys)
	}
	c.ok("restore", "--backup", out, "--data", restored, "--force")
	if err := os.WriteFile(filepath.Join(out, "engram.db"), []byte("torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stderr := c.fail(1, "restore", "--backup", out, "--data", filepath.Join(t.TempDir(), "x")); !strings.Contains(stderr, "engram.db") {
		t.Errorf("a changed backup file: stderr %q", stderr)
	}
}

// checkIndexFilesRestored backs up the data directory of a stopped server,
// which saved its index files on the way out: the backup holds them, and a
// server over its restore (from a backup to a .tar file) loads them and
// answers the searches of before.
func checkIndexFilesRestored(t *testing.T, c *cli, env []string, data string, before map[string][]string) {
	t.Helper()
	out, restored := filepath.Join(t.TempDir(), "backup"), filepath.Join(t.TempDir(), "restored")
	c.ok("backup", "--data", data, "--out", out)
	var man struct{ Files map[string]string }
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "MANIFEST.json"))), &man); err != nil {
		t.Fatal(err)
	}
	indexFiles := 0
	for name := range man.Files {
		if strings.HasPrefix(name, "ann/") {
			indexFiles++
		}
	}
	if indexFiles == 0 || man.Files["engram.db"] == "" {
		t.Fatalf("the backup of a stopped server's directory holds %d index files: %v", indexFiles, man.Files)
	}
	tarred := filepath.Join(t.TempDir(), "engram.tar")
	c.ok("backup", "--data", data, "--out", tarred)
	c.ok("restore", "--backup", tarred, "--data", restored)
	srv := startServer(t, restored, env)
	defer srv.stop(t)
	for q, want := range before {
		if got := searchIDs(t, srv.url, "ann", q); !slices.Equal(got, want) {
			t.Errorf("search %q over the restored index files: %v, before %v", q, got, want)
		}
	}
}

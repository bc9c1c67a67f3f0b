package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// storeScope is one scope the migration tests fill and compare.
type storeScope struct{ org, project, user string }

var migrateScopes = []storeScope{
	{"default", "default", "ann"},
	{"default", "default", "bob"},
	{"default", "default", ""},
	{"globex", "p2", "ann"},
}

func (s storeScope) flags() []string {
	return []string{"--org", s.org, "--project", s.project, "--user", s.user}
}

// fillStore writes records of every kind, with history, into several
// tenants and users through c, whose embedder is use-lite.
func fillStore(t *testing.T, c *cli) {
	t.Helper()
	for _, s := range migrateScopes {
		args := append([]string{"add"}, s.flags()...)
		c.ok(append(args, "--role", "user", "--meta", "lang=en", "I moved to Lisbon in May", "My cat is called Miso")...)
		var mems engram.MemoryPage
		c.json(&mems, append(append([]string{"add", "--memory"}, s.flags()...), "Ann adopted a beagle puppy called Biscuit", "The quarterly report is due on Monday")...)
		id := mems.Memories[1].ID
		c.ok(append(append([]string{"update"}, s.flags()...), id, "--value", "The quarterly report is due on Friday", "--reason", "moved")...)
		c.ok(append(append([]string{"delete"}, s.flags()...), mems.Memories[0].ID)...)
		c.ok(append(append([]string{"restore"}, s.flags()...), mems.Memories[0].ID)...)
	}
	// Resources: a recording of more than one chunk, carried by an episode
	// with a German transcript, and a Chinese document split into memories.
	ann := migrateScopes[0]
	dir := t.TempDir()
	for name, content := range map[string][]byte{"call.mp3": migrateAudio, "笔记.md": []byte("# 笔记\n\n长城很长。\n")} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		var r engram.Resource
		c.json(&r, append(append([]string{"resources", "add"}, ann.flags()...), p)...)
		if name == "call.mp3" {
			c.ok(append(append([]string{"add"}, ann.flags()...), "--media", r.ID+":audio:0-42", "--transcript", "Wir sehen uns am Bahnhof.", "Ann rief an")...)
		}
	}
	// Identities of two users: faces observed in an episode, one linked
	// to a person with an alias.
	for _, s := range []storeScope{ann, migrateScopes[3]} {
		var added engram.AddEpisodesResult
		c.json(&added, append(append([]string{"add"}, s.flags()...), "--role", "user", "Der Drachen ist im Baum hängen geblieben.")...)
		out := c.ok(append(append([]string{"identities", "observe"}, s.flags()...), observationsFile(t, added.Episodes[0].ID))...)
		face := strings.Fields(out)[3]
		var p engram.Person
		c.json(&p, append(append([]string{"identities", "link"}, s.flags()...), "--name", "Lukas", face)...)
		c.ok(append(append([]string{"identities", "link"}, s.flags()...), "--person", p.ID, "--name", "Luki")...)
	}
}

// migrateAudio is the content of a resource of more than one chunk.
var migrateAudio = bytes.Repeat([]byte("ID3 \x00\x01\xfe Ton "), engram.ResourceChunkBytes/8)

// checkResources fails unless migrate-store reported copying the two
// resources of fillStore and the copy c reads serves the recording
// byte-identical.
func checkResources(t *testing.T, out string, c *cli) {
	t.Helper()
	if !strings.Contains(out, "copied 2 resources") {
		t.Errorf("migrate-store printed %q, want it to report 2 resources copied", out)
	}
	var page engram.ResourcePage
	c.json(&page, append([]string{"resources", "list"}, migrateScopes[0].flags()...)...)
	for _, r := range page.Resources {
		if r.Name != "call.mp3" {
			continue
		}
		got := c.ok(append(append([]string{"resources", "download"}, migrateScopes[0].flags()...), r.ID)...)
		if got != string(migrateAudio) {
			t.Errorf("the copied recording downloads as %d bytes, want the %d of the source", len(got), len(migrateAudio))
		}
		return
	}
	t.Errorf("the copy lists no recording: %+v", page)
}

// exports returns the export of every test scope through c.
func exports(t *testing.T, c *cli) map[storeScope]string {
	t.Helper()
	out := map[storeScope]string{}
	for _, s := range migrateScopes {
		out[s] = c.ok(append([]string{"export"}, s.flags()...)...)
		if out[s] == "" {
			t.Fatalf("export of %+v is empty", s)
		}
	}
	return out
}

// summaryTable returns the table migrate-store printed, failing unless
// every kind it copied was found, and every count and checksum matches.
func summaryTable(t *testing.T, out string) string {
	t.Helper()
	ls := lines(out)
	if len(ls) < 13 || !strings.HasPrefix(ls[0], "KIND") || !strings.Contains(ls[len(ls)-1], "counts and checksums match") {
		t.Fatalf("migrate-store printed:\n%s", out)
	}
	// The six kinds of a dump, then the five of identities.
	for _, l := range ls[1:12] {
		f := strings.Fields(l)
		if len(f) != 5 || f[1] != f[2] || f[3] != f[4] || f[1] == "0" {
			t.Errorf("migrate-store row %q: want equal, non-zero counts and equal checksums", l)
		}
	}
	return strings.Join(ls[:12], "\n")
}

// denseSearch fails unless a search through c finds the beagle memory by
// the dense channel, which needs the vectors and the embedder record.
func denseSearch(t *testing.T, c *cli) {
	t.Helper()
	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "--explain", "what kind of dog does she have")
	if len(sr.Hits) == 0 || !strings.Contains(sr.Hits[0].Memory.Value, "beagle") {
		t.Fatalf("search hits = %+v, want the beagle memory first", sr.Hits)
	}
	dense := false
	for _, ch := range sr.Hits[0].Explain {
		dense = dense || ch.Channel == "dense"
	}
	if !dense {
		t.Errorf("top hit not found by the dense channel: %+v", sr.Hits[0].Explain)
	}
}

func useLite(t *testing.T, extra ...string) *cli {
	return &cli{t: t, env: append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite"), extra: extra}
}

func TestMigrateStoreSQLite(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	srcDir, dstDir := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	src := useLite(t, "--data", srcDir)
	fillStore(t, src)

	c := useLite(t)
	// A batch of 3 records makes many transactions, and vectors of one
	// memory reach the batch boundary.
	out := c.ok("migrate-store", "--from", srcDir, "--to", dstDir, "--batch", "3")
	table := summaryTable(t, out)
	dst := useLite(t, "--data", dstDir)
	checkResources(t, out, dst)
	want, got := exports(t, src), exports(t, dst)
	for s := range want {
		if got[s] != want[s] {
			t.Errorf("export of %+v differs after migrate-store:\n got %s\nwant %s", s, got[s], want[s])
		}
	}

	// Copying the copy gives the same counts and checksums.
	again := filepath.Join(tmp, "again")
	if got := summaryTable(t, c.ok("migrate-store", "--from", dstDir, "--to", again, "--progress")); got != table {
		t.Errorf("second copy's table:\n%s\nfirst copy's:\n%s", got, table)
	}

	// A destination holding anything is refused, and left as it was.
	if stderr := c.fail(1, "migrate-store", "--from", srcDir, "--to", dstDir); !strings.Contains(stderr, "not empty") {
		t.Errorf("copy into a filled store: stderr %q", stderr)
	}
	if after := exports(t, dst); after[migrateScopes[0]] != got[migrateScopes[0]] {
		t.Errorf("a refused copy changed the destination")
	}
	// Last, because a search counts accesses and so changes memories.
	denseSearch(t, dst)
}

func TestMigrateStoreUsage(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	c := &cli{t: t, env: baseEnv(t)}
	if usage := c.ok("help", "migrate-store"); !strings.HasPrefix(usage, "Usage: engram migrate-store") {
		t.Errorf("help migrate-store:\n%s", usage)
	}
	for _, args := range [][]string{
		{"migrate-store"},
		{"migrate-store", "--from", tmp},
		{"migrate-store", "--to", tmp},
		{"migrate-store", "--from", tmp, "--to", tmp},
		{"migrate-store", "--from", tmp, "--to", filepath.Join(tmp, "x"), "--batch", "0"},
		{"migrate-store", "--from", tmp, "--to", filepath.Join(tmp, "x"), "extra"},
	} {
		if stderr := c.fail(2, args...); !strings.Contains(stderr, "migrate-store") {
			t.Errorf("engram %s: stderr %q", strings.Join(args, " "), stderr)
		}
	}
	// A source directory without a database is an error, not an empty copy.
	stderr := c.fail(1, "migrate-store", "--from", filepath.Join(tmp, "none"), "--to", filepath.Join(tmp, "dst"))
	if !strings.Contains(stderr, "holds no engram.db") {
		t.Errorf("missing source: stderr %q", stderr)
	}
	// An unknown scheme is refused by the store registry, naming the flag.
	for _, flag := range []string{"--from", "--to"} {
		args := []string{"migrate-store", "--from", tmp, "--to", filepath.Join(tmp, "dst")}
		if flag == "--from" {
			args[2] = "mysql://u:secret@h/db"
		} else {
			args[4] = "mysql://u:secret@h/db"
		}
		stderr = c.fail(1, args...)
		if !strings.Contains(stderr, flag+`: "mysql://..." is neither a data directory nor a postgres:// URL`) || strings.Contains(stderr, "secret") {
			t.Errorf("bad %s URL: stderr %q", flag, stderr)
		}
	}
}

// TestMigrateStorePostgres copies a data directory into PostgreSQL and
// back into a new data directory: every scope exports identically at each
// step, both copies print the same counts and checksums, and dense search
// works on PostgreSQL and on the final copy.
func TestMigrateStorePostgres(t *testing.T) {
	store := pgSchemaURL(t)
	tmp := t.TempDir()
	srcDir, backDir := filepath.Join(tmp, "src"), filepath.Join(tmp, "back")
	src := useLite(t, "--data", srcDir)
	fillStore(t, src)
	want := exports(t, src)

	c := useLite(t)
	out := c.ok("migrate-store", "--from", srcDir, "--to", store, "--batch", "5")
	toPG := summaryTable(t, out)
	pg := &cli{t: t, env: append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite", "ENGRAM_STORE="+store), extra: []string{"--data", t.TempDir()}}
	checkResources(t, out, pg)
	back := useLite(t, "--data", backDir)
	out = c.ok("migrate-store", "--from", store, "--to", backDir)
	fromPG := summaryTable(t, out)
	checkResources(t, out, back)
	if toPG != fromPG {
		t.Errorf("SQLite -> PostgreSQL table:\n%s\nPostgreSQL -> SQLite table:\n%s", toPG, fromPG)
	}
	for name, got := range map[string]map[storeScope]string{"PostgreSQL": exports(t, pg), "SQLite again": exports(t, back)} {
		for s := range want {
			if got[s] != want[s] {
				t.Errorf("%s: export of %+v differs:\n got %s\nwant %s", name, s, got[s], want[s])
			}
		}
	}
	denseSearch(t, pg)
	denseSearch(t, back)
	if stderr := c.fail(1, "migrate-store", "--from", srcDir, "--to", store); !strings.Contains(stderr, "not empty") {
		t.Errorf("copy into a filled PostgreSQL store: stderr %q", stderr)
	}
}

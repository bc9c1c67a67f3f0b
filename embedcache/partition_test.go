package embedcache_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
)

var (
	aliceNS = engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	bobNS   = engram.Namespace{Org: "acme", Project: "p", User: "bob"}
	otherNS = engram.Namespace{Org: "globex", Project: "p", User: "alice"}
)

func embedIn(t *testing.T, c *embedcache.Cache, n engram.Namespace, texts ...string) [][]float32 {
	t.Helper()
	vecs, err := c.Embed(engram.WithEmbedPartition(context.Background(), n), texts)
	if err != nil {
		t.Fatal(err)
	}
	return vecs
}

// misses runs fn and returns how many texts the inner embedder received.
func misses(f *fakeEmbedder, fn func()) int {
	before := len(f.embedded())
	fn()
	return len(f.embedded()) - before
}

// TestPartitionsDoNotShare: a text embedded for one user is a miss for
// another user, another tenant and the shared partition, in memory and on
// disk after a restart.
func TestPartitionsDoNotShare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{Path: path})
	const text = "Meine Schwester zieht nach Lissabon"
	embedIn(t, c, aliceNS, text)
	if n := misses(f, func() { embedIn(t, c, aliceNS, text) }); n != 0 {
		t.Fatalf("alice's second call embedded %d texts, want 0 (a hit)", n)
	}
	for _, ns := range []engram.Namespace{bobNS, otherNS, {}} {
		if n := misses(f, func() { embedIn(t, c, ns, text) }); n != 1 {
			t.Fatalf("partition %+v: %d texts embedded, want 1 (alice's entry must not answer)", ns, n)
		}
	}
	c.Close()

	f2 := newFake("fake", 8)
	c2 := newCache(t, f2, embedcache.Options{Path: path})
	checkVectors(t, "fake", 8, []string{text}, embedIn(t, c2, aliceNS, text))
	if n := len(f2.embedded()); n != 0 {
		t.Fatalf("after a restart alice's text was embedded again (%d)", n)
	}
}

// TestForgetTexts: forgotten texts are misses again for the user and the
// tenant's user-less partition, from memory and from disk; other texts and
// other users keep their entries.
func TestForgetTexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{Path: path})
	tenantNS := engram.Namespace{Org: "acme", Project: "p"}
	for _, ns := range []engram.Namespace{aliceNS, bobNS, tenantNS} {
		embedIn(t, c, ns, "secret 秘密", "kept")
	}
	if err := c.ForgetTexts(context.Background(), aliceNS, []string{"secret 秘密"}); err != nil {
		t.Fatal(err)
	}
	for round, cc := range []*embedcache.Cache{c, nil} {
		if cc == nil { // the disk store must have forgotten too
			c.Close()
			f = newFake("fake", 8)
			cc = newCache(t, f, embedcache.Options{Path: path})
		}
		for _, tc := range []struct {
			ns   engram.Namespace
			text string
			want int
		}{{aliceNS, "secret 秘密", 1}, {tenantNS, "secret 秘密", 1}, {bobNS, "secret 秘密", 0}, {aliceNS, "kept", 0}} {
			if n := misses(f, func() { embedIn(t, cc, tc.ns, tc.text) }); n != tc.want {
				t.Fatalf("round %d, %+v %q: %d texts embedded, want %d", round, tc.ns, tc.text, n, tc.want)
			}
		}
		if round == 0 {
			// Forget again so the disk round starts from the same state.
			if err := cc.ForgetTexts(context.Background(), aliceNS, []string{"secret 秘密"}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestForgetTenant: every partition of the tenant is forgotten, on disk
// too; another tenant keeps its entries.
func TestForgetTenant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{Path: path})
	for _, ns := range []engram.Namespace{aliceNS, bobNS, otherNS} {
		embedIn(t, c, ns, "la hermana de Ana")
	}
	if err := c.ForgetTenant(context.Background(), bobNS); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Entries != 1 {
		t.Fatalf("%d entries in memory after forgetting the tenant, want 1 (the other tenant's)", s.Entries)
	}
	c.Close()
	f = newFake("fake", 8)
	c = newCache(t, f, embedcache.Options{Path: path})
	for _, tc := range []struct {
		ns   engram.Namespace
		want int
	}{{aliceNS, 1}, {bobNS, 1}, {otherNS, 0}} {
		if n := misses(f, func() { embedIn(t, c, tc.ns, "la hermana de Ana") }); n != tc.want {
			t.Fatalf("%+v: %d texts embedded, want %d", tc.ns, n, tc.want)
		}
	}
}

// TestForgetLeavesNoWAL: after a forget the cache file's write-ahead log
// is empty, so the forgotten entries are not kept in it.
func TestForgetLeavesNoWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	c := newCache(t, newFake("fake", 8), embedcache.Options{Path: path})
	embedIn(t, c, aliceNS, "x")
	if err := c.ForgetTenant(context.Background(), aliceNS); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Fatalf("the write-ahead log holds %d bytes after a forget", fi.Size())
	}
}

// TestUnpartitionedFileIsEmptied: a cache file written before partitions,
// whose entries every tenant shared, is emptied on open.
func TestUnpartitionedFileIsEmptied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE embeddings (key BLOB PRIMARY KEY, dim INTEGER NOT NULL, vec BLOB NOT NULL);
		INSERT INTO embeddings VALUES (x'00', 1, x'0000803f')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newCache(t, newFake("fake", 8), embedcache.Options{Path: path}).Close()
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM embeddings").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d old entries kept (err %v), want 0", n, err)
	}
}

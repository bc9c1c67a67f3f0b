package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/internal/syncbuf"
	"github.com/engramhq/engram/sqlite"
)

// openText starts an engine over st without an embedder, keeping its
// text indexes in dir (none when dir is empty); its log is returned.
func openText(t *testing.T, st engram.Store, dir string) (*engine.Engine, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	e, err := engine.New(context.Background(), st, engine.Options{
		IndexDir: dir,
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, logs
}

// textFiles lists the saved text index files under dir.
func textFiles(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*.bm25"))
	return m
}

var (
	textQs     = []string{"Katze Sofa", "perro parque", "咖啡", "train nine", "sofa"}
	textPast   = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	textFilter = engram.MemoryFilter{Kinds: []engram.Kind{engram.KindSemantic}, ValidAt: &textPast}
)

// textIDs searches each query with the full-text channel alone, with and
// without a filter on the attributes the index keeps, and returns the ids
// found, in order.
func textIDs(t *testing.T, e *engine.Engine, s engram.Scope) []string {
	t.Helper()
	var out []string
	for _, q := range textQs {
		for _, f := range []engram.MemoryFilter{{}, textFilter} {
			res, err := e.Search(context.Background(), engram.SearchRequest{Scope: s, Query: q, K: 5, Channels: []string{"bm25"}, Decay: &noDecay, Filter: f})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				out = append(out, h.Memory.ID)
			}
			out = append(out, "|")
		}
	}
	return out
}

// addText adds memories of annTexts to ns: every third episodic, every
// fourth valid only from 2024, so that the attributes matter.
func addText(t *testing.T, e *engine.Engine, ns engram.Namespace, values ...string) []engram.Memory {
	t.Helper()
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var in []engram.Memory
	for i, v := range values {
		m := engram.Memory{Kind: engram.KindSemantic, Value: v}
		if i%3 == 0 {
			m.Kind = engram.KindEpisodic
		}
		if i%4 == 0 {
			m.ValidFrom = &from
		}
		in = append(in, m)
	}
	ms, err := e.AddMemories(context.Background(), engram.AddMemoriesRequest{Namespace: ns, Memories: in})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// savedText writes alice's memories through an engine with an index
// directory, searches, closes it (which saves) and returns the results.
func savedText(t *testing.T) (*annEnv, []string, []engram.Memory) {
	t.Helper()
	env := newANNEnv(t)
	e, _ := openText(t, env.db, env.dir)
	ms := addText(t, e, annAlice, annTexts...)
	want := textIDs(t, e, engram.ScopeOf(annAlice))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := textFiles(env.dir); len(got) != 1 {
		t.Fatalf("after Close the directory holds %v, want alice's text index", got)
	}
	return env, want, ms
}

// TestTextIndexFile_RestartLoads: a restarted engine loads the saved text
// index instead of reading the memories, catches up with what changed
// since (an add, a soft and a hard delete by an engine without the
// directory) and answers, filters included, as an index built from the
// store does.
func TestTextIndexFile_RestartLoads(t *testing.T) {
	env, before, ms := savedText(t)
	if len(before) < 3*len(textQs) {
		t.Fatalf("the searches found too little to compare: %v", before)
	}
	other, _ := openText(t, env.db, "")
	s := engram.ScopeOf(annAlice)
	added := addText(t, other, annAlice, "Die Katze trinkt Kaffee auf dem Sofa")
	if err := other.DeleteMemory(context.Background(), s, ms[1].ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteMemory(context.Background(), s, ms[2].ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := textIDs(t, other, s)
	if !slices.Contains(want, added[0].ID) || slices.Contains(want, ms[1].ID) || slices.Contains(want, ms[2].ID) {
		t.Fatalf("the store's answers %v miss the added memory or hold a deleted one", want)
	}
	e, logs := openText(t, env.db, env.dir)
	if got := textIDs(t, e, s); !slices.Equal(got, want) {
		t.Errorf("after loading the file found %v, built from the store %v", got, want)
	}
	if l := logs.String(); !strings.Contains(l, "loaded a saved text index") || strings.Contains(l, "rebuilding") {
		t.Errorf("want the file loaded; log:\n%s", l)
	}
}

// TestTextIndexFile_DamagedIsRebuilt: a flipped byte, a truncated file, a
// file of another format version, another store or another partition is
// logged, not used, and the index is built from the store, answering as
// before, and saved again.
func TestTextIndexFile_DamagedIsRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, env *annEnv, f string, b []byte) (string, []byte)
		log    string
	}{
		{"flipped byte", func(t *testing.T, _ *annEnv, f string, b []byte) (string, []byte) { b[len(b)/2] ^= 1; return f, b }, "corrupted"},
		{"truncated", func(t *testing.T, _ *annEnv, f string, b []byte) (string, []byte) { return f, b[:len(b)*2/3] }, "unexpected EOF"},
		{"other version", func(t *testing.T, _ *annEnv, f string, b []byte) (string, []byte) { b[8]++; return f, b }, "format version"},
		{"other store", func(t *testing.T, _ *annEnv, f string, b []byte) (string, []byte) {
			id := filepath.Base(filepath.Dir(f))
			i := bytes.Index(b, []byte(id))
			if i < 0 {
				t.Fatal("the file does not name its store")
			}
			b[i] ^= 1
			return f, b
		}, "another store"},
		{"other partition", func(t *testing.T, env *annEnv, f string, b []byte) (string, []byte) {
			// alice's file where bob's belongs: bob's search must
			// not see alice's memories.
			e, _ := openText(t, env.db, env.dir)
			addText(t, e, annBob, "bob has a cat on the sofa")
			textIDs(t, e, engram.ScopeOf(annBob))
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			for _, g := range textFiles(env.dir) {
				if g != f {
					return g, b
				}
			}
			t.Fatal("bob's index was not saved")
			return "", nil
		}, "another store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, want, _ := savedText(t)
			f := textFiles(env.dir)[0]
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			g, b := tc.damage(t, env, f, b)
			if err := os.WriteFile(g, b, 0o600); err != nil {
				t.Fatal(err)
			}
			e, logs := openText(t, env.db, env.dir)
			s := engram.ScopeOf(annAlice)
			if g != f {
				s = engram.ScopeOf(annBob)
				want = []string{}
				other, _ := openText(t, env.db, "")
				want = textIDs(t, other, s)
			}
			if got := textIDs(t, e, s); !slices.Equal(got, want) {
				t.Fatalf("found %v, want %v", got, want)
			}
			if l := logs.String(); strings.Contains(l, "loaded a saved text index") || !strings.Contains(l, tc.log) {
				t.Fatalf("want the file refused with %q; log:\n%s", tc.log, l)
			}
			if err := e.SaveIndexes(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(g); err != nil {
				t.Fatalf("the rebuilt index was not saved again: %v", err)
			}
		})
	}
}

// textLogStore answers Changes as a store whose change log forgot old
// changes (conflict) or was rolled back to before the file was saved
// (behind); everything else is the SQLite store's.
type textLogStore struct {
	engram.Store
	conflict bool
}

type textLogReader struct {
	engram.Reader
	cl       engram.ChangeLog
	conflict bool
}

func (r textLogReader) Changes(ctx context.Context, s engram.Scope, after int64) ([]string, int64, error) {
	ids, seq, err := r.cl.Changes(ctx, s, after)
	switch {
	case after >= 0 && r.conflict:
		return nil, 0, engram.Errorf(engram.ECONFLICT, "changes before sequence %d are no longer kept", after+1)
	case after < 0 && !r.conflict:
		return nil, seq - 1, err
	}
	return ids, seq, err
}

func (s textLogStore) View(ctx context.Context, fn func(engram.Reader) error) error {
	return s.Store.View(ctx, func(r engram.Reader) error {
		return fn(textLogReader{r, r, s.conflict})
	})
}

// TestTextIndexFile_ChangeLogCannotCatchUp: a file older than the change
// log keeps (ECONFLICT), or newer than the store (a store restored from a
// backup), is not used; the index is rebuilt from the store.
func TestTextIndexFile_ChangeLogCannotCatchUp(t *testing.T) {
	for _, tc := range []struct {
		conflict bool
		log      string
	}{{true, "older than the change log keeps"}, {false, "newer than the store"}} {
		t.Run(tc.log, func(t *testing.T) {
			env, want, _ := savedText(t)
			e, logs := openText(t, textLogStore{env.db, tc.conflict}, env.dir)
			if got := textIDs(t, e, engram.ScopeOf(annAlice)); !slices.Equal(got, want) {
				t.Fatalf("found %v, before %v", got, want)
			}
			if l := logs.String(); strings.Contains(l, "loaded a saved text index") || !strings.Contains(l, tc.log) {
				t.Fatalf("want the file refused as %q; log:\n%s", tc.log, l)
			}
		})
	}
}

// TestTextIndexFile_OtherServerDelete: a hard delete made by another
// server (with its own index directory) leaves this server's text index
// file within a few save intervals while this server keeps writing but
// does not search: the periodic save catches up with the change log
// first.
func TestTextIndexFile_OtherServerDelete(t *testing.T) {
	env := newANNEnv(t)
	a, err := engine.New(context.Background(), env.db, engine.Options{
		IndexDir: env.dir, IndexSaveEvery: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ms := addText(t, a, annAlice, append(slices.Clone(annTexts), "zqgoneword stays until deleted", "zqkeptword stays")...)
	textIDs(t, a, engram.ScopeOf(annAlice))
	if err := a.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := textFiles(env.dir)
	if len(files) != 1 {
		t.Fatalf("saved files: %v", files)
	}
	b, _ := openText(t, env.db, t.TempDir())
	if err := b.DeleteMemory(context.Background(), engram.ScopeOf(annAlice), ms[len(ms)-2].ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		addText(t, a, annAlice, "Der Zug fährt um zehn")
		data, err := os.ReadFile(files[0])
		if err == nil && !bytes.Contains(data, []byte("zqgoneword")) && bytes.Contains(data, []byte("zqkeptword")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file still holds the memory another server deleted (read error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWarnNoTextIndex: an engine that searches text only with the store's
// index warns at start when the store has none, and an engine with its
// own index does not.
func TestWarnNoTextIndex(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := func(limit int) string {
		var logs syncbuf.Buffer
		e, err := engine.New(ctx, db, engine.Options{TextIndexLimit: limit, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		return logs.String()
	}
	if logs := start(-1); strings.Contains(logs, "engram fulltext on") {
		t.Errorf("warned with the store's index there: %s", logs)
	}
	if err := db.SetFullTextIndexed(ctx, false); err != nil {
		t.Fatal(err)
	}
	if logs := start(-1); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "engram fulltext on") {
		t.Errorf("no warning with the store's index off: %q", logs)
	}
	if logs := start(0); strings.Contains(logs, "engram fulltext on") {
		t.Errorf("warned an engine with its own text index: %s", logs)
	}
}

package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/internal/syncbuf"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/vector"
)

// annEnv is a store and an index directory that engines open and close
// over, as a server restarting.
type annEnv struct {
	t     *testing.T
	db    *sqlite.DB
	dir   string
	store string // the store's index directory, dir/<store id>
}

func newANNEnv(t *testing.T) *annEnv {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &annEnv{t: t, db: db, dir: t.TempDir()}
}

// open starts an engine whose indexes switch to a graph past 8 vectors;
// its log is returned.
func (a *annEnv) open(indexDir string) (*engine.Engine, *syncbuf.Buffer) {
	a.t.Helper()
	logs := &syncbuf.Buffer{}
	e, err := engine.New(context.Background(), a.db, engine.Options{
		Embedder: &enginetest.BagEmbedder{},
		IndexDir: indexDir,
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		NewIndex: func(dim int) vector.Index {
			return vector.NewAuto(dim, vector.AutoConfig{Threshold: 8, HNSW: vector.HNSWConfig{Seed: 1, Workers: 1}})
		},
	})
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { e.Close() })
	if indexDir != "" && a.store == "" {
		m, _ := filepath.Glob(filepath.Join(indexDir, "*"))
		if len(m) != 1 {
			a.t.Fatalf("the index directory holds %v, want one store directory", m)
		}
		a.store = m[0]
	}
	return e, logs
}

// files lists the saved index files.
func (a *annEnv) files() []string {
	m, _ := filepath.Glob(filepath.Join(a.store, "*.hnsw"))
	return m
}

var annTexts = []string{
	"the cat sleeps on the red sofa", "Die Katze schläft auf dem Sofa", "El gato duerme en el sofá",
	"猫在沙发上睡觉", "the dog runs in the park", "Der Hund läuft im Park", "El perro corre en el parque",
	"狗在公园里跑", "coffee with milk every morning", "Kaffee mit Milch jeden Morgen",
	"café con leche cada mañana", "每天早上喝牛奶咖啡", "the train leaves at nine", "Der Zug fährt um neun",
	"el tren sale a las nueve", "火车九点出发",
}

func addANN(t *testing.T, e *engine.Engine, ns engram.Namespace, values ...string) []engram.Memory {
	t.Helper()
	var in []engram.Memory
	for _, v := range values {
		in = append(in, engram.Memory{Kind: engram.KindSemantic, Value: v})
	}
	ms, err := e.AddMemories(context.Background(), engram.AddMemoriesRequest{Namespace: ns, Memories: in})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

var noDecay = false

// denseIDs searches each query and returns the ids found, in order.
func denseIDs(t *testing.T, e *engine.Engine, s engram.Scope, queries ...string) []string {
	t.Helper()
	var out []string
	for _, q := range queries {
		res, err := e.Search(context.Background(), engram.SearchRequest{Scope: s, Query: q, K: 5, Channels: []string{"dense"}, Decay: &noDecay})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			out = append(out, h.Memory.ID)
		}
		out = append(out, "|")
	}
	return out
}

var (
	annAlice = engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	annBob   = engram.Namespace{Org: "acme", Project: "app", User: "bob"}
	annQs    = []string{"Katze Sofa", "perro parque", "咖啡", "train nine"}
)

// saved opens an engine over a fresh store, writes alice's memories,
// searches and saves, and returns the results and the closed engine's env.
func saved(t *testing.T) (*annEnv, []string, []engram.Memory) {
	t.Helper()
	env := newANNEnv(t)
	e, _ := env.open(env.dir)
	ms := addANN(t, e, annAlice, annTexts...)
	want := denseIDs(t, e, engram.ScopeOf(annAlice), annQs...)
	if err := e.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := env.files(); len(got) != 1 {
		t.Fatalf("after SaveIndexes the directory holds %v, want alice's file", got)
	}
	e.Close()
	return env, want, ms
}

// TestIndexFile_RestartLoads: a restarted engine loads the saved graph,
// catches up with what changed since (an add and a hard delete by an
// engine without the directory) and answers as a rebuilt index would.
func TestIndexFile_RestartLoads(t *testing.T) {
	env, want, ms := saved(t)
	e2, logs := env.open(env.dir)
	if got := denseIDs(t, e2, engram.ScopeOf(annAlice), annQs...); !slices.Equal(got, want) {
		t.Fatalf("after a restart found %v, before %v", got, want)
	}
	if !strings.Contains(logs.String(), "loaded a saved vector index") {
		t.Fatalf("the restarted engine did not load the file; log:\n%s", logs)
	}
	e2.Close()

	other, _ := env.open("") // changes the file does not know
	added := addANN(t, other, annAlice, "Die Katze trinkt Milch auf dem Sofa")[0]
	if err := other.DeleteMemory(context.Background(), engram.ScopeOf(annAlice), ms[1].ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	e3, logs := env.open(env.dir)
	got := denseIDs(t, e3, engram.ScopeOf(annAlice), "Katze Sofa Milch")
	if !strings.Contains(logs.String(), "loaded a saved vector index") {
		t.Fatalf("the engine did not load the file; log:\n%s", logs)
	}
	if !slices.Contains(got, added.ID) || slices.Contains(got, ms[1].ID) {
		t.Fatalf("after catching up found %v: want %s (added) and not %s (deleted)", got, added.ID, ms[1].ID)
	}
}

// TestIndexFile_DamagedIsRebuilt: a flipped byte, a truncated file, a file
// of another format version or another partition is logged, not used,
// and the index is built from the store, answering as before.
func TestIndexFile_DamagedIsRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, b []byte) []byte
		log    string
	}{
		{"flipped byte", func(t *testing.T, b []byte) []byte { b[len(b)/2] ^= 1; return b }, "corrupted"},
		{"truncated", func(t *testing.T, b []byte) []byte { return b[:len(b)*2/3] }, "unexpected EOF"},
		{"other version", func(t *testing.T, b []byte) []byte { b[8]++; return b }, "format version"},
		{"other embedder", func(t *testing.T, b []byte) []byte {
			i := bytes.Index(b, []byte("bag"))
			if i < 0 {
				t.Fatal("the file does not name its embedder")
			}
			copy(b[i:], "bug")
			return b
		}, "another store, embedder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, want, _ := saved(t)
			f := env.files()[0]
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, tc.damage(t, b), 0o600); err != nil {
				t.Fatal(err)
			}
			e, logs := env.open(env.dir)
			if got := denseIDs(t, e, engram.ScopeOf(annAlice), annQs...); !slices.Equal(got, want) {
				t.Fatalf("found %v, before %v", got, want)
			}
			if l := logs.String(); strings.Contains(l, "loaded a saved vector index") || !strings.Contains(l, tc.log) {
				t.Fatalf("want the file refused with %q; log:\n%s", tc.log, l)
			}
			if err := e.SaveIndexes(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("the rebuilt index was not saved again: %v", err)
			}
		})
	}
}

// TestIndexFile_OtherPartition: alice's file put where bob's belongs is
// refused (the partition in its header is checked, not the name), and bob
// never sees alice's memories.
func TestIndexFile_OtherPartition(t *testing.T) {
	env, _, ms := saved(t)
	alice := env.files()[0]
	e, _ := env.open(env.dir)
	var boats []string
	for i := range 12 {
		boats = append(boats, fmt.Sprintf("bob owns boat number %d", i))
	}
	addANN(t, e, annBob, boats...)
	denseIDs(t, e, engram.ScopeOf(annBob), "boat")
	if err := e.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.Close()
	var bob string
	for _, f := range env.files() {
		if f != alice {
			bob = f
		}
	}
	if bob == "" {
		t.Fatalf("bob's index was not saved: %v", env.files())
	}
	b, err := os.ReadFile(alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bob, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e2, logs := env.open(env.dir)
	got := denseIDs(t, e2, engram.ScopeOf(annBob), annQs...)
	for _, m := range ms {
		if slices.Contains(got, m.ID) {
			t.Fatalf("bob's search returned alice's memory %s", m.ID)
		}
	}
	if !strings.Contains(logs.String(), "another store, embedder or partition") {
		t.Fatalf("alice's file under bob's name was not refused; log:\n%s", logs)
	}
}

// TestIndexFile_DeleteRemoves: a hard delete and a scope purge remove the
// partition's file; saving again writes one without the deleted memory.
func TestIndexFile_DeleteRemoves(t *testing.T) {
	env, _, ms := saved(t)
	e, _ := env.open(env.dir)
	denseIDs(t, e, engram.ScopeOf(annAlice), annQs...) // loads from the file
	if err := e.DeleteMemory(context.Background(), engram.ScopeOf(annAlice), ms[0].ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if got := env.files(); len(got) != 0 {
		t.Fatalf("after a hard delete the directory holds %v", got)
	}
	if err := e.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := env.files()
	if len(files) != 1 {
		t.Fatalf("after saving again the directory holds %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(ms[0].ID)) || !bytes.Contains(b, []byte(ms[2].ID)) {
		t.Fatalf("the saved file holds the deleted id (%v) or lacks a kept one (%v)", bytes.Contains(b, []byte(ms[0].ID)), bytes.Contains(b, []byte(ms[2].ID)))
	}
	if _, err := e.DeleteScope(context.Background(), engram.ScopeOf(annAlice)); err != nil {
		t.Fatal(err)
	}
	if err := e.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := env.files(); len(got) != 0 {
		t.Fatalf("after purging the user the directory holds %v", got)
	}
}

// TestIndexFile_UnwritableDir: a directory that cannot be created is
// logged and the engine works without saving.
func TestIndexFile_UnwritableDir(t *testing.T) {
	env := newANNEnv(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	e, err := engine.New(context.Background(), env.db, engine.Options{
		Embedder: &enginetest.BagEmbedder{}, IndexDir: filepath.Join(blocker, "ann"),
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !strings.Contains(logs.String(), "will not be saved") {
		t.Fatalf("no warning; log:\n%s", logs)
	}
	ms := addANN(t, e, annAlice, annTexts...)
	if got := denseIDs(t, e, engram.ScopeOf(annAlice), annQs[0]); !slices.Contains(got, ms[1].ID) {
		t.Fatalf("search without saved indexes found %v", got)
	}
	if err := e.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// logStore answers Changes as a store whose change log forgot old changes
// (conflict) or was rolled back (behind); everything else is db's.
type logStore struct {
	*sqlite.DB
	conflict bool
}

type logReader struct {
	engram.Reader
	conflict bool
}

func (r logReader) Changes(ctx context.Context, s engram.Scope, after int64) ([]string, int64, error) {
	switch {
	case after < 0:
		return r.Reader.Changes(ctx, s, after)
	case r.conflict:
		return nil, 0, engram.Errorf(engram.ECONFLICT, "changes before sequence %d are no longer kept", after+1)
	}
	return nil, 0, nil
}

func (s logStore) View(ctx context.Context, fn func(engram.Reader) error) error {
	return s.DB.View(ctx, func(r engram.Reader) error {
		return fn(logReader{r, s.conflict})
	})
}

// TestIndexFile_ChangeLogCannotCatchUp: a file older than the change log
// keeps (ECONFLICT), or newer than the store (a store restored from a
// backup), is not used; the index is rebuilt from the store.
func TestIndexFile_ChangeLogCannotCatchUp(t *testing.T) {
	for _, tc := range []struct {
		conflict bool
		log      string
	}{{true, "older than the change log keeps"}, {false, "newer than the store"}} {
		t.Run(tc.log, func(t *testing.T) {
			env, want, _ := saved(t)
			logs := &syncbuf.Buffer{}
			e, err := engine.New(context.Background(), logStore{env.db, tc.conflict}, engine.Options{
				Embedder: &enginetest.BagEmbedder{}, IndexDir: env.dir,
				Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				NewIndex: func(dim int) vector.Index {
					return vector.NewAuto(dim, vector.AutoConfig{Threshold: 8, HNSW: vector.HNSWConfig{Seed: 1, Workers: 1}})
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := denseIDs(t, e, engram.ScopeOf(annAlice), annQs...); !slices.Equal(got, want) {
				t.Fatalf("found %v, before %v", got, want)
			}
			if l := logs.String(); strings.Contains(l, "loaded a saved vector index") || !strings.Contains(l, tc.log) {
				t.Fatalf("want the file refused as %q; log:\n%s", tc.log, l)
			}
		})
	}
}

// TestIndexFile_OtherServerDelete: a hard delete made by another server
// (with its own index directory) leaves this server's file within one save
// interval: the periodic save catches up first.
func TestIndexFile_OtherServerDelete(t *testing.T) {
	env := newANNEnv(t)
	a, err := engine.New(context.Background(), env.db, engine.Options{
		Embedder: &enginetest.BagEmbedder{}, IndexDir: env.dir, IndexSaveEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
		NewIndex: func(dim int) vector.Index {
			return vector.NewAuto(dim, vector.AutoConfig{Threshold: 8, HNSW: vector.HNSWConfig{Seed: 1, Workers: 1}})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ms := addANN(t, a, annAlice, annTexts...)
	denseIDs(t, a, engram.ScopeOf(annAlice), annQs...)
	if err := a.SaveIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(env.dir, "*", "*.hnsw"))
	if len(files) != 1 {
		t.Fatalf("saved files: %v", files)
	}
	b, _ := env.open(t.TempDir())
	if err := b.DeleteMemory(context.Background(), engram.ScopeOf(annAlice), ms[0].ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(files[0])
		if err == nil && !bytes.Contains(data, []byte(ms[0].ID)) && bytes.Contains(data, []byte(ms[2].ID)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file still holds the memory another server deleted (read error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

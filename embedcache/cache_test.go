package embedcache_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"

	_ "modernc.org/sqlite"
)

// fakeEmbedder makes deterministic vectors from (name, text) and records
// every call. Delay slows each call so concurrent callers overlap.
type fakeEmbedder struct {
	name  string
	dim   int
	delay time.Duration

	mu    sync.Mutex
	calls [][]string
	err   error
	// count, when set, makes Embed return this many vectors regardless.
	count int
}

func newFake(name string, dim int) *fakeEmbedder { return &fakeEmbedder{name: name, dim: dim} }

func (f *fakeEmbedder) Name() string { return f.name }
func (f *fakeEmbedder) Dim() int     { return f.dim }

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, slices.Clone(texts))
	err, count := f.err, f.count
	f.mu.Unlock()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if count == 0 {
		count = len(texts)
	}
	out := make([][]float32, count)
	for i := range out {
		out[i] = fakeVector(f.name, texts[min(i, len(texts)-1)], f.dim)
	}
	return out, nil
}

func (f *fakeEmbedder) Calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// embedded returns every text sent to the inner embedder, over all calls.
func (f *fakeEmbedder) embedded() []string {
	var out []string
	for _, c := range f.Calls() {
		out = append(out, c...)
	}
	return out
}

func fakeVector(name, text string, dim int) []float32 {
	v := make([]float32, dim)
	var ss float64
	for i := range v {
		h := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%d", name, text, i))
		x := float64(int32(binary.LittleEndian.Uint32(h[:]))) / math.MaxInt32
		v[i] = float32(x)
		ss += x * x
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return v
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newCache(t testing.TB, inner engram.Embedder, opts embedcache.Options) *embedcache.Cache {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet()
	}
	c, err := embedcache.New(inner, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func embed(t *testing.T, c *embedcache.Cache, texts ...string) [][]float32 {
	t.Helper()
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs
}

func checkVectors(t *testing.T, name string, dim int, texts []string, vecs [][]float32) {
	t.Helper()
	for i, v := range vecs {
		if want := fakeVector(name, texts[i], dim); !slices.Equal(v, want) {
			t.Fatalf("vector %d (%q) is not the inner embedder's", i, texts[i])
		}
	}
}

func TestNameAndDim(t *testing.T) {
	c := newCache(t, newFake("fake:m", 12), embedcache.Options{})
	if got, want := c.Name(), "fake:m"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got, want := c.Dim(), 12; got != want {
		t.Errorf("Dim() = %d, want %d", got, want)
	}
}

func TestMemoryHit(t *testing.T) {
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{})
	in := []string{"alpha", "beta"}
	checkVectors(t, "fake", 8, in, embed(t, c, in...))
	checkVectors(t, "fake", 8, in, embed(t, c, in...))
	if got := len(f.Calls()); got != 1 {
		t.Fatalf("%d inner calls, want 1", got)
	}
	s := c.Stats()
	if s.MemoryHits != 2 || s.Misses != 2 || s.DiskHits != 0 || s.InnerCalls != 1 || s.Entries != 2 {
		t.Fatalf("stats %+v", s)
	}

	// Only the new text goes to the inner embedder.
	in = []string{"beta", "gamma", "alpha"}
	checkVectors(t, "fake", 8, in, embed(t, c, in...))
	if got := f.Calls(); len(got) != 2 || !slices.Equal(got[1], []string{"gamma"}) {
		t.Fatalf("inner calls %q, want a second call with only gamma", got)
	}
}

func TestEmptyCall(t *testing.T) {
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{})
	vecs, err := c.Embed(context.Background(), nil)
	if err != nil || len(vecs) != 0 {
		t.Fatalf("Embed(nil) = %v, %v", vecs, err)
	}
	if len(f.Calls()) != 0 {
		t.Fatal("inner called for no texts")
	}
}

func TestDiskHitAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "embeddings-cache.db")
	in := []string{"one", "two", "three"}

	f1 := newFake("fake", 16)
	c1 := newCache(t, f1, embedcache.Options{Path: path})
	embed(t, c1, in...)
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}

	f2 := newFake("fake", 16)
	c2 := newCache(t, f2, embedcache.Options{Path: path})
	checkVectors(t, "fake", 16, in, embed(t, c2, in...))
	if got := len(f2.Calls()); got != 0 {
		t.Fatalf("%d inner calls after restart, want 0", got)
	}
	if s := c2.Stats(); s.DiskHits != 3 || s.MemoryHits != 0 || s.Misses != 0 {
		t.Fatalf("stats %+v", s)
	}
	// Disk hits were promoted to memory.
	embed(t, c2, in...)
	if s := c2.Stats(); s.MemoryHits != 3 || s.DiskHits != 3 {
		t.Fatalf("stats after second call %+v", s)
	}
}

func TestManyKeysAcrossRestart(t *testing.T) {
	// More keys than one lookup statement carries.
	path := filepath.Join(t.TempDir(), "c.db")
	in := make([]string, 1234)
	for i := range in {
		in[i] = fmt.Sprintf("text %d", i)
	}
	c1 := newCache(t, newFake("fake", 4), embedcache.Options{Path: path})
	embed(t, c1, in...)
	c1.Close()

	f := newFake("fake", 4)
	c2 := newCache(t, f, embedcache.Options{Path: path, MaxEntries: -1})
	checkVectors(t, "fake", 4, in, embed(t, c2, in...))
	if got := len(f.Calls()); got != 0 {
		t.Fatalf("%d inner calls, want 0", got)
	}
	if got := c2.Stats().DiskHits; got != int64(len(in)) {
		t.Fatalf("%d disk hits, want %d", got, len(in))
	}
}

func TestDuplicatesWithinCall(t *testing.T) {
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{Path: filepath.Join(t.TempDir(), "c.db")})
	in := []string{"x", "y", "x", "x", "y"}
	vecs := embed(t, c, in...)
	checkVectors(t, "fake", 8, in, vecs)
	if got := f.Calls(); len(got) != 1 || !slices.Equal(got[0], []string{"x", "y"}) {
		t.Fatalf("inner calls %q, want one call with x, y", got)
	}
	if s := c.Stats(); s.Misses != 2 {
		t.Fatalf("stats %+v, want 2 misses", s)
	}

	// Every result is the caller's own: changing one changes neither its
	// duplicates nor the cache.
	vecs[0][0] = 42
	if vecs[2][0] == 42 || vecs[3][0] == 42 {
		t.Fatal("duplicate texts share a vector")
	}
	checkVectors(t, "fake", 8, []string{"x"}, embed(t, c, "x"))
}

func TestNamesDoNotShare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	in := []string{"same text", "another"}

	a := newFake("model-a", 8)
	ca := newCache(t, a, embedcache.Options{Path: path})
	embed(t, ca, in...)
	ca.Close()

	b := newFake("model-b", 8)
	cb := newCache(t, b, embedcache.Options{Path: path})
	checkVectors(t, "model-b", 8, in, embed(t, cb, in...))
	if got := b.embedded(); !slices.Equal(got, in) {
		t.Fatalf("model-b embedded %q, want all of %q", got, in)
	}
	if s := cb.Stats(); s.DiskHits != 0 {
		t.Fatalf("model-b got %d disk hits from model-a's entries", s.DiskHits)
	}
	cb.Close()

	// Both models' entries live side by side in the one file.
	a2 := newFake("model-a", 8)
	ca2 := newCache(t, a2, embedcache.Options{Path: path})
	checkVectors(t, "model-a", 8, in, embed(t, ca2, in...))
	if len(a2.Calls()) != 0 {
		t.Fatal("model-a's entries were lost")
	}
}

// TestVariantsDoNotShare: one model's variants (int8 and fp32 USE-lite)
// keep their own entries in one file; no variant keeps the keys of before.
func TestVariantsDoNotShare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	in := []string{"same text"}
	plain := newCache(t, newFake("m", 8), embedcache.Options{Path: path})
	embed(t, plain, in...)
	plain.Close()

	f := newFake("m", 8)
	q := newCache(t, f, embedcache.Options{Path: path, Variant: "int8"})
	embed(t, q, in...)
	if got := f.embedded(); !slices.Equal(got, in) {
		t.Fatalf("variant int8 embedded %q, want %q: it was answered with the plain entry", got, in)
	}
	if got, want := q.Name(), "m"; got != want {
		t.Errorf("Name() = %q, want %q (the variant is no part of the name)", got, want)
	}
	q.Close()

	f2 := newFake("m", 8)
	q2 := newCache(t, f2, embedcache.Options{Path: path, Variant: "int8"})
	embed(t, q2, in...)
	if len(f2.Calls()) != 0 {
		t.Fatal("variant int8's entry was not kept")
	}
}

func TestLRUEvictionByEntries(t *testing.T) {
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{MaxEntries: 2})
	embed(t, c, "a")
	embed(t, c, "b")
	embed(t, c, "a") // a is now more recent than b
	embed(t, c, "c") // evicts b
	if s := c.Stats(); s.Entries != 2 {
		t.Fatalf("%d entries, want 2", s.Entries)
	}
	before := len(f.embedded())
	embed(t, c, "a", "c")
	if got := len(f.embedded()); got != before {
		t.Fatalf("a or c was evicted: inner embedded %q", f.embedded()[before:])
	}
	embed(t, c, "b")
	if got := f.embedded(); got[len(got)-1] != "b" || len(got) != before+1 {
		t.Fatalf("b should have been evicted and re-embedded; inner embedded %q", got)
	}
}

func TestLRUEvictionByBytes(t *testing.T) {
	f := newFake("fake", 64)
	// A 64-dim entry takes 256 bytes plus 128 of overhead; 800 bytes hold two.
	c := newCache(t, f, embedcache.Options{MaxBytes: 800})
	embed(t, c, "a", "b", "c")
	s := c.Stats()
	if s.Entries != 2 || s.Bytes > 800 {
		t.Fatalf("stats %+v, want 2 entries within 800 bytes", s)
	}
	embed(t, c, "b", "c")
	if got := len(f.Calls()); got != 1 {
		t.Fatalf("the two most recent entries were not kept (%d inner calls)", got)
	}
}

func TestMemoryTierDisabled(t *testing.T) {
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{MaxEntries: -1})
	embed(t, c, "a")
	embed(t, c, "a")
	if got := len(f.Calls()); got != 2 {
		t.Fatalf("%d inner calls without memory or disk tier, want 2", got)
	}
	if s := c.Stats(); s.Entries != 0 || s.MemoryHits != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCorruptEntryIsOverwritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	c1 := newCache(t, newFake("fake", 8), embedcache.Options{Path: path})
	embed(t, c1, "x", "y")
	c1.Close()

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	k := sha256.Sum256([]byte("fake\x00x"))
	res, err := db.Exec("UPDATE embeddings SET vec = x'01020304' WHERE key = ?", k[:])
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("updated %d rows; the key is not sha256(name NUL text)", n)
	}
	db.Close()

	f2 := newFake("fake", 8)
	c2 := newCache(t, f2, embedcache.Options{Path: path})
	checkVectors(t, "fake", 8, []string{"x", "y"}, embed(t, c2, "x", "y"))
	if got := f2.embedded(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("inner embedded %q, want only the damaged x", got)
	}
	if s := c2.Stats(); s.Corrupt != 1 || s.DiskHits != 1 {
		t.Fatalf("stats %+v", s)
	}
	c2.Close()

	f3 := newFake("fake", 8)
	c3 := newCache(t, f3, embedcache.Options{Path: path})
	checkVectors(t, "fake", 8, []string{"x"}, embed(t, c3, "x"))
	if len(f3.Calls()) != 0 {
		t.Fatal("the damaged entry was not overwritten")
	}
}

func TestInnerErrorIsNotCached(t *testing.T) {
	f := newFake("fake", 8)
	f.err = engram.Errorf(engram.EUNAVAILABLE, "model server down")
	c := newCache(t, f, embedcache.Options{Path: filepath.Join(t.TempDir(), "c.db")})
	_, err := c.Embed(context.Background(), []string{"a"})
	if got := engram.ErrorCode(err); got != engram.EUNAVAILABLE {
		t.Fatalf("error code %q, want %q (err %v)", got, engram.EUNAVAILABLE, err)
	}
	if !strings.Contains(engram.ErrorMessage(err), "model server down") {
		t.Fatalf("message %q lost the inner error", engram.ErrorMessage(err))
	}
	f.mu.Lock()
	f.err = nil
	f.mu.Unlock()
	checkVectors(t, "fake", 8, []string{"a"}, embed(t, c, "a"))
	if got := len(f.Calls()); got != 2 {
		t.Fatalf("%d inner calls, want 2", got)
	}
}

func TestInnerContractViolation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*fakeEmbedder)
	}{
		{"wrong count", func(f *fakeEmbedder) { f.count = 1 }},
		{"wrong dim", func(f *fakeEmbedder) { f.dim = 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake("fake", 8)
			w := &dimLiar{fakeEmbedder: f, claim: 8}
			tc.setup(f)
			c := newCache(t, w, embedcache.Options{})
			_, err := c.Embed(context.Background(), []string{"a", "b"})
			if got := engram.ErrorCode(err); got != engram.EINTERNAL {
				t.Fatalf("error code %q, want internal (err %v)", got, err)
			}
			if s := c.Stats(); s.Entries != 0 {
				t.Fatalf("a broken answer was cached: %+v", s)
			}
		})
	}
}

// dimLiar reports a fixed Dim whatever its fake returns.
type dimLiar struct {
	*fakeEmbedder
	claim int
}

func (d *dimLiar) Dim() int { return d.claim }

func TestDiskFailureFallsBackToInner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	f := newFake("fake", 8)
	c := newCache(t, f, embedcache.Options{Path: path})
	embed(t, c, "warm")

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE embeddings"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	checkVectors(t, "fake", 8, []string{"new", "warm"}, embed(t, c, "new", "warm"))
	s := c.Stats()
	if s.DiskErrors == 0 {
		t.Fatalf("stats %+v: the failed disk lookup was not counted", s)
	}
	if s.MemoryHits != 1 || s.Misses != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestClosed(t *testing.T) {
	c := newCache(t, newFake("fake", 8), embedcache.Options{Path: filepath.Join(t.TempDir(), "c.db")})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := c.Embed(context.Background(), []string{"a"})
	if got := engram.ErrorCode(err); got != engram.EUNAVAILABLE {
		t.Fatalf("error code %q after Close, want unavailable", got)
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	garbage := filepath.Join(dir, "garbage.db")
	for _, p := range []string{notDir, garbage} {
		if err := os.WriteFile(p, []byte(strings.Repeat("this is not a database ", 100)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		inner engram.Embedder
		opts  embedcache.Options
		code  string
	}{
		{"nil inner", nil, embedcache.Options{}, engram.EINVALID},
		{"negative bytes", newFake("f", 2), embedcache.Options{MaxBytes: -1}, engram.EINVALID},
		{"query in path", newFake("f", 2), embedcache.Options{Path: filepath.Join(dir, "a?mode=ro")}, engram.EINVALID},
		{"memory path", newFake("f", 2), embedcache.Options{Path: ":memory:"}, engram.EINVALID},
		{"parent is a file", newFake("f", 2), embedcache.Options{Path: filepath.Join(notDir, "c.db")}, engram.EUNAVAILABLE},
		{"not a database", newFake("f", 2), embedcache.Options{Path: garbage}, engram.EUNAVAILABLE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := embedcache.New(tc.inner, tc.opts)
			if err == nil {
				c.Close()
			}
			if got := engram.ErrorCode(err); got != tc.code {
				t.Fatalf("error code %q, want %q (err %v)", got, tc.code, err)
			}
		})
	}
}

func TestConcurrentCallsEmbedEachTextOnce(t *testing.T) {
	f := newFake("fake", 16)
	f.delay = 5 * time.Millisecond
	c := newCache(t, f, embedcache.Options{Path: filepath.Join(t.TempDir(), "c.db")})

	const workers, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				// Overlapping windows over 40 texts, with a repeat.
				in := make([]string, 0, 12)
				for i := range 10 {
					in = append(in, fmt.Sprintf("t%d", (w*3+r*2+i)%40))
				}
				in = append(in, in[0])
				vecs, err := c.Embed(context.Background(), in)
				if err != nil {
					errs <- err
					return
				}
				for i, v := range vecs {
					if !slices.Equal(v, fakeVector("fake", in[i], 16)) {
						errs <- fmt.Errorf("worker %d: wrong vector for %q", w, in[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	got := f.embedded()
	seen := map[string]bool{}
	for _, s := range got {
		if seen[s] {
			t.Errorf("%q was embedded more than once", s)
		}
		seen[s] = true
	}
	s := c.Stats()
	if s.Misses != int64(len(seen)) {
		t.Errorf("stats %+v: misses != %d distinct texts embedded", s, len(seen))
	}
	t.Logf("stats %+v", s)
}

func TestWaiterRecoversFromOwnersCancellation(t *testing.T) {
	f := newFake("fake", 8)
	f.delay = 200 * time.Millisecond
	c := newCache(t, f, embedcache.Options{})

	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctxA, []string{"shared"})
		errA <- err
	}()
	// Let A become the owner of "shared" before B asks for it.
	for len(f.Calls()) == 0 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	var vecB [][]float32
	var errB error
	go func() {
		vecB, errB = c.Embed(context.Background(), []string{"shared"})
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	cancelA()

	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Fatalf("A: err = %v, want context.Canceled", err)
	}
	<-done
	if errB != nil {
		t.Fatalf("B failed with A's cancellation: %v", errB)
	}
	checkVectors(t, "fake", 8, []string{"shared"}, vecB)
	if got := len(f.Calls()); got != 2 {
		t.Fatalf("%d inner calls, want 2 (A's cancelled one and B's)", got)
	}
}

func TestOverOpenAIEmbedder(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 24})
	cfg := openai.Config{BaseURL: srv.URL(), Model: "m", Logger: quiet()}
	path := filepath.Join(t.TempDir(), "embeddings-cache.db")
	in := []string{"the cat", "the dog", "the cat"}

	for round := range 2 {
		e, err := openai.NewEmbedder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := newCache(t, e, embedcache.Options{Path: path})
		vecs := embed(t, c, in...)
		for i, v := range vecs {
			want := openaitest.Vector(in[i], 24)
			for j := range v {
				if math.Abs(float64(v[j]-want[j])) > 1e-6 {
					t.Fatalf("round %d: vector %d differs from the server's", round, i)
				}
			}
		}
		c.Close()
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !slices.Equal(reqs[0].Embedding.Input, []string{"the cat", "the dog"}) {
		t.Fatalf("server saw %d requests (first input %q); want one with the two distinct texts", len(reqs), reqs[0].Embedding.Input)
	}
}

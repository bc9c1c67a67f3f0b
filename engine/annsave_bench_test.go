package engine_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/vector"
)

// clusterEmbedder maps a text to a unit vector near one of 1,000 random
// centres (picked by the text's hash): data with the structure of real
// embeddings, for benchmarks.
type clusterEmbedder struct {
	dim     int
	once    sync.Once
	centres [][]float32
}

func (c *clusterEmbedder) Name() string { return "cluster" }
func (c *clusterEmbedder) Dim() int     { return c.dim }

func (c *clusterEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.once.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		for range 1000 {
			c.centres = append(c.centres, gaussian(r, c.dim, 1))
		}
	})
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		seed := h.Sum64()
		r := rand.New(rand.NewPCG(seed, 3))
		v := gaussian(r, c.dim, 0.6)
		for j, x := range c.centres[seed%uint64(len(c.centres))] {
			v[j] += x
		}
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(ss))
		}
		out[i] = v
	}
	return out, nil
}

func gaussian(r *rand.Rand, dim int, scale float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale / math.Sqrt(float64(dim)))
	}
	return v
}

// BenchmarkRestart measures how long an engine that restarts over a store
// holding one user's ENGRAM_BENCH_N (default 100,000) 512-dimensional
// memories takes until a search is answered from the graph: loading the
// saved index (load-s) against reading the vectors from the store and
// building the graph (rebuild-s). It also reports the index file's size
// per vector. Writing the store and the first build take minutes.
//
//	go test -bench BenchmarkRestart -run '^$' -benchtime 1x -timeout 2h ./engine/
func BenchmarkRestart(b *testing.B) {
	n := 100_000
	if s := os.Getenv("ENGRAM_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("ENGRAM_BENCH_N=%q is not a positive integer", s)
		}
	}
	ctx := context.Background()
	dir := b.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	emb := &clusterEmbedder{dim: 512}
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u"}
	var auto *vector.Auto
	open := func(indexDir string) *engine.Engine {
		e, err := engine.New(ctx, db, engine.Options{
			Embedder: emb, IndexDir: indexDir, Logger: slog.New(slog.DiscardHandler),
			NewIndex: func(dim int) vector.Index {
				auto = vector.NewAuto(dim, vector.AutoConfig{Threshold: min(vector.DefaultThreshold, n/2)})
				return auto
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	// ready searches once and waits until the graph answers.
	ready := func(e *engine.Engine) time.Duration {
		start := time.Now()
		if _, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "memory 7", Channels: []string{"dense"}}); err != nil {
			b.Fatal(err)
		}
		if err := auto.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		if !auto.Approximate() {
			b.Fatal("the index is not a graph")
		}
		return time.Since(start)
	}

	annDir := filepath.Join(dir, "ann")
	e := open(annDir)
	fill(b, e, ns, n)
	built := ready(e)
	if err := e.SaveIndexes(ctx); err != nil {
		b.Fatal(err)
	}
	e.Close()
	files, _ := filepath.Glob(filepath.Join(annDir, "*", "*.hnsw"))
	if len(files) != 1 {
		b.Fatalf("saved index files: %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("n=%d: first build %.1fs, index file %d bytes", n, built.Seconds(), fi.Size())

	b.Run(fmt.Sprintf("load/n=%d", n), func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			e := open(annDir)
			total += ready(e)
			e.Close()
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "ready-s")
		b.ReportMetric(float64(fi.Size())/float64(n), "file-B/vec")
	})
	b.Run(fmt.Sprintf("rebuild/n=%d", n), func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			e := open("")
			total += ready(e)
			e.Close()
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "ready-s")
	})
}

// fill adds n memories to ns in batches.
func fill(b *testing.B, e *engine.Engine, ns engram.Namespace, n int) {
	const batch = 1000
	for i := 0; i < n; i += batch {
		var ms []engram.Memory
		for j := i; j < min(n, i+batch); j++ {
			ms = append(ms, engram.Memory{Kind: engram.KindSemantic, Value: fmt.Sprintf("memory %d", j)})
		}
		if _, err := e.AddMemories(context.Background(), engram.AddMemoriesRequest{Namespace: ns, Memories: ms}); err != nil {
			b.Fatal(err)
		}
	}
}

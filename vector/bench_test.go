package vector_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/vector"
	"github.com/engramhq/engram/vector/internal/synth"
)

// The benchmark data: 1,000 Gaussian clusters of unit vectors in 512
// dimensions (see synth.NewMixture), queries drawn from the same mixture.
const (
	benchDim      = 512
	benchClusters = 1000
	benchQueries  = 200
)

// benchN is the ANN benchmark size: ENGRAM_BENCH_N, default 100,000.
func benchN(b *testing.B) int {
	s := os.Getenv("ENGRAM_BENCH_N")
	if s == "" {
		return 100_000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("ENGRAM_BENCH_N=%q is not a positive integer", s)
	}
	return n
}

type benchData struct {
	ids     []string
	vecs    [][]float32
	queries [][]float32
}

var benchCache = map[int]*benchData{}
var benchMu sync.Mutex

func loadBench(n int) *benchData {
	benchMu.Lock()
	defer benchMu.Unlock()
	if d := benchCache[n]; d != nil {
		return d
	}
	mix := synth.NewMixture(1, benchDim, benchClusters, 1)
	d := &benchData{
		ids:     make([]string, n),
		vecs:    synth.Rows(mix.Sample(1, n), benchDim),
		queries: synth.Rows(mix.Sample(2, benchQueries), benchDim),
	}
	for i := range d.ids {
		d.ids[i] = fmt.Sprintf("v%07d", i)
	}
	benchCache[n] = d
	return d
}

// timeQueries runs b.N searches, cycling through the queries, and reports
// the latency percentiles.
func timeQueries(b *testing.B, queries [][]float32, search func(q []float32)) {
	b.Helper()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		search(queries[i%len(queries)])
		lat = append(lat, time.Since(t))
		i++
	}
	slices.Sort(lat)
	at := func(p int) float64 { return float64(lat[max(0, (p*len(lat)+99)/100-1)]) / 1e6 }
	b.ReportMetric(at(50), "p50-ms")
	b.ReportMetric(at(95), "p95-ms")
}

// BenchmarkFlatSearch measures exact search latency by size, the basis of
// DefaultThreshold.
func BenchmarkFlatSearch(b *testing.B) {
	for _, n := range []int{5_000, 10_000, 20_000, 40_000, 80_000} {
		d := loadBench(n)
		f := vector.NewFlat(benchDim)
		for i, v := range d.vecs {
			if err := f.Add(d.ids[i], v); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			timeQueries(b, d.queries, func(q []float32) { f.Search(q, 10, nil) })
		})
	}
}

var annCache = map[int]*vector.HNSW{}

// BenchmarkANN measures the HNSW index at ENGRAM_BENCH_N vectors against
// the Flat baseline: build time and heap per vector (reported once, from
// the first build), recall@10 over 200 queries, and query latency.
//
//	go test -bench BenchmarkANN -run '^$' -benchtime 400x ./vector/
//	ENGRAM_BENCH_N=1000000 go test -bench BenchmarkANN -run '^$' -benchtime 400x -timeout 2h ./vector/
func BenchmarkANN(b *testing.B) {
	n := benchN(b)
	d := loadBench(n)
	f := vector.NewFlat(benchDim)
	for i, v := range d.vecs {
		if err := f.Add(d.ids[i], v); err != nil {
			b.Fatal(err)
		}
	}
	truth := make([][]vector.Result, len(d.queries))
	for i, q := range d.queries {
		truth[i] = f.Search(q, 10, nil)
	}
	b.Run(fmt.Sprintf("flat/n=%d", n), func(b *testing.B) {
		timeQueries(b, d.queries, func(q []float32) { f.Search(q, 10, nil) })
	})
	h := annCache[n]
	var build time.Duration
	var bytes uint64
	if h == nil {
		before := heapAlloc()
		t := time.Now()
		h = vector.NewHNSW(benchDim, vector.HNSWConfig{Seed: 1})
		if err := h.AddBatch(d.ids, d.vecs); err != nil {
			b.Fatal(err)
		}
		build = time.Since(t)
		bytes = heapAlloc() - before
		runtime.KeepAlive(d)
		annCache[n] = h
	}
	hit, total := 0, 0
	for i, q := range d.queries {
		h, t := recall(h.Search(q, 10, nil), truth[i])
		hit, total = hit+h, total+t
	}
	b.Run(fmt.Sprintf("hnsw/n=%d", n), func(b *testing.B) {
		timeQueries(b, d.queries, func(q []float32) { h.Search(q, 10, nil) })
		b.ReportMetric(float64(hit)/float64(total), "recall@10")
		if build > 0 {
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(float64(bytes)/float64(n), "heap-B/vec")
		}
	})
}

func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkGraphFile measures saving a graph of ENGRAM_BENCH_N vectors to
// a file (WriteTo, then fsync) and loading it back (ReadHNSW), against
// building it (reported once, from the first build, as build-s), with the
// file's size per vector. The loaded graph must answer the benchmark
// queries exactly as the saved one. With ENGRAM_BENCH_LATTICE=1 the graph
// is vector.LatticeGraph's, of the same shape and size, made in seconds
// instead of built (hours at a million vectors).
//
//	go test -bench BenchmarkGraphFile -run '^$' -benchtime 3x -timeout 1h ./vector/
//	ENGRAM_BENCH_LATTICE=1 ENGRAM_BENCH_N=1000000 go test -bench BenchmarkGraphFile -run '^$' -benchtime 2x ./vector/
func BenchmarkGraphFile(b *testing.B) {
	n := benchN(b)
	var d *benchData
	h := annCache[n]
	var build time.Duration
	if os.Getenv("ENGRAM_BENCH_LATTICE") != "" {
		h = vector.LatticeGraph(n, benchDim)
		d = &benchData{queries: vector.LatticeGraphQueries(20, benchDim)}
	} else if d = loadBench(n); h == nil {
		t := time.Now()
		h = vector.NewHNSW(benchDim, vector.HNSWConfig{Seed: 1})
		if err := h.AddBatch(d.ids, d.vecs); err != nil {
			b.Fatal(err)
		}
		build = time.Since(t)
		annCache[n] = h
	}
	path := filepath.Join(b.TempDir(), "graph.hnsw")
	save := func() int64 {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		size, err := h.WriteTo(f)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		return size
	}
	load := func() *vector.HNSW {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		g, err := vector.ReadHNSW(f, 0)
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	size := save()
	g := load()
	for i, q := range d.queries {
		if got, want := g.Search(q, 10, nil), h.Search(q, 10, nil); !slices.Equal(got, want) {
			b.Fatalf("query %d: the loaded graph found %v, the saved one %v", i, got, want)
		}
	}
	b.Run(fmt.Sprintf("save/n=%d", n), func(b *testing.B) {
		for b.Loop() {
			save()
		}
		b.ReportMetric(float64(size)/float64(n), "file-B/vec")
	})
	b.Run(fmt.Sprintf("load/n=%d", n), func(b *testing.B) {
		for b.Loop() {
			load()
		}
		if build > 0 {
			b.ReportMetric(build.Seconds(), "build-s")
		}
	})
}

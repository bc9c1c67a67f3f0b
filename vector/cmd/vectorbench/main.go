// Command vectorbench measures the vector package on synthetic clustered
// unit vectors: build time, memory, recall@k against exact search and
// query latency of the HNSW index, with the Flat index as the baseline.
//
// Usage:
//
//	go run ./vector/cmd/vectorbench -n 100000
//	go run ./vector/cmd/vectorbench -n 1000000 -ef 64,100,200
//
// Everything is seeded: the same flags give the same vectors and queries.
// Latencies are of one query at a time on an otherwise idle index.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/vector"
	"github.com/engramhq/engram/vector/internal/synth"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		slog.Error("vectorbench", "err", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("vectorbench", flag.ContinueOnError)
	n := fs.Int("n", 100_000, "vectors in the index")
	dim := fs.Int("dim", 512, "dimension")
	clusters := fs.Int("clusters", 1000, "Gaussian clusters")
	spread := fs.Float64("spread", 1, "cluster noise norm relative to the unit centre")
	nq := fs.Int("queries", 200, "queries (drawn from the same mixture, not in the index)")
	k := fs.Int("k", 10, "results per query")
	m := fs.Int("m", 0, "HNSW M (0: the default)")
	efc := fs.Int("efc", 0, "HNSW efConstruction (0: the default)")
	efs := fs.String("ef", "32,64,100,200", "comma-separated HNSW efSearch values to measure")
	lists := fs.Int("lists", 0, "IVF lists (0: 4·√n)")
	probes := fs.String("nprobe", "8,16,32,64", "comma-separated IVF nprobe values to measure")
	which := fs.String("index", "ivf,hnsw", "comma-separated indexes to measure: ivf, hnsw")
	seed := fs.Uint64("seed", 1, "seed of the mixture")
	noFlat := fs.Bool("noflat", false, "skip the flat latency baseline (ground truth is still exact)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the HNSW build to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	efList, err := ints(*efs)
	if err != nil {
		return fmt.Errorf("-ef: %w", err)
	}
	probeList, err := ints(*probes)
	if err != nil {
		return fmt.Errorf("-nprobe: %w", err)
	}

	fmt.Printf("vectorbench: n=%d dim=%d clusters=%d spread=%g queries=%d k=%d GOMAXPROCS=%d %s/%s%s\n",
		*n, *dim, *clusters, *spread, *nq, *k, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadavg())
	defer func() { fmt.Printf("done%s\n", loadavg()) }()

	t0 := time.Now()
	mix := synth.NewMixture(*seed, *dim, *clusters, *spread)
	data := synth.Rows(mix.Sample(1, *n), *dim)
	queries := synth.Rows(mix.Sample(2, *nq), *dim)
	ids := make([]string, *n)
	for i := range ids {
		ids[i] = fmt.Sprintf("v%07d", i)
	}
	fmt.Printf("data: generated in %v\n", time.Since(t0).Round(time.Millisecond))

	// Flat: the exact answers and the latency baseline.
	before := heap()
	t0 = time.Now()
	flat := vector.NewFlat(*dim)
	for i, v := range data {
		if err := flat.Add(ids[i], v); err != nil {
			return err
		}
	}
	flatBuild := time.Since(t0)
	flatMem := heap() - before
	truth := make([][]vector.Result, len(queries))
	flatLat := make([]time.Duration, len(queries))
	for i, q := range queries {
		t := time.Now()
		truth[i] = flat.Search(q, *k, nil)
		flatLat[i] = time.Since(t)
	}
	fp50, fp95 := pct(flatLat, 50), pct(flatLat, 95)
	fmt.Printf("flat: build %v, memory %s, query p50 %v p95 %v\n",
		flatBuild.Round(time.Millisecond), mib(flatMem), fp50, fp95)
	if *noFlat {
		fp50, fp95 = 0, 0
	}

	measure := func(label string, search func(q []float32) []vector.Result) {
		lat := make([]time.Duration, len(queries))
		hit, total, poor := 0, 0, 0
		for i, q := range queries {
			t := time.Now()
			got := search(q)
			lat[i] = time.Since(t)
			want := make(map[string]bool, len(truth[i]))
			for _, r := range truth[i] {
				want[r.ID] = true
			}
			h := 0
			for _, r := range got {
				if want[r.ID] {
					h++
				}
			}
			if 2*h < len(truth[i]) {
				poor++
			}
			hit += h
			total += len(truth[i])
		}
		p95 := pct(lat, 95)
		ratio := "-"
		if fp95 > 0 {
			ratio = fmt.Sprintf("%.1fx", float64(fp95)/float64(p95))
		}
		fmt.Printf("%12s %10.4f %10d %10v %10v %10v %14s\n", label, float64(hit)/float64(total), poor, pct(lat, 50), p95, slices.Max(lat).Round(time.Microsecond), ratio)
	}
	header := func() {
		fmt.Printf("%12s %10s %10s %10s %10s %10s %14s\n", "setting", "recall@"+strconv.Itoa(*k), "recall<.5", "p50", "p95", "max", "flat p95 / p95")
	}

	for idx := range strings.SplitSeq(*which, ",") {
		switch strings.TrimSpace(idx) {
		case "ivf":
			before := heap()
			t0 := time.Now()
			x, err := vector.BuildIVF(*dim, ids, data, vector.IVFConfig{Lists: *lists, Seed: *seed})
			if err != nil {
				return err
			}
			build := time.Since(t0)
			mem := heap() - before
			fmt.Printf("ivf: lists=%d build %v (%.0f vectors/s), memory %s (%.0f bytes/vector)\n",
				x.Lists(), build.Round(time.Millisecond), float64(*n)/build.Seconds(), mib(mem), float64(mem)/float64(*n))
			header()
			for _, p := range probeList {
				x.SetNProbe(p)
				measure(fmt.Sprintf("nprobe=%d", p), func(q []float32) []vector.Result { return x.Search(q, *k, nil) })
			}
			runtime.KeepAlive(x)
		case "hnsw":
			before := heap()
			t0 := time.Now()
			h := vector.NewHNSW(*dim, vector.HNSWConfig{M: *m, EfConstruction: *efc, Seed: *seed})
			if *cpuProfile != "" {
				f, err := os.Create(*cpuProfile)
				if err != nil {
					return err
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
			}
			err := h.AddBatch(ids, data)
			pprof.StopCPUProfile()
			if err != nil {
				return err
			}
			build := time.Since(t0)
			mem := heap() - before
			fmt.Printf("hnsw: M=%d efConstruction=%d (0: default) build %v (%.0f vectors/s), memory %s (%.0f bytes/vector)\n",
				*m, *efc, build.Round(time.Millisecond), float64(*n)/build.Seconds(), mib(mem), float64(mem)/float64(*n))
			header()
			for _, ef := range efList {
				h.SetEfSearch(ef)
				measure(fmt.Sprintf("ef=%d", ef), func(q []float32) []vector.Result { return h.Search(q, *k, nil) })
			}
			runtime.KeepAlive(h)
		default:
			return fmt.Errorf("-index: unknown index %q", idx)
		}
	}
	runtime.KeepAlive(data)
	runtime.KeepAlive(flat)
	return nil
}

// heap returns the live heap after a collection.
func heap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// pct returns the p-th percentile by the nearest-rank method.
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))].Round(time.Microsecond)
}

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("bad value %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// loadavg reports the machine's load, which explains noisy tail latencies
// on a shared machine; empty where /proc is missing.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return " (load average " + strings.Join(f[:3], " ") + ")"
}

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

// options are the command's flags, parsed.
type options struct {
	n, dim, clusters, nq, k, m, efc, lists int
	spread                                 float64
	efList, probeList                      []int
	which, cpuProfile                      string
	seed                                   uint64
	noFlat                                 bool
}

// bench is the generated data set, the exact answers and the flat
// latency baseline every index is measured against.
type bench struct {
	opt     options
	ids     []string
	data    [][]float32
	queries [][]float32
	truth   [][]vector.Result
	fp95    time.Duration // flat p95, 0 with -noflat
}

// run parses the flags, generates the data, measures the flat baseline and
// then each index asked for; it returns the first error met.
func run(args []string) error {
	opt, err := parseOptions(args)
	if err != nil {
		return err
	}
	fmt.Printf("vectorbench: n=%d dim=%d clusters=%d spread=%g queries=%d k=%d GOMAXPROCS=%d %s/%s%s\n",
		opt.n, opt.dim, opt.clusters, opt.spread, opt.nq, opt.k, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadavg())
	defer func() { fmt.Printf("done%s\n", loadavg()) }()

	b := generate(opt)
	flat, err := b.measureFlat()
	if err != nil {
		return err
	}
	for idx := range strings.SplitSeq(opt.which, ",") {
		switch strings.TrimSpace(idx) {
		case "ivf":
			err = b.measureIVF()
		case "hnsw":
			err = b.measureHNSW()
		default:
			err = fmt.Errorf("-index: unknown index %q", idx)
		}
		if err != nil {
			return err
		}
	}
	runtime.KeepAlive(b.data)
	runtime.KeepAlive(flat)
	return nil
}

// parseOptions parses args; it fails on an unknown flag or a bad -ef or
// -nprobe list.
func parseOptions(args []string) (options, error) {
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
		return options{}, err
	}
	efList, err := ints(*efs)
	if err != nil {
		return options{}, fmt.Errorf("-ef: %w", err)
	}
	probeList, err := ints(*probes)
	if err != nil {
		return options{}, fmt.Errorf("-nprobe: %w", err)
	}
	return options{n: *n, dim: *dim, clusters: *clusters, nq: *nq, k: *k, m: *m, efc: *efc, lists: *lists,
		spread: *spread, efList: efList, probeList: probeList, which: *which, cpuProfile: *cpuProfile,
		seed: *seed, noFlat: *noFlat}, nil
}

// generate draws the indexed vectors and the queries from one seeded
// mixture and names the vectors.
func generate(opt options) *bench {
	t0 := time.Now()
	mix := synth.NewMixture(opt.seed, opt.dim, opt.clusters, opt.spread)
	b := &bench{
		opt:     opt,
		data:    synth.Rows(mix.Sample(1, opt.n), opt.dim),
		queries: synth.Rows(mix.Sample(2, opt.nq), opt.dim),
		ids:     make([]string, opt.n),
	}
	for i := range b.ids {
		b.ids[i] = fmt.Sprintf("v%07d", i)
	}
	fmt.Printf("data: generated in %v\n", time.Since(t0).Round(time.Millisecond))
	return b
}

// measureFlat builds the Flat index, records the exact answers and prints
// its build time, memory and latency: the baseline.
func (b *bench) measureFlat() (*vector.Flat, error) {
	before := heap()
	t0 := time.Now()
	flat := vector.NewFlat(b.opt.dim)
	for i, v := range b.data {
		if err := flat.Add(b.ids[i], v); err != nil {
			return nil, err
		}
	}
	flatBuild := time.Since(t0)
	flatMem := heap() - before
	b.truth = make([][]vector.Result, len(b.queries))
	flatLat := make([]time.Duration, len(b.queries))
	for i, q := range b.queries {
		t := time.Now()
		b.truth[i] = flat.Search(q, b.opt.k, nil)
		flatLat[i] = time.Since(t)
	}
	fp50, fp95 := pct(flatLat, 50), pct(flatLat, 95)
	fmt.Printf("flat: build %v, memory %s, query p50 %v p95 %v\n",
		flatBuild.Round(time.Millisecond), mib(flatMem), fp50, fp95)
	if b.opt.noFlat {
		fp95 = 0
	}
	b.fp95 = fp95
	return flat, nil
}

// measureIVF builds the IVF index and measures it at each -nprobe.
func (b *bench) measureIVF() error {
	before, t0 := heap(), time.Now()
	x, err := vector.BuildIVF(b.opt.dim, b.ids, b.data, vector.IVFConfig{Lists: b.opt.lists, Seed: b.opt.seed})
	if err != nil {
		return err
	}
	build, mem := time.Since(t0), heap()-before
	fmt.Printf("ivf: lists=%d build %v (%.0f vectors/s), memory %s (%.0f bytes/vector)\n",
		x.Lists(), build.Round(time.Millisecond), float64(b.opt.n)/build.Seconds(), mib(mem), float64(mem)/float64(b.opt.n))
	b.sweep("nprobe", b.opt.probeList, x.SetNProbe, func(q []float32) []vector.Result { return x.Search(q, b.opt.k, nil) })
	runtime.KeepAlive(x)
	return nil
}

// measureHNSW builds the HNSW index (under the CPU profiler with
// -cpuprofile) and measures it at each -ef.
func (b *bench) measureHNSW() error {
	before, t0 := heap(), time.Now()
	h := vector.NewHNSW(b.opt.dim, vector.HNSWConfig{M: b.opt.m, EfConstruction: b.opt.efc, Seed: b.opt.seed})
	if b.opt.cpuProfile != "" {
		f, err := os.Create(b.opt.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	err := h.AddBatch(b.ids, b.data)
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	build, mem := time.Since(t0), heap()-before
	fmt.Printf("hnsw: M=%d efConstruction=%d (0: default) build %v (%.0f vectors/s), memory %s (%.0f bytes/vector)\n",
		b.opt.m, b.opt.efc, build.Round(time.Millisecond), float64(b.opt.n)/build.Seconds(), mib(mem), float64(mem)/float64(b.opt.n))
	b.sweep("ef", b.opt.efList, h.SetEfSearch, func(q []float32) []vector.Result { return h.Search(q, b.opt.k, nil) })
	runtime.KeepAlive(h)
	return nil
}

// sweep prints the column titles, then one measure row per value of the
// setting name, applied through set before its row.
func (b *bench) sweep(name string, values []int, set func(int), search func(q []float32) []vector.Result) {
	b.header()
	for _, v := range values {
		set(v)
		b.measure(fmt.Sprintf("%s=%d", name, v), search)
	}
}

// header prints the column titles of the measure rows.
func (b *bench) header() {
	fmt.Printf("%12s %10s %10s %10s %10s %10s %14s\n", "setting", "recall@"+strconv.Itoa(b.opt.k), "recall<.5", "p50", "p95", "max", "flat p95 / p95")
}

// measure runs every query through search and prints one row: recall
// against the exact answers, queries under half recall, latency
// percentiles and the speed-up over the flat p95.
func (b *bench) measure(label string, search func(q []float32) []vector.Result) {
	lat := make([]time.Duration, len(b.queries))
	hit, total, poor := 0, 0, 0
	for i, q := range b.queries {
		t := time.Now()
		got := search(q)
		lat[i] = time.Since(t)
		h := hits(b.truth[i], got)
		if 2*h < len(b.truth[i]) {
			poor++
		}
		hit += h
		total += len(b.truth[i])
	}
	p95 := pct(lat, 95)
	ratio := "-"
	if b.fp95 > 0 {
		ratio = fmt.Sprintf("%.1fx", float64(b.fp95)/float64(p95))
	}
	fmt.Printf("%12s %10.4f %10d %10v %10v %10v %14s\n", label, float64(hit)/float64(total), poor, pct(lat, 50), p95, slices.Max(lat).Round(time.Microsecond), ratio)
}

// hits counts the results of got that are among truth.
func hits(truth, got []vector.Result) int {
	want := make(map[string]bool, len(truth))
	for _, r := range truth {
		want[r.ID] = true
	}
	h := 0
	for _, r := range got {
		if want[r.ID] {
			h++
		}
	}
	return h
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

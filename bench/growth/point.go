package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/vector"
)

// Point is one measurement: a backend holding Tenants namespaces of
// PerTenant memories each, searched Queries times.
type Point struct {
	Backend   string `json:"backend"` // sqlite or postgres
	Shape     string `json:"shape"`   // "1ns" (one namespace) or "tenants"
	Tenants   int    `json:"tenants"`
	PerTenant int    `json:"per_tenant"`
	Memories  int    `json:"memories"` // Tenants × PerTenant
	Dim       int    `json:"dim"`
	Queries   int    `json:"queries"`

	LoadSeconds  float64 `json:"load_seconds"`     // writing the memories and their vectors
	ReadySeconds float64 `json:"ready_seconds"`    // first search of every namespace, until its indexes answer
	ColdP50Ms    float64 `json:"cold_p50_ms"`      // first searches (tenants shape only)
	ColdP95Ms    float64 `json:"cold_p95_ms"`      //
	P50Ms        float64 `json:"p50_ms"`           // warm searches, query vector precomputed
	P95Ms        float64 `json:"p95_ms"`           //
	P99Ms        float64 `json:"p99_ms"`           //
	CPUMsPerQ    float64 `json:"cpu_ms_per_query"` // process CPU time over the timed searches / Queries: what the load of other jobs does not inflate
	HitsPerQuery float64 `json:"hits_per_query"`   // to show the searches found something
	Approximate  bool    `json:"approximate"`      // the vector index of the (first) namespace is a graph

	HeapBaseMB   float64 `json:"heap_base_mb"`    // heap in use before loading
	HeapInUseMB  float64 `json:"heap_in_use_mb"`  // heap in use after the searches, after a GC
	RSSMB        float64 `json:"rss_mb"`          // resident set after the searches
	PeakRSSMB    float64 `json:"peak_rss_mb"`     // the process's high-water mark, loading included
	HeapPerMemKB float64 `json:"heap_per_mem_kb"` // (HeapInUse - HeapBase) / Memories

	// With --restart (one namespace): the indexes saved to files, the
	// engine closed and a new one opened over the same store.
	SaveSeconds       float64 `json:"save_seconds,omitempty"`         // SaveIndexes after the build
	RestartSeconds    float64 `json:"restart_seconds,omitempty"`      // new engine until its first search answered, graph loaded
	RestartP50Ms      float64 `json:"restart_p50_ms,omitempty"`       // warm searches of the new engine
	RestartP95Ms      float64 `json:"restart_p95_ms,omitempty"`       //
	RestartLaterP50Ms float64 `json:"restart_later_p50_ms,omitempty"` // searches after ten seconds idle (background loading done)
	RestartLaterP95Ms float64 `json:"restart_later_p95_ms,omitempty"` //
	RestartApprox     bool    `json:"restart_approximate,omitempty"`  // the new engine answered from a graph at once
	RestartPeakRSSMB  float64 `json:"restart_peak_rss_mb,omitempty"`  // the high-water mark counted from the restart

	Measured string `json:"measured"`       // when, RFC 3339
	Note     string `json:"note,omitempty"` // what a reader must know about this figure, added by hand
	Load     string `json:"load"`           // /proc/loadavg before the searches
}

// Key names the point in results.json.
func (p Point) Key() string {
	return fmt.Sprintf("%s/%s/%dx%d", p.Backend, p.Shape, p.Tenants, p.PerTenant)
}

// batch is how many memories one store transaction writes.
const batch = 2000

// corpus is a store filled for one point, with an engine over it whose
// indexes are built.
type corpus struct {
	e       *engine.Engine
	st      engram.Store
	opts    engine.Options // the engine's, for a restart
	autos   func() []*vector.Auto
	emb     *hashEmbedder
	nss     []engram.Namespace
	g       *gen
	cleanup func()
}

// build fills a fresh store for p, searches once in every namespace and
// waits for the indexes, and returns p with its load and first-search
// figures. pgURL is the PostgreSQL server to make a throwaway schema in.
// On an error everything made so far is removed.
func build(ctx context.Context, p Point, pgURL string) (*corpus, Point, error) {
	c, err := openCorpus(ctx, p, pgURL)
	if err != nil {
		return nil, p, err
	}
	p.HeapBaseMB = heapMB()
	for _, step := range []func(context.Context, *Point) error{c.load, c.firstSearches, c.saveIndexes} {
		if err := step(ctx, &p); err != nil {
			c.cleanup()
			return nil, p, err
		}
	}
	return c, p, nil
}

// openCorpus opens an empty store for p and an engine over it that records
// the vector indexes it makes (with an index directory under --restart for
// one namespace); c.cleanup closes and removes both.
func openCorpus(ctx context.Context, p Point, pgURL string) (*corpus, error) {
	st, cleanup, err := openStore(ctx, p.Backend, pgURL)
	if err != nil {
		return nil, err
	}
	c := &corpus{st: st, emb: &hashEmbedder{dim: p.Dim}, g: newGen(99), cleanup: cleanup}
	c.opts = c.engineOptions()
	if restart && p.Tenants == 1 {
		dir, err := os.MkdirTemp("", "growth-index-*")
		if err != nil {
			cleanup()
			return nil, err
		}
		c.opts.IndexDir = dir
		closeStore := cleanup
		cleanup = func() { closeStore(); os.RemoveAll(dir) }
	}
	c.e, err = engine.New(ctx, st, c.opts)
	if err != nil {
		cleanup()
		return nil, err
	}
	c.cleanup = func() {
		if c.e != nil {
			c.e.Close()
		}
		cleanup()
	}
	return c, nil
}

// engineOptions returns the engine's options over c's embedder and sets
// c.autos to hand over (once each) the vector indexes the engine makes.
func (c *corpus) engineOptions() engine.Options {
	var (
		mu    sync.Mutex
		autos []*vector.Auto
	)
	c.autos = func() []*vector.Auto {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(autos)
		autos = nil
		return out
	}
	return engine.Options{
		Embedder: c.emb, Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour,
		IndexSaveEvery: 24 * time.Hour, // saved when the bench says so
		RowCacheBytes:  rowCacheMB << 20,
		NewIndex: func(dim int) vector.Index {
			a := vector.NewAuto(dim, vector.AutoConfig{})
			mu.Lock()
			autos = append(autos, a)
			mu.Unlock()
			return a
		},
	}
}

// load makes p's namespaces, fills each with p.PerTenant memories and
// records the time it took in p.
func (c *corpus) load(ctx context.Context, p *Point) error {
	c.nss = make([]engram.Namespace, p.Tenants)
	for i := range c.nss {
		c.nss[i] = engram.Namespace{Org: fmt.Sprintf("org%05d", i), Project: "app", User: "u1"}
	}
	start := time.Now()
	if err := fill(ctx, c.st, c.emb, c.nss, p.PerTenant); err != nil {
		return err
	}
	p.LoadSeconds = time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "growth: %s: loaded %d memories in %.1fs\n", p.Key(), p.Memories, p.LoadSeconds)
	return nil
}

// firstSearches searches once in every namespace, which builds its
// indexes, waits for them, and records in p the time until ready, whether
// a graph answers and (tenants shape) the first searches' latency.
func (c *corpus) firstSearches(ctx context.Context, p *Point) error {
	start := time.Now()
	var cold []time.Duration
	for _, ns := range c.nss {
		q := c.g.query()
		c.emb.Precompute([]string{q})
		t := time.Now()
		if _, err := c.e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: q, K: 10}); err != nil {
			return err
		}
		cold = append(cold, time.Since(t))
	}
	waitFor := c.autos()
	for _, a := range waitFor {
		if err := a.Wait(ctx); err != nil {
			return err
		}
	}
	p.ReadySeconds = time.Since(start).Seconds()
	// An engine with an index directory makes an index to try its file
	// before the one it loads from the store: any graph counts.
	p.Approximate = slices.ContainsFunc(waitFor, (*vector.Auto).Approximate)
	if p.Tenants > 1 {
		p.ColdP50Ms, p.ColdP95Ms = pct(cold, 50), pct(cold, 95)
	}
	return nil
}

// saveIndexes saves the built indexes when the engine has an index
// directory, and records the time it took in p.
func (c *corpus) saveIndexes(ctx context.Context, p *Point) error {
	if c.opts.IndexDir == "" {
		return nil
	}
	start := time.Now()
	if err := c.e.SaveIndexes(ctx); err != nil {
		return err
	}
	p.SaveSeconds = time.Since(start).Seconds()
	return nil
}

// restart closes the engine, whose indexes were saved, opens a new one
// over the same store and index directory, and times its first search
// (which loads the saved graph and text index) and then warm ones. The
// old engine's memory is collected first, so the peak counts the new
// engine only (on Linux, VmHWM is reset through /proc/self/clear_refs).
func (c *corpus) restart(ctx context.Context, p Point) (Point, error) {
	if err := c.e.Close(); err != nil {
		return p, err
	}
	c.e = nil
	runtime.GC()
	debug.FreeOSMemory()
	resetPeak()
	qs := c.queries(201)
	stop, err := startProfile(restartProfile)
	if err != nil {
		return p, err
	}
	start := time.Now()
	e, err := engine.New(ctx, c.st, c.opts)
	if err != nil {
		stop()
		return p, err
	}
	c.e = e
	_, err = c.search(ctx, 0, qs[0])
	stop()
	if err != nil {
		return p, err
	}
	p.RestartSeconds = time.Since(start).Seconds()
	p.RestartApprox = slices.ContainsFunc(c.autos(), (*vector.Auto).Approximate)
	lat, err := c.timed(ctx, qs[1:101])
	if err != nil {
		return p, err
	}
	p.RestartP50Ms, p.RestartP95Ms = pct(lat, 50), pct(lat, 95)
	// What the engine loads in the background after its first answer
	// (the row cache) has had time to finish.
	time.Sleep(10 * time.Second)
	if lat, err = c.timed(ctx, qs[101:]); err != nil {
		return p, err
	}
	p.RestartLaterP50Ms, p.RestartLaterP95Ms = pct(lat, 50), pct(lat, 95)
	p.RestartPeakRSSMB = procMB("VmHWM:")
	return p, nil
}

// timed runs the queries qs and returns how long each took.
func (c *corpus) timed(ctx context.Context, qs []string) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, len(qs))
	for i, q := range qs {
		t := time.Now()
		if _, err := c.search(ctx, i, q); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}

// queries returns n queries with their vectors made.
func (c *corpus) queries(n int) []string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = c.g.query()
	}
	c.emb.Precompute(qs)
	return qs
}

// search runs query i in the namespace whose turn it is and returns how
// many hits it found.
func (c *corpus) search(ctx context.Context, i int, q string) (int, error) {
	res, err := c.e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(c.nss[(i*7919)%len(c.nss)]), Query: q, K: 10})
	if err != nil {
		return 0, err
	}
	return len(res.Hits), nil
}

// measure builds one point and times p.Queries warm searches.
func measure(ctx context.Context, p Point, pgURL string) (Point, error) {
	c, p, err := build(ctx, p, pgURL)
	if err != nil {
		return p, err
	}
	defer c.cleanup()
	qs := c.queries(p.Queries)
	p.Load = loadavg()
	stop, err := startProfile(profile)
	if err != nil {
		return p, err
	}
	cpu0 := cpuTime()
	lat := make([]time.Duration, 0, len(qs))
	hits := 0
	for i, q := range qs {
		t := time.Now()
		n, err := c.search(ctx, i, q)
		lat = append(lat, time.Since(t))
		if err != nil {
			return p, err
		}
		hits += n
	}
	p.CPUMsPerQ = float64((cpuTime() - cpu0).Microseconds()) / 1000 / float64(len(qs))
	stop()
	p.P50Ms, p.P95Ms, p.P99Ms = pct(lat, 50), pct(lat, 95), pct(lat, 99)
	p.HitsPerQuery = float64(hits) / float64(len(qs))
	c.emb.pre = nil // not part of what the engine holds
	p.HeapInUseMB = heapMB()
	p.RSSMB, p.PeakRSSMB = procMB("VmRSS:"), procMB("VmHWM:")
	p.HeapPerMemKB = (p.HeapInUseMB - p.HeapBaseMB) * 1024 / float64(p.Memories)
	p.Measured = time.Now().UTC().Format(time.RFC3339)
	if c.opts.IndexDir != "" {
		return c.restart(ctx, p)
	}
	return p, nil
}

// restart is --restart: one-namespace points save their indexes and time
// a new engine's start (corpus.restart).
var restart bool

// rowCacheMB is --row-cache-mb: the engine's RowCacheBytes in megabytes
// (0 for its default, negative for none).
var rowCacheMB int64

// profile is where --cpuprofile writes the timed searches' CPU profile,
// and restartProfile where --restart-cpuprofile writes the restart's;
// empty for none.
var profile, restartProfile string

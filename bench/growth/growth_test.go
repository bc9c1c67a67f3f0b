package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSearch is one point of the growth curve as a Go benchmark:
// engine searches (query vectors made beforehand) over ENGRAM_BENCH_N
// memories (default 10,000) in one namespace, on SQLite, and on
// PostgreSQL when ENGRAM_TEST_POSTGRES_URL is set. It reports p50/p95 and
// the heap in use. Filling the store is not timed.
//
//	go test -run '^$' -bench Search -benchtime 500x ./bench/growth/
//	ENGRAM_BENCH_N=100000 bash scripts/pg.sh go test -run '^$' -bench Search -benchtime 500x -timeout 1h ./bench/growth/
func BenchmarkSearch(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	pgURL := os.Getenv("ENGRAM_TEST_POSTGRES_URL")
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(fmt.Sprintf("%s/n=%d", backend, n), func(b *testing.B) {
			if backend == "postgres" && pgURL == "" {
				b.Skip("ENGRAM_TEST_POSTGRES_URL is not set (run under scripts/pg.sh)")
			}
			ctx := context.Background()
			c, _, err := build(ctx, Point{Backend: backend, Shape: "1ns", Tenants: 1, PerTenant: n, Memories: n, Dim: 512}, pgURL)
			if err != nil {
				b.Fatal(err)
			}
			defer c.cleanup()
			qs := c.queries(min(b.N, 1000))
			lat := make([]time.Duration, 0, b.N)
			hits := 0
			b.ResetTimer()
			for i := range b.N {
				t := time.Now()
				got, err := c.search(ctx, i, qs[i%len(qs)])
				lat = append(lat, time.Since(t))
				if err != nil {
					b.Fatal(err)
				}
				hits += got
			}
			b.StopTimer()
			if hits == 0 {
				b.Fatal("no search found anything")
			}
			b.ReportMetric(pct(lat, 50), "p50-ms")
			b.ReportMetric(pct(lat, 95), "p95-ms")
			b.ReportMetric(heapMB(), "heap-MiB")
		})
	}
}

// TestPlotAndTable checks that the SVG and the README table are written
// from results, one row and one line per point, and that the table stays
// between its markers.
func TestPlotAndTable(t *testing.T) {
	ps := []Point{
		{Backend: "sqlite", Shape: "1ns", Tenants: 1, PerTenant: 1000, Memories: 1000, P50Ms: 1, P95Ms: 2, HeapInUseMB: 10, RSSMB: 50},
		{Backend: "sqlite", Shape: "1ns", Tenants: 1, PerTenant: 10000, Memories: 10000, P50Ms: 2, P95Ms: 4, HeapInUseMB: 60, RSSMB: 120},
		{Backend: "postgres", Shape: "tenants", Tenants: 100, PerTenant: 10, Memories: 1000, P50Ms: 3, P95Ms: 9, HeapInUseMB: 20, RSSMB: 70},
		{Backend: "sqlite", Shape: "1ns", Tenants: 1, PerTenant: 100000, Memories: 100000, P50Ms: 6, P95Ms: 12, SaveSeconds: 1.1, RestartSeconds: 2.5, RestartApprox: true, RestartP50Ms: 6.2, RestartP95Ms: 14, RestartPeakRSSMB: 768},
	}
	svg := string(plot(ps))
	for _, want := range []string{"<svg", "</svg>", "SQLite", "dotted CPU", "10k", "<polyline"} {
		if !contains(svg, want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
	path := t.TempDir() + "/README.md"
	if err := os.WriteFile(path, []byte("intro\n"+tableStart+"\nold\n"+tableEnd+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // rewriting keeps one table
		if err := writeTable(path, ps); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	for _, want := range []string{"intro\n", "| sqlite | 10000 | 2.00 / 4.00 / 0.00 | 0.00 ms", "| postgres | 100 tenants × 10 |", "| sqlite | 100000 | 1.1 s | 2.5 s | true | 6.20 / 14.00 | not measured | 768 MiB |", "after\n"} {
		if !contains(got, want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if contains(got, "old") {
		t.Errorf("the old table is still there:\n%s", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestRestartPoint measures a small one-namespace point with --restart:
// the indexes are saved, a new engine over the same store answers, and
// its figures are recorded.
func TestRestartPoint(t *testing.T) {
	restart = true
	t.Cleanup(func() { restart = false })
	p, err := measure(context.Background(), Point{Backend: "sqlite", Shape: "1ns", Tenants: 1, PerTenant: 300, Memories: 300, Dim: 64, Queries: 20}, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.HitsPerQuery == 0 || p.RestartSeconds <= 0 || p.RestartP50Ms <= 0 || p.RestartPeakRSSMB <= 0 {
		t.Errorf("restart figures missing: %+v", p)
	}
}

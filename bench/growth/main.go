// Command growth measures how engram's search latency and memory use grow
// with the number of memories: in one namespace of 1k, 10k, 100k (and,
// when asked, 1M) memories, and in 10k tenants of 100 memories each, on
// SQLite and on PostgreSQL. Each point runs in a process of its own (so
// its memory figures are its own): it writes generated memories with
// synthetic 512-dimensional vectors straight through the store in large
// transactions, searches once per namespace to build the engine's indexes
// (and waits for the vector graph), then times searches through the
// engine (dense, full-text and time channels, k=10) whose query vectors
// were made beforehand, so the figures leave out query embedding. It
// records p50/p95/p99, the heap in use after a collection and the
// resident set.
//
// Results are merged into results.json under --out (a point measured
// again replaces its old figure), and growth.svg and the table in
// README.md are written from that file; --plot rewrites them without
// measuring. Points can be measured one at a time, in parallel, with
// --point, and merged with --add.
//
//	go run ./bench/growth --backends sqlite
//	bash scripts/pg.sh go run ./bench/growth --backends postgres
//	go run ./bench/growth --backends sqlite --sizes 1000000 --tenants 0
//	go run ./bench/growth --plot
//	go build -o /tmp/growth ./bench/growth && /tmp/growth --point sqlite/10000/100 >> points.jsonl
//	go run ./bench/growth --add points.jsonl
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "growth:", err)
		os.Exit(1)
	}
}

// run parses the flags and then measures one point (--point), merges
// points (--add) or measures the planned points, and last rewrites the
// plot and the table; it returns the first error met.
func run(args []string) error {
	fs := flag.NewFlagSet("growth", flag.ContinueOnError)
	backends := fs.String("backends", "sqlite,postgres", "comma-separated backends to measure: sqlite, postgres")
	sizes := fs.String("sizes", "1000,10000,100000", "comma-separated sizes of the one-namespace corpus")
	tenants := fs.Int("tenants", 10_000, "tenants of the many-tenant corpus; 0 skips it")
	perTenant := fs.Int("per-tenant", 100, "memories per tenant of the many-tenant corpus")
	queries := fs.Int("queries", 1000, "timed searches per point")
	dim := fs.Int("dim", 512, "vector dimensions (USE-lite's is 512)")
	pgURL := fs.String("pg", os.Getenv("ENGRAM_TEST_POSTGRES_URL"), "PostgreSQL `URL` to make throwaway schemas in")
	out := fs.String("out", "bench/growth", "directory of results.json, growth.svg and README.md")
	plotOnly := fs.Bool("plot", false, "only rewrite growth.svg and the README table from results.json")
	add := fs.String("add", "", "merge the points in `FILE` (JSON lines, as --point prints them) into results.json instead of measuring")
	point := fs.String("point", "", "internal: measure one point, backend/tenants/per-tenant, and print it as JSON")
	cpuProfile := fs.String("cpuprofile", "", "with --point: write a CPU profile of the timed searches to `FILE`")
	restartFlag := fs.Bool("restart", false, "one-namespace points also save their indexes and time a restart that loads them")
	rowCache := fs.Int64("row-cache-mb", 0, "the engine's row cache in `megabytes` (serve --row-cache-mb); 0 for its default, -1 for none")
	restartProf := fs.String("restart-cpuprofile", "", "with --point and --restart: write a CPU profile of the restart, until its first answer, to `FILE`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *point != "" {
		slog.SetDefault(slog.New(slog.DiscardHandler)) // the stores' migration logs
		profile, restart, restartProfile, rowCacheMB = *cpuProfile, *restartFlag, *restartProf, *rowCache
		return measureOne(*point, *queries, *dim, *pgURL)
	}
	path := filepath.Join(*out, "results.json")
	results, err := readResults(path)
	if err != nil {
		return err
	}
	if *add != "" {
		if results, err = addPoints(path, *add, results); err != nil {
			return err
		}
	}
	if !*plotOnly && *add == "" {
		todo, err := plan(*backends, *sizes, *tenants, *perTenant)
		if err != nil {
			return err
		}
		child := func(p Point) (Point, error) { return runChild(p, *queries, *dim, *pgURL, *restartFlag, *rowCache) }
		if results, err = measureAll(path, todo, results, child); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "growth.svg"), plot(results), 0o644); err != nil {
		return err
	}
	return writeTable(filepath.Join(*out, "README.md"), results)
}

// plan returns the points to measure for each backend: one namespace of
// each size, then (tenants > 0) the many-tenant corpus; it fails on a size
// that is not a positive number.
func plan(backends, sizes string, tenants, perTenant int) ([]Point, error) {
	var todo []Point
	for _, b := range strings.Split(backends, ",") {
		for _, s := range strings.Split(sizes, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("--sizes: %q is not a positive number", s)
			}
			todo = append(todo, Point{Backend: b, Tenants: 1, PerTenant: n})
		}
		if tenants > 0 {
			todo = append(todo, Point{Backend: b, Tenants: tenants, PerTenant: perTenant})
		}
	}
	return todo, nil
}

// measureAll measures each point of todo through child, prints its
// summary line and writes results, with it merged, to path after each; it
// stops at the first error.
func measureAll(path string, todo, results []Point, child func(Point) (Point, error)) ([]Point, error) {
	for _, p := range todo {
		got, err := child(p)
		if err != nil {
			return results, err
		}
		fmt.Printf("%-34s load %7.1fs  ready %6.1fs  p50 %7.2f ms  p95 %7.2f ms  heap %7.1f MiB  rss %7.1f MiB\n",
			got.Key(), got.LoadSeconds, got.ReadySeconds, got.P50Ms, got.P95Ms, got.HeapInUseMB, got.RSSMB)
		results = merge(results, got)
		if err := writeResults(path, results); err != nil {
			return results, err
		}
	}
	return results, nil
}

// runChild measures p in a new process running this program with --point.
func runChild(p Point, queries, dim int, pgURL string, restart bool, rowCacheMB int64) (Point, error) {
	exe, err := os.Executable()
	if err != nil {
		return p, err
	}
	cmd := exec.Command(exe, "--point", fmt.Sprintf("%s/%d/%d", p.Backend, p.Tenants, p.PerTenant),
		"--queries", strconv.Itoa(queries), "--dim", strconv.Itoa(dim), "--pg", pgURL, "--restart="+strconv.FormatBool(restart),
		"--row-cache-mb", strconv.FormatInt(rowCacheMB, 10))
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return p, fmt.Errorf("measure %s: %w", p.Key(), err)
	}
	var got Point
	if err := json.Unmarshal(b, &got); err != nil {
		return p, fmt.Errorf("measure %s: %w", p.Key(), err)
	}
	return got, nil
}

// measureOne is the child's side of runChild.
func measureOne(spec string, queries, dim int, pgURL string) error {
	parts := strings.Split(spec, "/")
	if len(parts) != 3 {
		return fmt.Errorf("--point %q: want backend/tenants/per-tenant", spec)
	}
	t, err1 := strconv.Atoi(parts[1])
	n, err2 := strconv.Atoi(parts[2])
	if err := errors.Join(err1, err2); err != nil || t < 1 || n < 1 || queries < 1 {
		return fmt.Errorf("--point %q: tenants, memories and queries must be positive", spec)
	}
	p := Point{Backend: parts[0], Shape: "1ns", Tenants: t, PerTenant: n, Memories: t * n, Dim: dim, Queries: queries}
	if t > 1 {
		p.Shape = "tenants"
	}
	p, err := measure(context.Background(), p, pgURL)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(p)
}

// Markers around the generated table in README.md.
const (
	tableStart = "<!-- table: written by go run ./bench/growth -->"
	tableEnd   = "<!-- end of table -->"
)

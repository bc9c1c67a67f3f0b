package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// addPoints merges the points of file (JSON lines, as --point prints them)
// into results and writes them to path; it fails on a point it cannot
// decode, before writing anything.
func addPoints(path, file string, results []Point) ([]Point, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return results, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var p Point
		if err := dec.Decode(&p); err != nil {
			return results, fmt.Errorf("%s: %w", file, err)
		}
		results = merge(results, p)
	}
	return results, writeResults(path, results)
}

func readResults(path string) ([]Point, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ps []Point
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

func writeResults(path string, ps []Point) error {
	b, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// merge puts p into ps in place of the point with its key, and keeps ps
// ordered by backend, shape and size.
func merge(ps []Point, p Point) []Point {
	ps = slices.DeleteFunc(ps, func(q Point) bool { return q.Key() == p.Key() })
	ps = append(ps, p)
	slices.SortFunc(ps, func(a, b Point) int {
		if c := strings.Compare(a.Backend, b.Backend); c != 0 {
			return c
		}
		if c := strings.Compare(a.Shape, b.Shape); c != 0 {
			return c
		}
		return a.Memories - b.Memories
	})
	return ps
}

// writeTable replaces the table between the markers of the README at path.
// writeRestarts adds the table of the points measured with --restart.
func writeRestarts(t *strings.Builder, ps []Point) {
	var rs []Point
	for _, p := range ps {
		if p.RestartSeconds > 0 {
			rs = append(rs, p)
		}
	}
	if len(rs) == 0 {
		return
	}
	t.WriteString("Restart (`--restart`): the indexes saved, the engine closed and a new one opened over the same store.\n\n")
	t.WriteString("| backend | memories | save | restart to first answer | from a graph | search p50 / p95 after (ms) | the same 10 s later (ms) | peak RSS after the restart |\n")
	t.WriteString("|---|---:|---:|---:|---|---:|---:|---:|\n")
	for _, p := range rs {
		later := "not measured"
		if p.RestartLaterP50Ms > 0 {
			later = fmt.Sprintf("%.2f / %.2f", p.RestartLaterP50Ms, p.RestartLaterP95Ms)
		}
		fmt.Fprintf(t, "| %s | %d | %.1f s | %.1f s | %v | %.2f / %.2f | %s | %.0f MiB |\n",
			p.Backend, p.Memories, p.SaveSeconds, p.RestartSeconds, p.RestartApprox, p.RestartP50Ms, p.RestartP95Ms, later, p.RestartPeakRSSMB)
	}
	t.WriteString("\n")
}

func writeTable(path string, ps []Point) error {
	readme, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(readme, []byte(tableStart)), bytes.Index(readme, []byte(tableEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q markers", path, tableStart, tableEnd)
	}
	var t strings.Builder
	t.WriteString(tableStart + "\n\n")
	t.WriteString("| backend | memories | search p50 / p95 / p99 (ms) | CPU per search | first search per namespace | heap in use | heap per memory | RSS (peak) | load | load average |\n")
	t.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range ps {
		size := fmt.Sprint(p.Memories)
		if p.Shape == "tenants" {
			size = fmt.Sprintf("%d tenants × %d", p.Tenants, p.PerTenant)
		}
		if p.Note != "" {
			size += " (" + p.Note + ")"
		}
		first := fmt.Sprintf("%.1f s (index ready)", p.ReadySeconds)
		if p.Shape == "tenants" {
			first = fmt.Sprintf("%.1f / %.1f ms p50/p95", p.ColdP50Ms, p.ColdP95Ms)
		}
		fmt.Fprintf(&t, "| %s | %s | %.2f / %.2f / %.2f | %.2f ms | %s | %.0f MiB | %.1f KiB | %.0f (%.0f) MiB | %.0f s | %s |\n",
			p.Backend, size, p.P50Ms, p.P95Ms, p.P99Ms, p.CPUMsPerQ, first, p.HeapInUseMB, p.HeapPerMemKB, p.RSSMB, p.PeakRSSMB, p.LoadSeconds, p.Load)
	}
	t.WriteString("\n")
	writeRestarts(&t, ps)
	out := append(append(slices.Clone(readme[:i]), t.String()...), readme[j:]...)
	return os.WriteFile(path, out, 0o644)
}

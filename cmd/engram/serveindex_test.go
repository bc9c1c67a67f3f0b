package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeIndexDir: with an embedder, engram serve keeps its saved vector
// indexes in DATA/ann/<store id>, or in --index-dir; "off" keeps none, and
// a directory it cannot write is logged, not fatal.
func TestServeIndexDir(t *testing.T) {
	t.Parallel()
	env := append(baseEnv(t), "ENGRAM_EMBEDDER=use-lite")
	storeDirs := func(dir string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*"))
		return m
	}

	data := t.TempDir()
	startServer(t, data, env)
	if got := storeDirs(filepath.Join(data, "ann")); len(got) != 1 {
		t.Fatalf("DATA/ann holds %v, want one store directory", got)
	}

	data, custom := t.TempDir(), filepath.Join(t.TempDir(), "indexes")
	startServer(t, data, append(env, "ENGRAM_INDEX_DIR="+custom))
	if got := storeDirs(custom); len(got) != 1 {
		t.Fatalf("ENGRAM_INDEX_DIR holds %v, want one store directory", got)
	}
	if _, err := os.Stat(filepath.Join(data, "ann")); !os.IsNotExist(err) {
		t.Fatalf("DATA/ann exists although ENGRAM_INDEX_DIR is set (%v)", err)
	}

	data = t.TempDir()
	startServer(t, data, env, "--index-dir", "off")
	if _, err := os.Stat(filepath.Join(data, "ann")); !os.IsNotExist(err) {
		t.Fatalf("DATA/ann exists with --index-dir off (%v)", err)
	}

	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, t.TempDir(), env, "--index-dir", filepath.Join(blocker, "ann"))
	if !strings.Contains(s.logs.String(), "will not be saved") {
		t.Fatalf("no warning for an index directory that cannot be created; log:\n%s", s.logs.String())
	}
}

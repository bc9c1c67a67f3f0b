package uselite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/uselite"
)

// linkModel makes a temporary model directory of symbolic links to the
// installed model's files, so a test can damage one file without copying
// (or touching) the others.
func linkModel(t *testing.T) string {
	t.Helper()
	loadModel(t) // fails with the `make model` hint if it is not installed
	src := uselite.DefaultDir()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// wantLoadError checks that Load fails as unavailable with a message that
// names the file problem and the command that fixes it.
func wantLoadError(t *testing.T, dir string, fragments ...string) {
	t.Helper()
	m, err := uselite.Load(dir)
	if err == nil || m != nil {
		t.Fatalf("Load(%s) = %v, %v; want an error", dir, m, err)
	}
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Errorf("code = %q, want %q (%v)", got, want, err)
	}
	for _, f := range append(fragments, "make model") {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}

func TestLoadMissingModel(t *testing.T) {
	wantLoadError(t, filepath.Join(t.TempDir(), "nowhere"), "not found")
}

func TestLoadDetectsDamage(t *testing.T) {
	dir := linkModel(t)
	shard := filepath.Join(dir, "group1-shard3of7")
	orig, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	// Replace the link by a file of our own before writing to it.
	if err := os.Remove(shard); err != nil {
		t.Fatal(err)
	}

	// A truncated shard, as an interrupted copy leaves it.
	if err := os.WriteFile(shard, orig[:len(orig)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	wantLoadError(t, dir, "group1-shard3of7", "corrupt")

	// One flipped bit keeps the size but not the digest.
	flipped := append([]byte(nil), orig...)
	flipped[12345] ^= 0x10
	if err := os.WriteFile(shard, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	wantLoadError(t, dir, "group1-shard3of7", "sha256")

	// A missing file is named as such. (The shard is restored so only the
	// vocabulary is at fault.)
	if err := os.WriteFile(shard, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "vocab.json")); err != nil {
		t.Fatal(err)
	}
	wantLoadError(t, dir, "vocab.json", "missing")
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("ENGRAM_MODEL_DIR", "/opt/models/use")
	if got, want := uselite.DefaultDir(), "/opt/models/use"; got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
	t.Setenv("ENGRAM_MODEL_DIR", "")
	t.Setenv("HOME", "/home/someone")
	if got, want := uselite.DefaultDir(), "/home/someone/.cache/engram/models/use-lite-0.2.0"; got != want {
		t.Errorf("DefaultDir() = %q, want %q", got, want)
	}
}

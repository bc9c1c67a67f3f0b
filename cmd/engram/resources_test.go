package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestResourcesCLI: add a Chinese and German Markdown file locally, find
// a paragraph with search, download it byte-identical, then over a
// server with a quota: add, list, download, another user's not found,
// over the quota refused, delete; bad input exits 2 naming what is wrong.
func TestResourcesCLI(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	files := t.TempDir()
	doc := []byte("# 手册\n\n长江是中国最长的河流。\n\n## Hinweis\n\nDie Fähre fährt stündlich.\n")
	src := filepath.Join(files, "handbuch.md")
	if err := os.WriteFile(src, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	local := localCLI(t, dir)
	var r engram.Resource
	local.json(&r, "resources", "add", "--user", "ann", "--source", "wiki", src)
	if r.Memories != 2 || r.Size != int64(len(doc)) || !strings.HasPrefix(r.MIMEType, "text/markdown") {
		t.Fatalf("resources add = %+v", r)
	}
	if out := local.ok("search", "--user", "ann", "Fähre stündlich"); !strings.Contains(out, "Die Fähre fährt stündlich.") {
		t.Errorf("search prints %q, want the paragraph", out)
	}
	copyPath := filepath.Join(files, "copy.md")
	local.ok("resources", "download", "--user", "ann", "-o", copyPath, r.ID)
	if got, _ := os.ReadFile(copyPath); !bytes.Equal(got, doc) {
		t.Errorf("downloaded %q, want %q", got, doc)
	}
	local.fail(2, "resources", "add", "--user", "ann", filepath.Join(files, "missing.md"))
	local.fail(2, "resources", "rename")

	env := baseEnv(t)
	srv := startServer(t, dir, env, "--resource-quota", "150")
	remote := &cli{t: t, env: env, extra: []string{"--server", srv.url}}
	if out := remote.ok("resources", "list", "--user", "ann"); !strings.Contains(out, r.ID) || !strings.Contains(out, "handbuch.md") {
		t.Errorf("resources list prints %q", out)
	}
	if out := remote.ok("resources", "download", "--user", "ann", r.ID); out != string(doc) {
		t.Errorf("download to stdout = %q", out)
	}
	if res := remote.run("resources", "get", "--user", "bob", r.ID); res.code == 0 || !strings.Contains(res.stderr, "not found") {
		t.Errorf("another user's get: exit %d, %q", res.code, res.stderr)
	}
	big := filepath.Join(files, "big.txt")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x "), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := remote.run("resources", "add", "--user", "ann", big); res.code == 0 || !strings.Contains(res.stderr, "quota of 150 bytes") {
		t.Errorf("over the quota: exit %d, %q", res.code, res.stderr)
	}
	remote.ok("resources", "delete", "--user", "ann", r.ID)
	if out := remote.ok("search", "--user", "ann", "Fähre stündlich"); strings.Contains(out, "Fähre") {
		t.Errorf("search after delete prints %q", out)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d\n%s", code, srv.logs.String())
	}
}

package codecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxReadmeLines is the most README.md may have: it is the front door,
// the reference lives in docs/.
const maxReadmeLines = 400

// TestReadmeLength fails when README.md grows past maxReadmeLines.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move reference material into docs/", n, maxReadmeLines)
	}
}

// TestReadmeLayout fails for a package of the tree (a directory holding
// non-test Go files) that the README's layout table does not name.
func TestReadmeLayout(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := layoutNames(string(b))
	if len(named) == 0 {
		t.Fatal("README.md has no layout table (a \"## Layout\" section with a | package | table)")
	}
	seen := map[string]bool{}
	for _, f := range tree(t) {
		dir := f.dir
		if dir == "" {
			dir = "engram"
		}
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if !named[dir] {
			t.Errorf("package %s is missing from the README's layout table", dir)
		}
	}
}

// TestLayoutNames checks the reading of a layout table: the backquoted
// names of its first column, several to a row.
func TestLayoutNames(t *testing.T) {
	md := "## Layout\n\n| package | owns |\n|---|---|\n| `engram` (root) | x |\n| `a`, `b/c` | y `d` |\n\n## Next\n| `e` | z |\n"
	got := layoutNames(md)
	for _, want := range []string{"engram", "a", "b/c"} {
		if !got[want] {
			t.Errorf("layoutNames misses %s", want)
		}
	}
	for _, not := range []string{"d", "e"} {
		if got[not] {
			t.Errorf("layoutNames has %s, outside the first column or the section", not)
		}
	}
}

var codeRE = regexp.MustCompile("`([^`]+)`")

// layoutNames returns the backquoted names in the first column of the
// table under the "## Layout" heading.
func layoutNames(md string) map[string]bool {
	out := map[string]bool{}
	_, sec, ok := strings.Cut("\n"+md, "\n## Layout\n")
	if !ok {
		return out
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range codeRE.FindAllStringSubmatch(cells[1], -1) {
			out[m[1]] = true
		}
	}
	return out
}

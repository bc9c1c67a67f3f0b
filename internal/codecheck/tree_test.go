package codecheck

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// module is the import path of the repository root.
const module = "github.com/engramhq/engram"

// srcFile is one non-test, non-generated Go file of the tree.
type srcFile struct {
	rel   string // slash path from the repository root
	dir   string // its directory, "" for the root
	fset  *token.FileSet
	f     *ast.File
	lines int // newlines, as wc -l counts them
}

var (
	treeOnce  sync.Once
	treeFiles []srcFile
	treeErr   error
)

// tree parses every Go file of the repository once, leaving out tests,
// generated files and the folders Go leaves out (testdata, dot and
// underscore folders) or that hold no code of ours (node_modules, vendor).
func tree(t *testing.T) []srcFile {
	t.Helper()
	treeOnce.Do(func() { treeFiles, treeErr = loadTree(filepath.Join("..", "..")) })
	if treeErr != nil {
		t.Fatal(treeErr)
	}
	return treeFiles
}

// loadTree parses the Go files below root; it fails on the first file
// that cannot be read or parsed.
func loadTree(root string) ([]srcFile, error) {
	var out []srcFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && skipDir(name) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		f, ok, err := parseSource(filepath.ToSlash(rel), src)
		if err != nil || !ok {
			return err
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// skipDir reports whether a folder of that name holds no code to check.
func skipDir(name string) bool {
	return name == "testdata" || name == "node_modules" || name == "vendor" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// parseSource parses the file at rel; ok is false for a generated file
// ("Code generated ... DO NOT EDIT.") or one built only by hand
// (//go:build ignore).
func parseSource(rel string, src []byte) (srcFile, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return srcFile{}, false, err
	}
	if ast.IsGenerated(f) || bytes.Contains(src, []byte("//go:build ignore\n")) {
		return srcFile{}, false, nil
	}
	dir := filepath.ToSlash(filepath.Dir(rel))
	if dir == "." {
		dir = ""
	}
	return srcFile{rel: rel, dir: dir, fset: fset, f: f, lines: bytes.Count(src, []byte("\n"))}, true, nil
}

// overLimit returns, sorted, a sentence for each entry of found that
// known does not list, or lists with a smaller count.
func overLimit(found, known map[string]int, limit int, unit string) []string {
	var out []string
	for k, n := range found {
		was, ok := known[k]
		switch {
		case !ok:
			out = append(out, k+": "+strconv.Itoa(n)+" "+unit+", over "+strconv.Itoa(limit))
		case n > was:
			out = append(out, k+": "+strconv.Itoa(n)+" "+unit+", grown from the allowed "+strconv.Itoa(was)+" (limit "+strconv.Itoa(limit)+")")
		}
	}
	sort.Strings(out)
	return out
}

// fixed returns, sorted, the entries of known that found no longer has:
// they can leave the allow-list.
func fixed(found, known map[string]int) []string {
	var out []string
	for k := range known {
		if _, ok := found[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// report fails t for each problem and logs the allow-list entries that
// can go.
func report(t *testing.T, problems, gone []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
	for _, g := range gone {
		t.Logf("%s now meets the limit: remove it from the allow-list", g)
	}
}

package codecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the longest a function of the search and write paths may be:
// beyond it a function stops reading as a list of named steps.
const maxLines = 80

// TestFunctionLength fails for a function over maxLines lines in the
// packages that carry the request paths (tests excluded).
func TestFunctionLength(t *testing.T) {
	for _, dir := range []string{"engine", "retrieval"} {
		path := filepath.Join("..", "..", dir)
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(path, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				from, to := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
				if n := to - from + 1; n > maxLines {
					t.Errorf("%s/%s: %s is %d lines, over %d", dir, name, fn.Name.Name, n, maxLines)
				}
			}
		}
	}
}

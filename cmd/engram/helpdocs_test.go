package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docRef is a reference to a document of the repository in a help text:
// README.md or docs/NAME.md, with an optional #anchor.
var docRef = regexp.MustCompile(`(README\.md|docs/[a-z0-9-]+\.md)(#[a-z0-9-]+)?`)

// TestHelpDocReferences: every document a command's help names (its usage
// and its flags) exists, with a heading for the anchor it names, and no help
// text sends the reader to "the README" without saying where.
func TestHelpDocReferences(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	root := filepath.Join("..", "..")
	var names []string
	for _, l := range lines(c.ok("help")) {
		if strings.HasPrefix(l, "  ") {
			names = append(names, strings.Fields(l)[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("help lists %d commands: %v", len(names), names)
	}
	refs := 0
	for _, name := range names {
		text := c.ok("help", name)
		if strings.Contains(text, "the README") {
			t.Errorf("help %s refers to the README without naming a section: %q", name, text)
		}
		for _, m := range docRef.FindAllStringSubmatch(text, -1) {
			refs++
			file, anchor := m[1], strings.TrimPrefix(m[2], "#")
			b, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Errorf("help %s names %s: %v", name, m[0], err)
				continue
			}
			if anchor != "" && !headingAnchors(string(b))[anchor] {
				t.Errorf("help %s names %s: %s has no heading with that anchor", name, m[0], file)
			}
		}
	}
	if refs == 0 {
		t.Error("no help text names a document; the check checks nothing")
	}
	if out := c.ok("help", "mcp"); !strings.Contains(out, `(default "mcp")`) {
		t.Errorf("help mcp does not show --actor's default mcp:\n%s", out)
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation dropped, spaces to hyphens, -N
// for a repeat.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

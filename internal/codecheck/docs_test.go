package codecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkRE finds the target of a Markdown link or image.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks fails for a relative link or #anchor in README.md or
// docs/*.md whose file does not exist or whose anchor names no heading.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	for _, f := range files {
		checkLinks(t, f)
	}
}

// checkLinks reports every broken relative link of one Markdown file.
func checkLinks(t *testing.T, file string) {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range linkRE.FindAllStringSubmatch(string(text), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		dest := file
		if path != "" {
			dest = filepath.Join(filepath.Dir(file), path)
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %q: %v", file, target, err)
				continue
			}
		}
		if anchor != "" && strings.HasSuffix(dest, ".md") && !hasAnchor(t, dest, anchor) {
			t.Errorf("%s: link %q: no heading with that anchor", file, target)
		}
	}
}

// hasAnchor reports whether a heading of file slugs to anchor by GitHub's
// rules (lower case, punctuation dropped, spaces to hyphens, -N for repeats).
func hasAnchor(t *testing.T, file, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		slug := slugify(strings.TrimLeft(line, "#"))
		n := seen[slug]
		seen[slug]++
		if n > 0 {
			slug += "-" + itoa(n)
		}
		if slug == anchor {
			return true
		}
	}
	return false
}

// slugify turns a heading's text into GitHub's anchor for it.
func slugify(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// itoa writes a small non-negative number in decimal.
func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestSlugify pins the GitHub anchor rules the link check relies on.
func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		" Five-minute tour":        "five-minute-tour",
		" MCP, Mem0 & OpenAI (v1)": "mcp-mem0--openai-v1",
		" `make run`":              "make-run",
	} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/textsearch"
)

// FuzzTSQuery checks the websearch_to_tsquery text built from arbitrary
// search text without a server: it is double-quoted phrases joined by
// " or ", every phrase words of letters, digits and marks separated by
// single spaces, so nothing a user types reaches PostgreSQL as query
// syntax (quotes, "-", "or", parentheses, backslashes, NUL).
func FuzzTSQuery(f *testing.F) {
	for _, s := range []string{
		"budget meeting", `"a" OR b* NEAR(`, "or OR Or", "-budget +x", "東京都 budget", "京",
		`'); DROP TABLE memories; --`, `a\"b`, "x <-> y & !z | (w)", "a\x00b", "\xff\xfe", "ǅemal İstanbul",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q := tsQuery(text)
		if q == "" {
			if len(textsearch.Terms(text)) != 0 {
				t.Fatalf("tsQuery(%q) is empty, but the text has terms", text)
			}
			return
		}
		if !utf8.ValidString(q) {
			t.Fatalf("tsQuery(%q) = %q, not valid UTF-8", text, q)
		}
		phrases := strings.Split(q, " or ")
		if len(phrases) > textsearch.MaxTerms {
			t.Fatalf("tsQuery(%q) has %d phrases, more than MaxTerms", text, len(phrases))
		}
		for _, p := range phrases {
			inner, ok := strings.CutPrefix(p, `"`)
			if ok {
				inner, ok = strings.CutSuffix(inner, `"`)
			}
			if !ok || inner == "" {
				t.Fatalf("tsQuery(%q) = %s: %q is not a quoted phrase", text, q, p)
			}
			for _, w := range strings.Split(inner, " ") {
				if w == "" || strings.IndexFunc(w, textsearch.IsSeparator) >= 0 {
					t.Fatalf("tsQuery(%q) = %s: phrase %q holds something other than words", text, q, p)
				}
			}
		}
	})
}

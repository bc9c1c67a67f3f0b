package textsearch_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/lang"
	"github.com/engramhq/engram/textsearch"
)

// FuzzTerms checks the tokenizer on arbitrary text: no panic, valid UTF-8
// in gives valid UTF-8 out, at most MaxTerms distinct terms, each
// lower-case, non-empty and free of separators, so that no character a
// user types survives into a backend's query syntax.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"", "budget meeting", `"a" OR b* NEAR(`, "東京都 budget", "私は東京に住んでいます",
		"Straße ÉCOLE İstanbul ǅemal", "der die das und", "-budget +x 'quoted' (paren)",
		"a\u0301e\u0308", "\xff\xfe bad", "ＡＢＣ １２３", "コーヒー ｺｰﾋｰ", "한국어 텍스트",
	} {
		f.Add(s)
	}
	tags := []string{"", lang.English, lang.German, lang.Spanish, lang.French, lang.Chinese, lang.Japanese}
	f.Fuzz(func(t *testing.T, s string) {
		valid := utf8.ValidString(s)
		for _, tag := range tags {
			terms := textsearch.TermsLang(tag, s)
			if len(terms) > textsearch.MaxTerms {
				t.Fatalf("TermsLang(%q, %q): %d terms, more than MaxTerms", tag, s, len(terms))
			}
			seen := make(map[string]bool, len(terms))
			for _, term := range terms {
				checkTerm(t, s, term)
				if seen[term] {
					t.Fatalf("TermsLang(%q, %q): term %q twice", tag, s, term)
				}
				seen[term] = true
			}
		}
		for _, term := range textsearch.Terms(s) {
			checkTerm(t, s, term)
		}
		seg := textsearch.Segment(s)
		if valid && !utf8.ValidString(seg) {
			t.Fatalf("Segment(%q) = %q, not valid UTF-8", s, seg)
		}
		words := textsearch.Words(s)
		if valid && !utf8.ValidString(words) {
			t.Fatalf("Words(%q) = %q, not valid UTF-8", s, words)
		}
		for _, w := range strings.Split(words, " ") {
			if words != "" && w == "" {
				t.Fatalf("Words(%q) = %q has an empty word", s, words)
			}
			if strings.IndexFunc(w, textsearch.IsSeparator) >= 0 {
				t.Fatalf("Words(%q): word %q holds a separator", s, w)
			}
		}
	})
}

func checkTerm(t *testing.T, in, term string) {
	t.Helper()
	if term == "" {
		t.Fatalf("Terms(%q) has an empty term", in)
	}
	if !utf8.ValidString(term) {
		t.Fatalf("Terms(%q): term %q is not valid UTF-8", in, term)
	}
	if strings.ToLower(term) != term {
		t.Fatalf("Terms(%q): term %q is not lower-case", in, term)
	}
	if i := strings.IndexFunc(term, textsearch.IsSeparator); i >= 0 {
		t.Fatalf("Terms(%q): term %q holds the separator %q", in, term, term[i:])
	}
}

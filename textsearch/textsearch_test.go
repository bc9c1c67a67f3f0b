package textsearch_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/engramhq/engram/textsearch"
)

func TestSegment(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain English text", "plain English text"},
		{"東京都", " 東京 京都 "},
		{"京", " 京 "},
		{"私は東京に住んでいます", " 私は は東 東京 京に に住 住ん んで でい いま ます "},
		{"I visited 東京タワー yesterday", "I visited  東京 京タ タワ ワー  yesterday"},
		{"コーヒー", " コー ーヒ ヒー "},
		{"서울에서 일해요", " 서울 울에 에서   일해 해요 "},
		{"烤鸭，味道", " 烤鸭 ， 味道 "},
		{"iPhone15手机", "iPhone15 手机 "},
		{"café 中", "café  中 "},
	} {
		if got := textsearch.Segment(c.in); got != c.want {
			t.Errorf("Segment(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSegmentCues(t *testing.T) {
	if got, want := textsearch.SegmentCues([]string{"Ana", "東京"}), "Ana\n 東京 "; got != want {
		t.Errorf("SegmentCues = %q, want %q", got, want)
	}
	if got := textsearch.SegmentCues(nil); got != "" {
		t.Errorf("SegmentCues(nil) = %q, want empty", got)
	}
}

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ,.;!  ", nil},
		{"The Budget and THE meeting", []string{"budget", "meeting"}},
		{"the and of", []string{"the", "and", "of"}},
		{"budget budget Budget", []string{"budget"}},
		{`"a" OR b*`, []string{"b"}}, // a and or are stop words
		{`NEAR(x y, 2)`, []string{"near", "x", "y", "2"}},
		{"value:budget", []string{"value", "budget"}},
		{"don't", []string{"don"}},
		{"where does Ana's sister work", []string{"ana", "sister", "work"}},
		{"naïve café", []string{"naïve", "café"}},
		{"東京都に行く", []string{"東京都に行く"}},
		{"c++ & c#", []string{"c"}},
		{"budget' OR '1'='1 --", []string{"budget", "1"}},
		{"a:b|c!d&e<f>g", []string{"b", "c", "e", "f", "g"}}, // a and d are stop words
		// Private-use and unassigned code points are parts of words, as in
		// SQLite's unicode61; format characters and no-break spaces are not.
		{"x\ue000y \u07b20 z\u200bw v\u00a0u", []string{"x\ue000y", "\u07b20", "z", "w", "v", "u"}},
	} {
		if got := textsearch.Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var words []string
	for i := range 200 {
		words = append(words, "word"+strconv.Itoa(i))
	}
	if got := len(textsearch.Terms(strings.Join(words, " "))); got != textsearch.MaxTerms {
		t.Errorf("a 200-word query gives %d terms, want the cap of %d", got, textsearch.MaxTerms)
	}
}

func TestIsStopWord(t *testing.T) {
	for w, want := range map[string]bool{"the": true, "and": true, "ll": true, "budget": false, "The": false, "": false} {
		if got := textsearch.IsStopWord(w); got != want {
			t.Errorf("IsStopWord(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  ...  ", ""},
		{"Hello, World!", "hello world"},
		{"mail ana@example.com or see https://x.org/a-b?c=1", "mail ana example com or see https x org a b c 1"},
		{"v1.2.3 costs 3.14; catch-up", "v1 2 3 costs 3 14 catch up"},
		{"Don't stop", "don t stop"},
		{"ÉCOLE naïve", "école naïve"},
		{"我在北京，吃烤鸭。", "我在 在北 北京 吃烤 烤鸭"},
		{"I visited 東京タワー yesterday", "i visited 東京 京タ タワ ワー yesterday"},
		{"tab\tand\nnewline", "tab and newline"},
	} {
		if got := textsearch.Words(c.in); got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Every query term of a text is one of its words, so a backend indexing
	// Words finds it.
	for _, s := range []string{"Ana's e-mail is ana@example.com", "東京タワーに行った", "C++ and Go 1.26"} {
		words := map[string]bool{}
		for _, w := range strings.Fields(textsearch.Words(s)) {
			words[w] = true
		}
		for _, term := range textsearch.Terms(s) {
			for _, w := range strings.Fields(textsearch.Segment(term)) {
				if !words[w] {
					t.Errorf("term %q of %q is not among its words %q", w, s, textsearch.Words(s))
				}
			}
		}
	}
}

func TestTermsLang(t *testing.T) {
	tests := []struct {
		tag, q string
		want   []string
	}{
		{"de", "Wann war ich mit meinem Hund im Park?", []string{"hund", "park"}},
		{"es", "¿Cuándo fui al parque con mi perro?", []string{"parque", "perro"}},
		{"fr", "Quand suis-je allé au parc avec mon chien ?", []string{"allé", "parc", "chien"}},
		{"en", "When did I walk the dog?", []string{"walk", "dog"}},
		{"", "When did I walk the dog?", []string{"walk", "dog"}},
	}
	for _, tt := range tests {
		if got := textsearch.TermsLang(tt.tag, tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("TermsLang(%q, %q) = %q, want %q", tt.tag, tt.q, got, tt.want)
		}
	}
}

package sqlite

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFTSText(t *testing.T) {
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
		if got := ftsText(c.in); got != c.want {
			t.Errorf("ftsText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
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
	} {
		if got := queryTerms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var words []string
	for i := range 200 {
		words = append(words, "word"+strconv.Itoa(i))
	}
	if got := len(queryTerms(strings.Join(words, " "))); got != maxQueryTerms {
		t.Errorf("a 200-word query gives %d terms, want the cap of %d", got, maxQueryTerms)
	}
}

func TestMatchQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"!!!", ""},
		{"budget meeting", `"budget" OR "meeting"`},
		{`"a" OR b* NEAR(`, `"b" OR "near"`},
		{"AND", `"and"`},
		{"東京都 budget", `"東京 京都" OR "budget"`},
		{"京", `"京"`},
	} {
		if got := matchQuery(c.in); got != c.want {
			t.Errorf("matchQuery(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

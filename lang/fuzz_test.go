package lang_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/lang"
)

// resolveTags are the languages with date rules of their own, and "" for
// the English fallback.
var resolveTags = []string{"", lang.English, lang.German, lang.Spanish, lang.French, lang.Chinese, lang.Japanese}

// FuzzResolve checks the date resolver of every language on arbitrary text
// and reference times: no panic; every mention is the text at its offsets,
// names a non-empty period, and the mentions are in text order without
// overlapping; Annotate keeps every byte of the text and only inserts the
// labels of relative mentions.
func FuzzResolve(f *testing.F) {
	ref := time.Date(2023, 5, 8, 14, 0, 0, 0, time.UTC).Unix()
	for _, s := range []string{
		"", "Yesterday I met Anna; next Friday we go again.", "the day before yesterday, last week and 3 days ago",
		"on 7 May 2023 and in summer 2022", "2023-05-07 2023-02-30 9999-12-31", "the past two weeks",
		"Gestern war ich im Kino, letzte Woche auch.", "hace dos semanas fuimos al cine", "il y a trois jours",
		"上周六我去了北京。昨天下雨了。", "先週の土曜日に東京へ行きました。", "last Friday.next Friday!on a Sunday",
		"in 12 months, 999 years ago, a couple of days ago", "\xffyesterday\xfe", "Übermorgen fahren wir",
	} {
		f.Add(s, ref, int32(0))
	}
	f.Add("yesterday", int64(-62135596800), int32(-12*3600)) // year 1
	f.Add("tomorrow", int64(253402300799), int32(14*3600))   // the end of year 9999
	f.Fuzz(func(t *testing.T, text string, unix int64, offset int32) {
		// Keep the reference time in years 1 to 9999, where time.Time's
		// calendar arithmetic is defined, and zone offsets within a day.
		const lo, hi = -62135596800, 253402300799
		unix = lo + mod(unix, hi-lo+1)
		loc := time.FixedZone("ref", int(mod(int64(offset), 2*86400))-86400)
		ref := time.Unix(unix, 0).In(loc)
		for _, tag := range resolveTags {
			ms := lang.ResolveLang(tag, text, ref)
			checkMentions(t, tag, text, ms)
			out := lang.Annotate(text, ms)
			checkAnnotated(t, text, ms, out)
		}
		checkMentions(t, "Resolve", text, lang.Resolve(text, ref))
	})
}

func mod(a, n int64) int64 {
	a %= n
	if a < 0 {
		a += n
	}
	return a
}

func checkMentions(t *testing.T, tag, text string, ms []lang.Mention) {
	t.Helper()
	end := 0
	for i, m := range ms {
		if m.Start < end || m.Start > m.End || m.End > len(text) {
			t.Fatalf("%s %q: mention %d %q at [%d,%d) is out of order or out of the text (previous ends at %d)", tag, text, i, m.Text, m.Start, m.End, end)
		}
		if text[m.Start:m.End] != m.Text {
			t.Fatalf("%s %q: mention %d is %q, but the text at [%d,%d) is %q", tag, text, i, m.Text, m.Start, m.End, text[m.Start:m.End])
		}
		if !m.From.Before(m.To) {
			t.Fatalf("%s %q: mention %q names the empty period [%v, %v)", tag, text, m.Text, m.From, m.To)
		}
		end = m.End
	}
}

// checkAnnotated checks that out is text with " [label]" after each
// relative mention and nothing else changed.
func checkAnnotated(t *testing.T, text string, ms []lang.Mention, out string) {
	t.Helper()
	last, pos := 0, 0
	for _, m := range ms {
		if !m.Relative {
			continue
		}
		piece := text[last:m.End]
		label := " [" + m.Label() + "]"
		if !strings.HasPrefix(out[pos:], piece+label) {
			t.Fatalf("Annotate(%q) = %q: expected %q at byte %d", text, out, piece+label, pos)
		}
		last, pos = m.End, pos+len(piece)+len(label)
	}
	if out[pos:] != text[last:] {
		t.Fatalf("Annotate(%q) = %q: ends in %q, want %q", text, out, out[pos:], text[last:])
	}
	if utf8.ValidString(text) && !utf8.ValidString(out) {
		t.Fatalf("Annotate(%q) = %q, not valid UTF-8", text, out)
	}
}

// FuzzDetectStem checks language detection and stemming on arbitrary text:
// no panic, a tag from the known set, and valid UTF-8 in gives valid UTF-8
// out.
func FuzzDetectStem(f *testing.F) {
	for _, s := range []string{
		"", "the cat sat on the mat", "der Hund und die Katze", "el perro y el gato", "le chien et le chat",
		"私は東京に住んでいます", "我住在北京", "한국어 텍스트", "hunden", "généralement", "corriendo",
		"ǅemal İstanbul", "\xff\xfe", "Привет, как дела?", "مرحبا بك", "Dziękuję bardzo", "Tack så mycket", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	} {
		f.Add(s)
	}
	known := map[string]bool{"": true}
	for _, tag := range []string{lang.English, lang.German, lang.Spanish, lang.French, lang.Italian,
		lang.Portuguese, lang.Dutch, lang.Polish, lang.Turkish, lang.Swedish, lang.Chinese, lang.Japanese,
		lang.Korean, lang.Russian, lang.Ukrainian, lang.Arabic, lang.Persian, lang.Greek, lang.Hebrew,
		lang.Hindi, lang.Thai} {
		known[tag] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tag := lang.Detect(s); !known[tag] {
			t.Fatalf("Detect(%q) = %q, not a known tag", s, tag)
		}
		valid := utf8.ValidString(s)
		for tag := range known {
			for _, w := range []string{s, strings.ToLower(s)} {
				st := lang.Stem(tag, w)
				if valid && !utf8.ValidString(st) {
					t.Fatalf("Stem(%q, %q) = %q, not valid UTF-8", tag, w, st)
				}
			}
		}
	})
}

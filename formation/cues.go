package formation

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/textsearch"
)

// notNames are capitalised words that start sentences or stand alone in
// chat often enough to be mistaken for names when they appear mid-sentence
// after an emoji or a dash. Lower-case keys.
var notNames = setOf(`i i'm i've i'll i'd im ive ill id ok okay oh hey hi hello wow yes yeah yep no nope thanks thank
	please sorry congrats congratulations omg lol haha hmm um uh well so and but or also anyway btw
	mr mrs ms dr st mt
	monday tuesday wednesday thursday friday saturday sunday
	january february march april may june july august september october november december
	the a an this that these those my your our their his her its it we you they he she
	what when where why how who which there here then now today tomorrow yesterday
	ai tv`)

// titles are abbreviations written with a full stop before a name: the
// stop does not end a sentence, and the title belongs to the name.
var titles = setOf(`mr mrs ms dr prof st mt jr sr`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// word is one token of a text with its position.
type word struct {
	text       string
	start, end int
	// sentenceStart is true for the first word of a sentence, whose
	// capital says nothing about it being a name.
	sentenceStart bool
}

// words splits text into letter-digit runs (apostrophes inside a word kept,
// so "Charlotte's" stays one word) and marks the first word of each
// sentence.
func words(text string) []word {
	var out []word
	start := -1
	newSentence := true
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) ||
			((r == '\'' || r == '’' || r == '-') && start >= 0 && i+utf8.RuneLen(r) < len(text) && isLetterAt(text, i+utf8.RuneLen(r)))
		if inWord {
			if start < 0 {
				start = i
			}
			continue
		}
		afterTitle := false
		if start >= 0 {
			out = append(out, word{text: text[start:i], start: start, end: i, sentenceStart: newSentence})
			newSentence = false
			afterTitle = r == '.' && titles[strings.ToLower(text[start:i])]
			start = -1
		}
		if afterTitle {
			continue
		}
		switch r {
		case '.', '!', '?', '\n', ':', ';', '"', '“', '(', '。', '！', '？':
			newSentence = true
		}
	}
	if start >= 0 {
		out = append(out, word{text: text[start:], start: start, end: len(text), sentenceStart: newSentence})
	}
	return out
}

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// nameKey folds a word for the name lists: lower case, possessive dropped.
func nameKey(w string) string {
	w = strings.ToLower(w)
	for _, s := range []string{"'s", "’s"} {
		w = strings.TrimSuffix(w, s)
	}
	return w
}

// Names returns the proper names of text: runs of capitalised words
// ("Caroline", "New York", "Charlotte's Web"), joined by at most one "of"
// or "the" inside the run ("Bank of America"). A capitalised word that
// starts a sentence counts only when known says it is a name (known holds
// name keys, see NameKeys), because a capital there is grammar, not
// meaning. Each name is returned once, in order of first appearance.
func Names(text string, known map[string]bool) []string {
	ws := words(text)
	var out []string
	seen := map[string]bool{}
	isName := func(w word) bool {
		if !capitalised(w.text) || notName(w.text) {
			return false
		}
		if allDigits(w.text) {
			return false
		}
		return !w.sentenceStart || known[nameKey(w.text)]
	}
	for i := 0; i < len(ws); i++ {
		title := titles[strings.ToLower(ws[i].text)] && capitalised(ws[i].text) && i+1 < len(ws) &&
			capitalised(ws[i+1].text) && !notName(ws[i+1].text)
		if !title && !isName(ws[i]) {
			continue
		}
		j := i + 1
		for j < len(ws) {
			gap := text[ws[j-1].end:ws[j].start]
			if strings.TrimSpace(gap) != "" && gap != ". " && gap != "." {
				break // a comma or other punctuation ends the name
			}
			if capitalised(ws[j].text) && !notName(ws[j].text) {
				j++
				continue
			}
			if lw := strings.ToLower(ws[j].text); (lw == "of" || lw == "the") && j+1 < len(ws) && capitalised(ws[j+1].text) && !notName(ws[j+1].text) && !strings.ContainsAny(text[ws[j].end:ws[j+1].start], ",;:!?") {
				j += 2
				continue
			}
			break
		}
		name := strings.TrimRight(text[ws[i].start:ws[j-1].end], ".")
		if k := strings.ToLower(name); !seen[k] {
			seen[k] = true
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

// notName reports whether a capitalised word is a function word or chat
// filler rather than a possible name.
func notName(w string) bool {
	k := nameKey(w)
	return notNames[k] || textsearch.IsStopWord(k)
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// NameKeys returns the keys (see Names) of the words that appear
// capitalised in the middle of a sentence somewhere in texts: evidence that
// they are names wherever they appear.
func NameKeys(texts ...string) map[string]bool {
	known := map[string]bool{}
	for _, t := range texts {
		for _, w := range words(t) {
			if !w.sentenceStart && capitalised(w.text) && !notName(w.text) && !allDigits(w.text) {
				known[nameKey(w.text)] = true
			}
		}
	}
	return known
}

// Titles returns the phrases of text set in double quotes ("Charlotte's
// Web", “Nothing is Impossible”) that are short enough to be titles or
// names rather than quoted speech: one to eight words.
func Titles(text string) []string {
	var out []string
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}} {
		rest := text
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(q[0]):]
			j := strings.Index(rest, q[1])
			if j < 0 {
				break
			}
			t := strings.TrimSpace(rest[:j])
			rest = rest[j+len(q[1]):]
			if n := len(strings.Fields(t)); n >= 1 && n <= 8 && len(t) <= 80 {
				out = append(out, strings.Trim(t, ".,!?"))
			}
		}
	}
	return out
}

// Language guesses the BCP 47 tag of text written mostly in a CJK script:
// "ja" when it has kana, "ko" when Hangul outweighs Han, "zh" otherwise. It
// returns "" for anything else: Latin letters alone do not tell English
// from French.
func Language(text string) string {
	var other, han, kana, hangul int
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.IsLetter(r):
			other++
		}
	}
	// A CJK character carries about as much as a short word: weigh them up.
	if cjk := 3 * (han + kana + hangul); cjk == 0 || cjk <= other {
		return ""
	}
	switch {
	case kana > 0:
		return "ja"
	case hangul > han:
		return "ko"
	}
	return "zh"
}

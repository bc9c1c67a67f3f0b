package formation

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/engramhq/engram/lang"
)

// forgetRules match a request to forget, at the start of a sentence (after
// a polite opening), with what it is about in group "t". "Don't forget
// to…", "vergiss nicht…", "no olvides…" and questions ("do you remember
// where I live?") are not requests to forget.
var forgetRules = map[string][]*regexp.Regexp{
	lang.English: res(`(?i)^(?:(?:please|can you|could you|would you|i want you to|i'd like you to|i’d like you to|and|so)[ ,]+)*` +
		`(?:(?:forget|(?:don't|don’t|do not) remember|stop remembering)[ ,]+(?:that|what i (?:said|told you|mentioned) about|everything (?:i (?:said|told you) )?about|all (?:i told you )?about)` +
		`|(?:delete|erase|remove) (?:what i (?:said|told you)|everything i (?:said|told you)|what you know|(?:the|my|any) (?:memory|memories|info|information|notes?)) (?:about|of|on|regarding))` +
		`[ ,]+(?P<t>.+)$`),
	lang.German: res(`(?i)^(?:(?:bitte|kannst du|könntest du|und)[ ,]+)*(?:vergiss|vergessen sie)(?:[ ,]+bitte)?`+
		`[ ,]+(?:dass|was ich (?:dir )?(?:über|zu|von)|alles(?:,)? was ich (?:dir )?(?:über|zu|von)|alles über|das mit)[ ,]+(?P<t>.+)$`,
		`(?i)^(?:(?:bitte|kannst du|könntest du|und)[ ,]+)*(?:lösche?|löschen sie|entferne)(?:[ ,]+bitte)?`+
			`[ ,]+(?:alles(?:,)? )?was ich (?:dir )?(?:über|zu|von) (?P<t>.+)$`),
	lang.Spanish: res(`(?i)^(?:(?:por favor|puedes|podrías|y)[ ,]+)*(?:olvida|olvídate de|olvidate de|no recuerdes)`+
		`[ ,]+(?:que|lo que te (?:dije|conté) (?:sobre|de|acerca de)|todo lo que te (?:dije|conté) (?:sobre|de|acerca de)|todo sobre|lo de)[ ,]+(?P<t>.+)$`,
		`(?i)^(?:(?:por favor|puedes|podrías|y)[ ,]+)*(?:borra|elimina)[ ,]+(?:todo )?lo que te (?:dije|conté) (?:sobre|de|acerca de) (?P<t>.+)$`),
	lang.French: res(`(?i)^(?:(?:s'il te plaît|s’il te plaît|peux-tu|et)[ ,]+)*oublie`+
		`[ ,]+(?:que|ce que je t['’]ai dit (?:sur|à propos de)|tout sur)[ ,]+(?P<t>.+)$`,
		`(?i)^(?:(?:s'il te plaît|s’il te plaît|peux-tu|et)[ ,]+)*efface[ ,]+ce que je t['’]ai dit (?:sur|à propos de) (?P<t>.+)$`),
}

func res(ss ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(ss))
	for i, s := range ss {
		out[i] = regexp.MustCompile(s)
	}
	return out
}

// notForget are words that, right after the verb, turn a forget into its
// opposite or into a reminder.
var notForget = setOf("nicht nie to pas jamais")

// tellWords are the words of a request that say how the thing was said,
// not what it was about.
var tellWords = setOf("said told say tell mentioned gesagt erzählt gesprochen habe hab dije conté dicho contado dit raconté")

// forgetTopic returns what text asks to forget, the stems of its content
// words, the language of the request (tag, the detected one, else the
// first whose rules match), and whether it is such a request at all. A
// request with no content words ("forget what I told you about it") is
// one, about nothing.
func forgetTopic(tag, text string) (string, []string, string, bool) {
	for _, s := range sentences(text) {
		if strings.HasSuffix(s, "?") || strings.HasPrefix(s, "¿") {
			continue
		}
		for _, l := range tryOrder(tag) {
			if t, stems, ok := forgetIn(l, s); ok {
				return t, stems, l, true
			}
		}
	}
	return "", nil, "", false
}

// forgetIn reads sentence s as a request to forget in language tag.
func forgetIn(tag, s string) (string, []string, bool) {
	for _, re := range forgetRules[tag] {
		m := re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		t := m[re.SubexpIndex("t")]
		if ws := lang.Words(strings.ToLower(t)); len(ws) > 0 && notForget[ws[0]] {
			continue
		}
		return t, contentStems(tag, t), true
	}
	return "", nil, false
}

// contentStems returns the stems of the words of text that carry content:
// no stop words, no words of telling, none shorter than three letters
// unless digits.
func contentStems(tag, text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range lang.Words(strings.ToLower(text)) {
		if lang.IsStopWord(tag, w) || tellWords[w] || (len([]rune(w)) < 3 && !isDigits(w)) {
			continue
		}
		if st := lang.Stem(tag, w); !seen[st] {
			seen[st] = true
			out = append(out, st)
		}
	}
	return out
}

// sameStem reports whether two stems are one word's, the shorter (of at
// least four letters) a prefix of the longer: stemmers leave some
// inflections apart ("wohnt", "wohn").
func sameStem(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return len([]rune(a)) >= 4 && strings.HasPrefix(b, a)
}

func isDigits(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// covers reports whether text, in language tag, holds enough of the
// topic's stems to be what a request to forget the topic is about: all of
// one or two, three in five of more.
func covers(tag, text string, topic []string) bool {
	if len(topic) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, w := range lang.Words(strings.ToLower(text)) {
		have[lang.Stem(tag, w)] = true
	}
	n := 0
	for _, t := range topic {
		if have[t] || slices.ContainsFunc(slices.Collect(maps.Keys(have)), func(h string) bool { return sameStem(h, t) }) {
			n++
		}
	}
	need := len(topic)
	if need > 2 {
		need = (3*len(topic) + 4) / 5
	}
	return n >= need
}

package formation

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A fact rule's phrasing starts with the verb or its subject ("trabajo
// en", "vivo en", "I live in", "je travaille chez"). In a language that
// drops the subject the verb's word can also be a noun or an adjective:
// "una entrevista de trabajo en Valencia" is about an interview, not a
// job in Valencia; "un concierto en vivo en Barcelona" is about live
// music. The word before the phrasing tells: a determiner, a preposition
// or a possessive makes the word a noun; a verb makes it that verb's
// object ("busco trabajo en Madrid"); a negation or a condition states the
// opposite or nothing ("no vivo en Madrid", "si j'habite à Paris"). The
// rules former forms a fact only where the phrasing stands where a verb
// does: at the start of a clause, or after a subject, an adverb or a
// conjunction.

// notVerbBefore are, per language, the words after which a rule's first
// word is no verb the speaker states: determiners, possessives,
// prepositions, quantifiers (a noun follows), negations and conditions.
var notVerbBefore = map[string]map[string]bool{
	"en": setOf("if unless whether not never no"),
	"de": setOf("wenn falls ob nicht nie kein keine"),
	"es": setOf("un una unos unas el la los las lo mi mis tu tus su sus nuestro nuestra nuestros nuestras " +
		"vuestro vuestra de del al a en con por para sin sobre entre hacia desde hasta este esta estos estas ese esa " +
		"aquel aquella otro otra mucho mucha poco poca buen buena mal mala nuevo nueva primer primera cada algún " +
		"algun ningún ningun tanto tanta " +
		"no nunca jamás jamas tampoco ni si"),
	"fr": setOf("si ne n' pas jamais un une le la les l' mon ma mes ton ta son sa notre votre leur de du des"),
}

// verbBeforeES finds a Spanish word that is itself a finite verb of the
// speaker's, so that what follows is its object ("busco trabajo",
// "conseguí trabajo"): a first person present in -o, a preterite in -é,
// -í or -ó.
var verbBeforeES = regexp.MustCompile(`^\p{L}{2,}(?:o|é|í|ó)$`)

// notVerbES are words ending like such a verb that are none: the subject
// pronoun and adverbs that may stand before the verb.
var notVerbES = setOf("yo pero solo sólo luego como cuando también tampoco ahí allí aquí así")

// verbReading reports whether the first match of re in s, a sentence in
// language tag, starts where a verb the speaker states can stand (see
// notVerbBefore).
func verbReading(tag, s string, re *regexp.Regexp) bool {
	loc := re.FindStringIndex(s)
	if loc == nil {
		return false
	}
	w := wordBefore(s[:loc[0]])
	if w == "" {
		return true // the start of the sentence or of a clause
	}
	if notVerbBefore[tag][w] {
		return false
	}
	if tag == "es" && verbBeforeES.MatchString(w) && !notVerbES[w] {
		return false
	}
	return true
}

// wordBefore returns the last word of s in lower case, with an elided
// French article's apostrophe ("l'"), or "" when s ends in punctuation
// that opens a clause or holds no word.
func wordBefore(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	end := len(s)
	if strings.HasSuffix(s, "'") || strings.HasSuffix(s, "’") {
		_, n := utf8.DecodeLastRuneInString(s)
		end -= n
	}
	start := end
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:start])
		if !unicode.IsLetter(r) {
			break
		}
		start -= n
	}
	if start == end {
		return ""
	}
	w := strings.ToLower(s[start:end])
	if end < len(s) {
		w += "'"
	}
	return w
}

package retrieval

import (
	"regexp"

	"github.com/engramhq/engram/lang"
)

// Which state of a changing fact a question asks about (Query.Tense).
const (
	// TenseNow: the state true now (or at the search's as-of time): the
	// present tense, "now", "currently", "still", or no time given.
	TenseNow = "now"
	// TensePast: an earlier state: "before", "used to", "at first",
	// "previously", and their equivalents.
	TensePast = "past"
	// TenseOpen: neither: a question in the past tense or the present
	// perfect that does not say which state ("where did she go?", "what
	// has she painted?"), or one that names a period that has ended. The ranking leaves the order of a fact's states as the
	// channels found them.
	TenseOpen = ""
)

// pastMarkers say that a question asks about an earlier state of
// something that changed, per language; English serves undecided text.
var pastMarkers = map[string]*regexp.Regexp{
	lang.English: regexp.MustCompile(`(?i)\b(before|used to|use to|at first|first|previous|previously|formerly|originally|earlier|former|initially|in the past)\b`),
	lang.German:  regexp.MustCompile(`(?i)\b(früher|vorher|zuvor|zuerst|anfangs|ursprünglich|ehemals|ehemalige[nmrs]?|damals|vorherige[nmrs]?|alte[nmrs]?|bevor)\b`),
	lang.Spanish: regexp.MustCompile(`(?i)\b(antes|solía|solia|solían|primero|al principio|anteriormente|antiguo|antigua|anterior|originalmente)\b`),
	lang.French:  regexp.MustCompile(`(?i)\b(avant|auparavant|d'abord|d’abord|au début|autrefois|anciennement|ancien|ancienne|précédent|précédente|précédemment|à l'origine|initialement)\b`),
	lang.Chinese: regexp.MustCompile(`以前|之前|原来|原來|当初|當初|最初|过去|過去|曾经|曾經|起初|一开始|一開始|本来|本來|从前|從前|早先`),
}

// nowMarkers say that a question asks about the present state even in a
// past-tense frame ("what did she say she drinks now?").
var nowMarkers = map[string]*regexp.Regexp{
	lang.English: regexp.MustCompile(`(?i)\b(now|currently|current|still|these days|at the moment|at present|today|nowadays|anymore|latest|most recent)\b`),
	lang.German:  regexp.MustCompile(`(?i)\b(jetzt|derzeit|momentan|aktuell|zurzeit|inzwischen|mittlerweile|noch|heute|neueste[nmrs]?)\b`),
	lang.Spanish: regexp.MustCompile(`(?i)\b(ahora|actualmente|todavía|aún|hoy|hoy en día|actual|en este momento)\b`),
	lang.French:  regexp.MustCompile(`(?i)\b(maintenant|actuellement|encore|toujours|aujourd'hui|en ce moment|actuel|actuelle|désormais)\b`),
	lang.Chinese: regexp.MustCompile(`现在|現在|目前|如今|当前|當前|还|還|仍然|最近|这几天|這幾天`),
}

// pastTense is an English question in the past tense: its verb is "did",
// "was", "were" or "had" (or a past participle after "has"), which does
// not say whether it asks about the state that holds now.
var pastTense = regexp.MustCompile(`(?i)\b(did|was|were|had|used)\b`)

// perfect is an English question in the present perfect ("what books has
// she read?", "where have they camped?"): it gathers what happened over
// time rather than asking for the state that holds now.
var perfect = regexp.MustCompile(`(?i)\b(has|have|'ve|’ve|hasn't|haven't)\s+(?:\S+\s+){0,2}?(\w+(?:ed|en|wn)|been|read|made|done|seen|met|had|got|run|won|left|lost|built|bought|taught|brought|found|kept|heard|sung|swum|begun|drunk|flown|gone|known|shown|spent|sent|sold|told|worn)\b`)

// tenseOf returns the state of a changing fact that q asks about, from its
// words in language tag and the periods it names (see TenseNow). A short
// question's language is often undecided ("Où habitait Bob avant ?"):
// then the markers of every language are read, the past's before the
// present's.
func tenseOf(tag, text string, periods []lang.Mention) string {
	markers := func(set map[string]*regexp.Regexp) bool {
		if tag == "" {
			for _, re := range set {
				if re.MatchString(text) {
					return true
				}
			}
			return false
		}
		re, ok := set[tag]
		if !ok {
			re = set[lang.English]
		}
		return re.MatchString(text)
	}
	switch {
	case markers(pastMarkers):
		return TensePast
	case markers(nowMarkers):
		return TenseNow
	case len(periods) > 0:
		return TenseOpen // a named period: the state of then, which the period boost finds
	case english(tag) && (pastTense.MatchString(text) || perfect.MatchString(text)):
		return TenseOpen
	}
	return TenseNow
}

// nowWords are the words that say only that a question asks about the
// present ("now", "jetzt"): they are dropped from the query's terms, as a
// memory that says "now" is no likelier the answer.
var nowWords = wordSet(`now currently nowadays anymore
	jetzt derzeit momentan zurzeit inzwischen mittlerweile
	ahora actualmente
	maintenant actuellement désormais`)

// withoutNow returns terms without the words of nowWords, unless nothing
// else would be left.
func withoutNow(terms []string) []string {
	var out []string
	for _, t := range terms {
		if !nowWords[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}

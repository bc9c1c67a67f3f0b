package entity

import (
	"strings"
	"unicode"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// Candidate is a name found in a memory, with its type when known ("" when
// not).
type Candidate struct {
	Name string
	Type string
}

// MaxCandidates is the most entities Extract returns for one memory.
const MaxCandidates = 16

// placePrepositions are the words after which a name is taken for a place,
// in English, German, Spanish and French.
var placePrepositions = map[string]bool{
	"in": true, "to": true, "from": true, "near": true, "visited": true, "visit": true,
	"nach": true, "aus": true, "bei": true,
	"en": true, "desde": true, "hacia": true,
	"à": true, "au": true, "vers": true,
}

// employerPrepositions are the words after which a name is taken for an
// organisation when a word of work (workWords) comes shortly before them:
// "Ich arbeite seit Mai bei Siemens", "I work at Google", "Trabajo en
// Telefónica", "Je travaille chez Renault". "bei" and "en" alone still
// make a place.
var employerPrepositions = map[string]bool{"at": true, "for": true, "bei": true, "für": true, "en": true, "para": true, "chez": true, "pour": true}

// workWords are the beginnings of the words of working, in English,
// German, Spanish and French.
var workWords = []string{"work", "employ", "hired", "job", "intern", "arbeit", "angestellt", "stelle", "praktikum",
	"trabaj", "emplead", "travaill", "emploi", "stage"}

// workWindow is how many words before the preposition a word of work may
// be ("arbeite seit Mai bei").
const workWindow = 3

// personCues are the words after which a name is taken for a person.
var personCues = map[string]bool{
	"with": true, "mit": true, "con": true, "avec": true, "friend": true, "sister": true, "brother": true,
	"mother": true, "father": true, "mom": true, "dad": true, "wife": true, "husband": true,
	"son": true, "daughter": true, "schwester": true, "bruder": true, "mutter": true, "vater": true,
	"hermana": true, "hermano": true, "madre": true, "padre": true, "amigo": true, "amiga": true,
}

// Extract returns the entities m names: its speaker (a person), its cue
// anchors that are not dates, and the proper names of its value, each once
// by normalised name, at most MaxCandidates. known holds the name keys
// (lang.NameKey) of words known to be names, such as those of the user's
// entities among Openers(m.Value): a capital that starts a sentence says
// nothing by itself. A vault memory names nothing: its text is not to be
// read.
func Extract(m *engram.Memory, known map[string]bool) []Candidate {
	if m.Kind == engram.KindVault {
		return nil
	}
	var out []Candidate
	seen := map[string]int{}
	add := func(name, typ string) {
		name = strings.TrimSpace(name)
		k := engram.NormalizeName(name)
		if k == "" || len(name) > 120 || len(strings.Fields(k)) > 5 || dateLike(k) {
			return
		}
		if i, ok := seen[k]; ok {
			if out[i].Type == "" {
				out[i].Type = typ
			}
			return
		}
		if len(out) >= MaxCandidates {
			return
		}
		seen[k] = len(out)
		out = append(out, Candidate{Name: name, Type: typ})
	}
	if sp, _ := m.Metadata[engram.MetaSpeaker].(string); sp != "" {
		add(sp, engram.EntityPerson)
	}
	tag := m.Language
	if tag == "" {
		tag = lang.Detect(m.Value)
	}
	titles := map[string]bool{}
	for _, t := range lang.Titles(m.Value) {
		titles[engram.NormalizeName(t)] = true
	}
	for _, c := range m.Cues {
		add(c, typeOf(m.Value, c, titles))
	}
	for _, n := range lang.Names(tag, m.Value, known) {
		n = sentenceEnd(n)
		if !inTitle(engram.NormalizeName(n), titles) {
			add(n, typeOf(m.Value, n, titles))
		}
	}
	return out
}

// sentenceEnd cuts a name where a sentence ends inside it: lang.Names
// lets a name run across ". " for initials and abbreviations ("J. R. R.
// Tolkien", "St. Louis"), which also joins "Yosemite. Camping".
func sentenceEnd(n string) string {
	rest := n
	for {
		i := strings.Index(rest, ". ")
		if i < 0 {
			return n
		}
		before := strings.Fields(rest[:i])
		if len(before) > 0 && len([]rune(before[len(before)-1])) > 3 {
			return n[:len(n)-len(rest)+i]
		}
		rest = rest[i+2:]
	}
}

// inTitle reports whether the words of k are words of a quoted title: a
// capital inside a title makes no name of its own.
func inTitle(k string, titles map[string]bool) bool {
	for t := range titles {
		if strings.Contains(" "+t+" ", " "+k+" ") {
			return true
		}
	}
	return false
}

// typeOf guesses the type of name from the word before its first
// occurrence in text.
func typeOf(text, name string, titles map[string]bool) string {
	if titles[engram.NormalizeName(name)] {
		return engram.EntityWork
	}
	i := strings.Index(text, name)
	if i < 0 {
		return ""
	}
	before := strings.FieldsFunc(text[:i], func(r rune) bool { return !unicode.IsLetter(r) })
	if len(before) == 0 {
		return ""
	}
	w := strings.ToLower(before[len(before)-1])
	switch {
	case w == "joined" || employerPrepositions[w] && workedBefore(before[:len(before)-1]):
		return engram.EntityOrganization
	case placePrepositions[w]:
		return engram.EntityPlace
	case personCues[w]:
		return engram.EntityPerson
	}
	return ""
}

// workedBefore reports whether one of the last workWindow words is a word
// of work.
func workedBefore(words []string) bool {
	for _, w := range words[max(0, len(words)-workWindow):] {
		w = strings.ToLower(w)
		for _, p := range workWords {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
	}
	return false
}

// dateWords are the words of date labels and relative dates that cue
// anchors carry: they name times, not entities.
var dateWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`monday tuesday wednesday thursday friday saturday sunday
		january february march april may june july august september october november december
		montag dienstag mittwoch donnerstag freitag samstag sonntag januar februar marz mai juni juli oktober dezember
		lunes martes miercoles jueves viernes sabado domingo enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre
		week weekend month year today yesterday tomorrow spring summer autumn fall winter`) {
		dateWords[w] = true
	}
}

// dateLike reports whether a normalised cue is a date: it has a digit or a
// word of dateWords.
func dateLike(k string) bool {
	for _, w := range strings.Fields(k) {
		if dateWords[w] {
			return true
		}
	}
	return strings.IndexFunc(k, unicode.IsDigit) >= 0
}

// Openers returns the capitalised words of text that start a sentence, or
// stand where lang.Names would need to know they are names (in German,
// every capitalised word), each once: the words whose keys a caller looks
// up among known names before Extract.
func Openers(text string) []string {
	var out []string
	german := lang.Detect(text) == lang.German
	start := true
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) }) {
		word := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if word != "" && (start || german) && unicode.IsUpper([]rune(word)[0]) && !containsStr(out, word) && len(out) < 32 {
			out = append(out, word)
		}
		start = strings.ContainsAny(w[len(w)-1:], ".!?:;") || false
	}
	return out
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

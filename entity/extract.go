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

// personCues are the words after which a name is taken for a person.
var personCues = map[string]bool{
	"with": true, "mit": true, "con": true, "avec": true, "friend": true, "sister": true, "brother": true,
	"mother": true, "father": true, "mom": true, "dad": true, "wife": true, "husband": true,
	"son": true, "daughter": true, "schwester": true, "bruder": true, "mutter": true, "vater": true,
	"hermana": true, "hermano": true, "madre": true, "padre": true, "amigo": true, "amiga": true,
}

// Extract returns the entities m names: its speaker (a person), its cue
// anchors that are not dates, and the proper names of its value, each once
// by normalised name, at most MaxCandidates. A vault memory names nothing:
// its text is not to be read.
func Extract(m *engram.Memory) []Candidate {
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
	for _, n := range lang.Names(tag, m.Value, nil) {
		if !inTitle(engram.NormalizeName(n), titles) {
			add(n, typeOf(m.Value, n, titles))
		}
	}
	return out
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
	case placePrepositions[w]:
		return engram.EntityPlace
	case personCues[w]:
		return engram.EntityPerson
	}
	return ""
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

package entity

import (
	"strings"

	"github.com/engramhq/engram"
)

// Stage says which rule of resolution decided that two names are one
// entity.
type Stage string

// Resolution stages, cheapest first.
const (
	StageNone    Stage = ""        // no rule joined them
	StageExact   Stage = "exact"   // the same normalised name, or one is the other's alias
	StageFold    Stage = "fold"    // the same after a German transliteration (ü/ue) is folded
	StageShort   Stage = "short"   // a known short form of a given name
	StagePartial Stage = "partial" // a person's given name or surname alone for the full name
	StageEdit    Stage = "edit"    // a small edit distance between long names
)

// Name is one side of a resolution: a name with its type and aliases.
type Name struct {
	Norm    string   // engram.NormalizeName of the name
	Type    string   // "" when not known
	Aliases []string // normalised
	Summary string   // what is known of it; only the costlier stages (Resolver) read it
}

// NameOf returns the Name of an entity.
func NameOf(e *engram.Entity) Name {
	n := Name{Norm: e.Norm, Type: e.Type, Summary: e.Summary}
	for _, k := range e.Keys()[1:] {
		n.Aliases = append(n.Aliases, k)
	}
	return n
}

// NameOfCandidate returns the Name of a candidate.
func NameOfCandidate(c Candidate) Name {
	return Name{Norm: engram.NormalizeName(c.Name), Type: c.Type}
}

// Same reports whether a and b name one entity, and the stage that said
// so. Types that are both known and differ never join (a place "Paris"
// and a person "Paris Hilton"), except that a thing of unknown kind
// ("thing" or "") joins anything.
func Same(a, b Name) (bool, Stage) {
	if a.Norm == "" || b.Norm == "" {
		return false, StageNone
	}
	if a.Norm == b.Norm || contains(a.Aliases, b.Norm) || contains(b.Aliases, a.Norm) {
		return true, StageExact
	}
	if !compatible(a.Type, b.Type) {
		return false, StageNone
	}
	if titlesDiffer(a.Norm, b.Norm) {
		return false, StageNone
	}
	an, bn := stripTitles(a.Norm), stripTitles(b.Norm)
	if an == bn && an != "" {
		return true, StageFold
	}
	if fold(an) == fold(bn) {
		return true, StageFold
	}
	if shortForm(an, bn) {
		return true, StageShort
	}
	if partial(an, bn, a.Type, b.Type) {
		return true, StagePartial
	}
	if closeSpelling(fold(an), fold(bn)) {
		return true, StageEdit
	}
	return false, StageNone
}

// Resolve returns the entity among existing that c names, with the stage
// that decided, or nil. An exact match wins over any fuzzy one; among fuzzy
// matches the earliest stage, then the entity with the most mentions.
func Resolve(c Candidate, existing []engram.Entity) (*engram.Entity, Stage) {
	cn := NameOfCandidate(c)
	var best *engram.Entity
	bestRank := 99
	for i := range existing {
		ok, st := Same(cn, NameOf(&existing[i]))
		if !ok {
			continue
		}
		r := rank(st)
		if r < bestRank || r == bestRank && existing[i].Mentions > best.Mentions {
			best, bestRank = &existing[i], r
		}
	}
	if best == nil {
		return nil, StageNone
	}
	return best, stages[bestRank]
}

var stages = []Stage{StageExact, StageFold, StageShort, StagePartial, StageEdit}

func rank(s Stage) int {
	for i, x := range stages {
		if x == s {
			return i
		}
	}
	return len(stages)
}

// Tokens returns the words by which existing entities that may be c are
// looked up: the words of its normalised name (titles dropped), and the
// full forms of a short given name.
func Tokens(c Candidate) []string {
	n := stripTitles(engram.NormalizeName(c.Name))
	toks := engram.NameTokens(n)
	for _, w := range engram.NameTokens(n) {
		if f := fold(w); f != w {
			toks = append(toks, f)
		}
		toks = append(toks, shortForms[w]...)
		for full, shorts := range shortForms {
			if contains(shorts, w) {
				toks = append(toks, full)
			}
		}
	}
	return toks
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func known(t string) bool { return t != "" && t != engram.EntityThing }

func compatible(a, b string) bool { return !known(a) || !known(b) || a == b }

// titleWords are honorifics and kinship words dropped before comparing
// ("Dr. Anna Schmidt", "Tante Grete", "tía Carmen").
var titleWords = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "herr": true, "frau": true,
	"sr": true, "sra": true, "srta": true, "don": true, "dona": true, "tante": true, "onkel": true,
	"tia": true, "tio": true, "aunt": true, "uncle": true, "oma": true, "opa": true,
	// Words of a geographic feature's name: "Lake Tahoe" is Tahoe.
	"lake": true, "mount": true, "mt": true, "lago": true, "monte": true,
}

// titlesDiffer reports two names that both start with a title and not the
// same one: "Herr Weber" and "Frau Weber" are two people.
func titlesDiffer(a, b string) bool {
	at, _, _ := strings.Cut(a, " ")
	bt, _, _ := strings.Cut(b, " ")
	return titleWords[at] && titleWords[bt] && at != bt && strings.Contains(a, " ") && strings.Contains(b, " ")
}

func stripTitles(n string) string {
	ws := strings.Fields(n)
	for len(ws) > 1 && titleWords[ws[0]] {
		ws = ws[1:]
	}
	return strings.Join(ws, " ")
}

// fold spells German transliterations and "ph" one way: "mueller" and
// "muller" (from "Müller") both become "muller", "stephan" "stefan".
func fold(n string) string { return folder.Replace(n) }

// folder is built once: a Replacer is dear to build and safe to share.
var folder = strings.NewReplacer("ae", "a", "oe", "o", "ue", "u", "ph", "f")

// shortForms are common short forms of given names in English, German and
// Spanish, by full name.
var shortForms = map[string][]string{
	"robert": {"bob", "rob", "bobby"}, "william": {"bill", "will", "billy"}, "richard": {"rick", "dick", "rich"},
	"elizabeth": {"liz", "beth", "lizzy", "betty"}, "katherine": {"kate", "kathy", "katie"}, "michael": {"mike", "mikey"},
	"james": {"jim", "jimmy"}, "jennifer": {"jen", "jenny"}, "alexander": {"alex"}, "christopher": {"chris"},
	"johannes": {"hannes", "jo"}, "margarete": {"grete", "gretel"}, "wolfgang": {"wolf"}, "friedrich": {"fritz"},
	"francisco": {"paco", "pancho"}, "jose": {"pepe"}, "guadalupe": {"lupe"}, "dolores": {"lola"},
	"ignacio": {"nacho"}, "enrique": {"quique"}, "concepcion": {"concha", "conchita"}, "manuel": {"manolo"},
}

// shortForm reports whether a and b are the same name but for one word
// that is a short form of the other's ("Bob Smith", "Robert Smith").
func shortForm(a, b string) bool {
	aw, bw := strings.Fields(a), strings.Fields(b)
	if len(aw) != len(bw) {
		return false
	}
	diff := 0
	for i := range aw {
		if aw[i] == bw[i] {
			continue
		}
		if !contains(shortForms[aw[i]], bw[i]) && !contains(shortForms[bw[i]], aw[i]) {
			return false
		}
		diff++
	}
	return diff == 1
}

// partial reports whether one name is a single word that is the first or
// last word of the other, a person's name of two or three words: a given
// name or a surname alone. One of them must be known to be a person and
// the other a person or unknown: places ("York", "New York") and things
// ("Google", "Google Maps") never join this way.
func partial(a, b, at, bt string) bool {
	if at != engram.EntityPerson && bt != engram.EntityPerson || known(at) && at != engram.EntityPerson || known(bt) && bt != engram.EntityPerson {
		return false
	}
	aw, bw := strings.Fields(a), strings.Fields(b)
	if len(aw) > len(bw) {
		aw, bw = bw, aw
	}
	if len(aw) != 1 || len(bw) < 2 || len(bw) > 3 || len([]rune(aw[0])) < 3 {
		return false
	}
	return aw[0] == bw[0] || aw[0] == bw[len(bw)-1]
}

// closeSpelling reports a spelling variant of a long name: one edit
// (insert, delete, substitute or swap) for names of 6 to 9 letters with the
// same first letter, two for longer ones.
func closeSpelling(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	n := min(len(ar), len(br))
	if n < 6 || ar[0] != br[0] {
		return false
	}
	limit := 1
	if n >= 10 {
		limit = 2
	}
	return !gendered(ar, br) && distance(ar, br, limit) <= limit
}

// gendered reports the pairs of given names that differ only in a
// gendered ending: an "a" added (Daniel, Daniela) or a final "o" for an
// "a" (Antonio, Antonia). Spelling variants are never formed that way.
func gendered(a, b []rune) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch {
	case len(b) == len(a)+1:
		return b[len(b)-1] == 'a' && string(b[:len(a)]) == string(a)
	case len(a) == len(b):
		i := len(a) - 1
		return string(a[:i]) == string(b[:i]) && (a[i] == 'a' && b[i] == 'o' || a[i] == 'o' && b[i] == 'a')
	}
	return false
}

// distance is the optimal string alignment distance of a and b, or
// limit+1 once it exceeds limit.
func distance(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

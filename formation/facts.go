package formation

import (
	"regexp"
	"slices"
	"strings"

	"github.com/engramhq/engram/lang"
)

// A fact is one attribute of a person a sentence states in the first
// person: where they live or work, what they eat, a favourite, a status,
// how many of something they have.
type fact struct {
	tag   string // the language of the phrasing that matched
	attr  string // e.g. "residence", "favourite colour", "count of cat"
	value string // as said, e.g. "Munich"
	label string // how the language says it: "lives in"
}

// factRule is one phrasing of a fact: re matches the sentence with the
// value in group "v" and, for attributes named by the speaker (a
// favourite, a count), the attribute's noun in group "a". A sentence
// without one of the words of need (lower case, parts of words) is not
// matched against re, which keeps long texts cheap.
type factRule struct {
	attr  string
	label string
	need  []string
	re    *regexp.Regexp
}

// Pieces of the patterns: a proper name (a capitalised run, the place or
// employer), a short phrase, and the number words of counts.
const (
	name   = `(?P<v>\p{Lu}[\p{L}'’-]*(?:[ -](?:(?:de|del|la|am|an|upon|on|sur) )?\p{Lu}[\p{L}'’-]*){0,3})`
	phrase = `(?P<v>[\p{L}\d'’ -]{2,40}?)(?:[,.;!?]|\s(?:and|but|because|since|now|und|aber|weil|jetzt|y|pero|porque|ahora|et|mais|parce)\b|$)`
	nounA  = `(?P<a>\p{L}{3,20})`
	numEN  = `(?P<v>\d+|two|three|four|five|six|seven|eight|nine|ten)`
	numDE  = `(?P<v>\d+|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn)`
	numES  = `(?P<v>\d+|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez)`
	numFR  = `(?P<v>\d+|deux|trois|quatre|cinq|six|sept|huit|neuf|dix)`
)

func rules(attr, label, need string, res ...string) []factRule {
	out := make([]factRule, len(res))
	for i, r := range res {
		out[i] = factRule{attr, label, strings.Fields(need), regexp.MustCompile(r)}
	}
	return out
}

func join(rs ...[]factRule) []factRule {
	var out []factRule
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

// factRules are the phrasings of everyday speech that state a fact, per
// language. Each is anchored on the speaker ("I", "ich", "yo", "je"): "my
// sister lives in Rome" says nothing of where the speaker lives.
var factRules = map[string][]factRule{
	lang.English: join(
		rules("residence", "lives in", "live liv resid based moved relocat",
			`(?i:\bI(?:'m|’m| am)? (?:now |currently |still |actually )?(?:live|living|reside|residing|based) in )`+name,
			`(?i:\bI(?:'ve|’ve| have)? (?:just |recently |finally |now )?(?:moved|relocated) (?:back )?to )`+name),
		rules("workplace", "works at", "work job joined hired",
			`(?i:\bI(?:'m|’m| am)? (?:now |currently |still )?(?:work|working) (?:at|for) )`+name,
			`(?i:\bI(?:'ve|’ve| have)? (?:just |recently )?(?:started|begun|began) (?:working|a (?:new )?job) (?:at|for|with) )`+name,
			`(?i:\bI(?:'ve|’ve| have)? (?:just |recently )?(?:joined|been hired by|got a job at) )`+name),
		rules("occupation", "works as", "work",
			`(?i:\bI(?:'m|’m| am)? (?:now |currently )?(?:work|working) as (?:an? )?)`+phrase),
		rules("diet", "is", "vegetarian vegan pescatarian",
			`(?i:\bI(?:'m|’m| am) (?:now |still |a )?(?:a )?)(?P<v>(?i:vegetarian|vegan|pescatarian))\b`),
		rules("diet", "eats again:", "eating",
			`(?i:\bI(?:'ve|’ve| have)? (?:started|begun|began) eating )(?P<v>(?i:meat|fish|chicken|dairy))(?i: again)`),
		rules("relationship", "is", "single married engaged divorced relationship",
			`(?i:\bI(?:'m|’m| am) (?:now |currently )?)(?P<v>(?i:single|married|engaged|divorced|in a relationship))\b`,
			`(?i:\bI (?:just |recently )?got )(?P<v>(?i:married|engaged|divorced))\b`),
		rules("favourite", "favourite", "favorite favourite",
			`(?i:\bmy (?:new |current |all-time )?favou?rite )`+nounA+`(?i: (?:is|are|has become|is now) )`+phrase),
		rules("count", "has", "have own",
			`(?i:\bI (?:now |currently )?(?:have|own) )`+numEN+` `+nounA),
	),
	lang.German: join(
		rules("residence", "wohnt in", "wohne lebe gezogen",
			// "und wohne": the subject left out in a second clause, which
			// the first-person verb still names.
			`(?i:\b(?:ich|und) (?:wohne|lebe) (?:jetzt |inzwischen |mittlerweile |noch |seit (?:\S+ ){1,2})?in )`+name,
			`(?i:\bich bin (?:jetzt |gerade |kürzlich |letzte[nr]? \S+ |vor \S+ \S+ )?(?:mit (?:meine[mnr]?|unsere[mnr]?) \S+ )?nach )`+name+`(?i: (?:gezogen|umgezogen))`,
			// Verb second: "Letzten Monat bin ich (mit meiner Familie) nach München gezogen."
			`(?i:\bbin ich (?:jetzt |gerade |kürzlich |endlich )?(?:mit (?:meine[mnr]?|unsere[mnr]?) \S+ )?nach )`+name+`(?i: (?:gezogen|umgezogen))`),
		rules("workplace", "arbeitet bei", "arbeite",
			`(?i:\b(?:ich|und) arbeite (?:jetzt |inzwischen |mittlerweile |noch |seit (?:\S+ ){1,2})?(?:bei|für) )`+name),
		rules("diet", "ist", "vegetar vegan",
			`(?i:\bich bin (?:jetzt |seit (?:\S+ ){1,2})?)(?P<v>(?i:vegetarier(?:in)?|veganer(?:in)?|vegetarisch|vegan))\b`),
		rules("diet", "isst wieder:", "esse",
			`(?i:\bich esse (?:jetzt )?wieder )(?P<v>(?i:fleisch|fisch))`),
		rules("relationship", "ist", "verheiratet verlobt geschieden single",
			`(?i:\bich bin (?:jetzt |seit (?:\S+ ){1,2})?)(?P<v>(?i:verheiratet|verlobt|geschieden|single))\b`),
		rules("favourite", "Lieblings", "lieblings",
			`(?i:\bmein(?:e)? (?:neue[rs]? )?lieblings)`+nounA+`(?i: ist (?:jetzt )?)`+phrase),
		rules("count", "hat", "habe",
			`(?i:\bich habe (?:jetzt |inzwischen )?)`+numDE+` `+nounA),
	),
	lang.Spanish: join(
		rules("residence", "vive en", "vivo resido mudé mudado trasladé trasladado",
			`(?i:\b(?:yo )?(?:vivo|resido) (?:ahora |actualmente |todavía )?en )`+name,
			`(?i:\bme (?:mudé|he mudado|trasladé|he trasladado) (?:a|en) )`+name),
		rules("workplace", "trabaja en", "trabajo trabajar",
			`(?i:\btrabajo (?:ahora |actualmente )?(?:en|para) )`+name,
			`(?i:\bempecé a trabajar (?:en|para) )`+name),
		rules("diet", "es", "vegetarian vegan",
			`(?i:\bsoy (?:ahora )?)(?P<v>(?i:vegetarian[oa]|vegan[oa]))\b`),
		rules("diet", "come otra vez:", "comer",
			`(?i:\b(?:volví|he vuelto|vuelvo) a comer )(?P<v>(?i:carne|pescado|pollo))`),
		rules("relationship", "está", "casad comprometid divorciad solter",
			`(?i:\bestoy (?:ahora )?)(?P<v>(?i:casad[oa]|comprometid[oa]|divorciad[oa]|solter[oa]))\b`),
		rules("favourite", "favorito", "favorit preferid",
			`(?i:\bmi )`+nounA+`(?i: (?:favorit[oa]|preferid[oa]) es (?:ahora )?)`+phrase),
		rules("count", "tiene", "tengo",
			`(?i:\btengo (?:ahora )?)`+numES+` `+nounA),
	),
	lang.French: join(
		rules("residence", "habite à", "habite vis déménagé",
			`(?i:\b(?:j'|j’)habite (?:maintenant |actuellement )?(?:à|a|en) )`+name,
			`(?i:\bje vis (?:maintenant )?(?:à|en) )`+name,
			`(?i:\b(?:j'|j’)ai déménagé (?:à|a|en) )`+name),
		rules("workplace", "travaille chez", "travaille",
			`(?i:\bje travaille (?:maintenant )?(?:chez|pour) )`+name),
		rules("count", "a", "ai ",
			`(?i:\b(?:j'|j’)ai (?:maintenant )?)`+numFR+` `+nounA),
	),
}

// staleTerms are the words of a question about an attribute, in every
// language the rules read: a memory whose fact of that attribute was
// replaced ranks lower for a question with one of them.
var staleTerms = map[string][]string{
	"residence":    {"live", "lives", "living", "lived", "reside", "resides", "home", "address", "based", "moved", "wohnt", "wohnen", "wohnst", "lebt", "leben", "zuhause", "vive", "vives", "viven", "vivir", "reside", "casa", "habite", "habites", "vit", "vis"},
	"workplace":    {"work", "works", "working", "job", "employer", "company", "arbeitet", "arbeiten", "arbeitest", "job", "firma", "trabaja", "trabajas", "trabajo", "empresa", "travaille", "travailles", "travail"},
	"occupation":   {"work", "works", "job", "profession", "occupation", "beruf", "arbeitet", "trabaja", "profesión", "métier"},
	"diet":         {"eat", "eats", "eating", "diet", "vegetarian", "vegan", "meat", "fish", "isst", "essen", "vegetarier", "fleisch", "fisch", "come", "comer", "dieta", "vegetariano", "carne", "pescado"},
	planTrip:       {"going", "go", "trip", "travel", "travelling", "traveling", "visit", "visiting", "flying", "plan", "plans", "fährt", "fahren", "fliegt", "reist", "reise", "reisen", "urlaub", "va", "van", "ir", "viaje", "viaja", "viajar", "planes", "vacaciones"},
	planMove:       {"moving", "move", "relocating", "plan", "plans", "zieht", "ziehen", "umzug", "muda", "mudarse", "mudanza", "planes", "déménage"},
	planJob:        {"job", "start", "starting", "work", "plan", "plans", "stelle", "job", "arbeit", "trabajo", "empieza", "empezar", "planes"},
	"relationship": {"married", "single", "engaged", "divorced", "relationship", "partner", "verheiratet", "ledig", "verlobt", "casado", "casada", "soltero", "soltera", "pareja"},
}

// termsOf returns the question words of attr: its own list, else the
// words of the attribute's name ("favourite colour" → favourite, colour).
func termsOf(attr string) []string {
	if ts, ok := staleTerms[attr]; ok {
		return ts
	}
	var out []string
	for _, w := range lang.Words(strings.ToLower(attr)) {
		if len(w) > 2 && w != "count" && w != "of" {
			out = append(out, w)
		}
	}
	return append(out, "favourite", "favorite", "how", "many")
}

// ruleLangs are the languages with rules, in the order tried after the
// detected one: detection is unsure of a short sentence.
var ruleLangs = []string{lang.English, lang.German, lang.Spanish, lang.French}

// tryOrder returns tag first, then the other languages with rules.
func tryOrder(tag string) []string {
	out := []string{tag}
	for _, l := range ruleLangs {
		if l != tag {
			out = append(out, l)
		}
	}
	return out
}

// factsOf returns the facts the sentences of text state about their
// speaker, read by the rules of tag, the detected language, else of the
// first other language whose rules match; questions state none.
func factsOf(tag, text string) []fact {
	var out []fact
	seen := map[string]bool{}
	for _, s := range sentences(text) {
		if strings.HasSuffix(s, "?") || strings.HasPrefix(s, "¿") {
			continue
		}
		lower := strings.ToLower(s)
		for _, l := range tryOrder(tag) {
			n := len(out)
			for _, r := range factRules[l] {
				f, ok := r.match(l, s, lower)
				if ok && !seen[f.attr] {
					seen[f.attr] = true
					f.tag = l
					out = append(out, f)
				}
			}
			if len(out) > n {
				break
			}
		}
	}
	return out
}

// match returns the fact sentence s (lower, in lower case) states by r's
// phrasing.
func (r factRule) match(tag, s, lower string) (fact, bool) {
	if !slices.ContainsFunc(r.need, func(w string) bool { return strings.Contains(lower, w) }) {
		return fact{}, false
	}
	m := r.re.FindStringSubmatch(s)
	if m == nil {
		return fact{}, false
	}
	f := fact{attr: r.attr, label: r.label}
	for i, g := range r.re.SubexpNames() {
		switch g {
		case "v":
			f.value = strings.TrimSpace(m[i])
		case "a":
			a := strings.ToLower(m[i])
			if notCounted[a] {
				return fact{}, false
			}
			if r.attr == "count" {
				f.attr = "count of " + lang.Stem(tag, a)
				f.label += " " + a + ":"
			} else {
				f.attr = "favourite " + lang.Stem(tag, a)
				f.label += " " + a + ":"
			}
		}
	}
	if f.value == "" || len(strings.Fields(f.value)) > 6 {
		return fact{}, false
	}
	return f, true
}

// notCounted are nouns whose count is no attribute of a person ("I have
// ten minutes").
var notCounted = setOf("minute minutes hour hours day days week weeks month months year years time times " +
	"question questions thing things idea ideas more other different minuten stunden tage wochen jahre fragen " +
	"minutos horas días semanas años preguntas cosas")

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// sentences splits text at sentence ends, keeping each end mark.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		switch r {
		case '.', '!', '?', '。', '！', '？', '\n':
			if s := strings.TrimSpace(text[start : i+len(string(r))]); s != "" {
				out = append(out, s)
			}
			start = i + len(string(r))
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

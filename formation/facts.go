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
	noun  string // a counted or favourite thing, or a scheduled event, as said ("cats")
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
	verbA  = `(?P<w>\p{L}{3,15})`                  // what was done, e.g. "run"
	eventA = `(?P<e>\p{L}{3,20}(?: \p{L}{3,20})?)` // a scheduled thing, e.g. "team meeting"
	// eventFR is eventA in French, whose second word may be elided:
	// "réunion d'équipe".
	eventFR = `(?P<e>\p{L}{3,20}(?: (?:d['’])?\p{L}{3,20})?)`
	// eventES is eventA in Spanish, whose second noun follows de: "clase
	// de guitarra".
	eventES = `(?P<e>\p{L}{3,20}(?: (?:de |del )?\p{L}{3,20})?)`
	// dayV is a day or days of the week an activity is on ("Tuesdays",
	// "on Friday mornings"), group "v".
	dayV = `(?P<v>(?i:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?)(?: (?:mornings?|afternoons?|evenings?|nights?))?(?: at \d{1,2}(?::\d\d)? ?(?:am|pm)?)?)\b`
	// whenV is a phrase that may hold a clock time ("2:30pm").
	whenV = `(?P<v>[\p{L}\d'’: -]{2,40}?)(?:[,.;!?]|\s(?:and|but|because|since|now|und|aber|weil|jetzt|statt|y|pero|porque|ahora|et|mais|parce|maintenant)\b|$)`
	numEN = `(?P<v>\d+|one|two|three|four|five|six|seven|eight|nine|ten)`
	numDE = `(?P<v>\d+|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn)`
	numES = `(?P<v>\d+|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez)`
	numFR = `(?P<v>\d+|deux|trois|quatre|cinq|six|sept|huit|neuf|dix)`
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
			`(?i:\bI (?:now |currently )?(?:have|own) (?:now )?)`+numEN+` `+nounA),
		// Counts of what one has done: "I've now run five marathons".
		rules("count", "has", "have ve ",
			`(?i:\bI(?:'ve|’ve| have) (?:now |already |so far |just )?)`+verbA+` `+numEN+` `+nounA),
		rules("time", "is", "is ",
			`(?i:\b(?:my|our|the) )`+eventA+`(?i: (?:is|will be)(?: now)?(?: (?:moved|rescheduled|scheduled|set|planned))?(?: to| for)? )`+whenV),
		// A weekly activity and its day: "I go swimming on Tuesdays", "I
		// moved my swimming to Thursdays".
		rules("time", "is on", "day weekend",
			`(?i:\bI (?:usually |always |normally |often |now |still )?(?:go|do|have|take|attend|play|practi[cs]e) (?:my )?)`+eventA+`(?i: (?:on|every) )`+dayV,
			`(?i:\bI(?:'ve|’ve| have)? (?:just |now |recently )?(?:moved|changed|switched|rescheduled|shifted) my )`+eventA+`(?i: (?:to|for) (?:on )?)`+dayV),
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
			`(?i:\bich habe (?:jetzt |inzwischen |schon |bereits )?)`+numDE+` `+nounA,
			// Verb second: "jetzt habe ich drei Katzen".
			`(?i:\b(?:jetzt|nun|inzwischen|mittlerweile|schon) habe ich )`+numDE+` `+nounA),
		rules("time", "ist", "ist ",
			`(?i:\b(?:mein|meine|unser|unsere|das|der|die) )`+eventA+`(?i: (?:ist|findet) (?:jetzt |nun )?(?:auf )?)`+whenV),
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
		rules("count", "ha", "he ",
			`(?i:\b(?:ya |ahora )?he (?:ya |ahora )?)`+verbA+` `+numES+` `+nounA),
		rules("time", "es", "es será",
			`(?i:\b(?:mi|nuestra|nuestro|la|el) )`+eventES+`(?i: (?:es|será|está programad[oa]) (?:ahora )?(?:para )?)`+whenV),
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
		// Counts of what one has done: "j'ai maintenant couru cinq marathons".
		rules("count", "a", "ai ",
			`(?i:\b(?:j'|j’)ai (?:maintenant |déjà |désormais )?)`+verbA+` `+numFR+` `+nounA),
		rules("time", "est", "est sera lieu",
			`(?i:\b(?:mon|ma|notre|le|la) )`+eventFR+`(?i: (?:est|sera|aura lieu)(?: maintenant| désormais)?(?: (?:prévue?|fixée?|déplacée?|reportée?))?(?: (?:à|au|pour|le))? )`+whenV),
	),
}

// staleTerms are the words of a question about an attribute, in every
// language the rules read: a memory whose fact of that attribute was
// replaced ranks lower for a question with one of them.
var staleTerms = map[string][]string{
	"residence":    {"live", "lives", "living", "lived", "reside", "resides", "home", "address", "based", "moved", "wohnt", "wohnen", "wohnst", "lebt", "leben", "zuhause", "vive", "vives", "viven", "vivir", "reside", "casa", "habite", "habites", "vit", "vis", "住", "住在", "搬"},
	"workplace":    {"work", "works", "working", "job", "employer", "company", "arbeitet", "arbeiten", "arbeitest", "job", "firma", "trabaja", "trabajas", "trabajo", "empresa", "travaille", "travailles", "travail", "工作", "上班", "公司"},
	"occupation":   {"work", "works", "job", "profession", "occupation", "beruf", "arbeitet", "trabaja", "profesión", "métier", "工作", "职业"},
	"drink":        {"drink", "drinks", "drinking", "trinkt", "trinken", "trinkst", "bebe", "bebes", "beber", "toma", "boit", "bois", "boire", "喝"},
	"diet":         {"eat", "eats", "eating", "diet", "vegetarian", "vegan", "meat", "fish", "isst", "essen", "vegetarier", "fleisch", "fisch", "come", "comer", "dieta", "vegetariano", "carne", "pescado", "吃"},
	planTrip:       {"going", "go", "trip", "travel", "travelling", "traveling", "visit", "visiting", "flying", "plan", "plans", "fährt", "fahren", "fliegt", "reist", "reise", "reisen", "urlaub", "va", "van", "ir", "viaje", "viaja", "viajar", "planes", "vacaciones"},
	planMove:       {"moving", "move", "relocating", "plan", "plans", "zieht", "ziehen", "umzug", "muda", "mudarse", "mudanza", "planes", "déménage"},
	planJob:        {"job", "start", "starting", "work", "plan", "plans", "stelle", "job", "arbeit", "trabajo", "empieza", "empezar", "planes"},
	"relationship": {"married", "single", "engaged", "divorced", "relationship", "partner", "verheiratet", "ledig", "verlobt", "casado", "casada", "soltero", "soltera", "pareja", "结婚", "单身", "订婚", "离婚"},
}

// termsOf returns the question words of fact f: its attribute's own
// list, else the words of the attribute's name ("favourite colour" →
// favourite, colour) and the noun as said ("cats", "Katzen"), with, for a
// count, the words that ask how many in every language the rules read.
func termsOf(f fact) []string {
	if ts, ok := staleTerms[f.attr]; ok {
		return ts
	}
	var out []string
	for _, w := range lang.Words(strings.ToLower(f.attr)) {
		if len(w) > 2 && w != "count" && w != "of" && w != "time" {
			out = append(out, w)
		}
	}
	for _, w := range lang.Words(f.noun) {
		if len(w) > 2 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	if strings.HasPrefix(f.attr, "time of ") {
		return out // the event's words: "when" alone asks about anything
	}
	out = append(out, "favourite", "favorite", "how", "many")
	if strings.HasPrefix(f.attr, "count of ") {
		out = append(out, "viele", "wieviele", "cuántos", "cuántas", "cuantos", "cuantas", "combien")
	}
	return out
}

// ruleLangs are the languages with rules, in the order tried after the
// detected one: detection is unsure of a short sentence.
var ruleLangs = []string{lang.English, lang.German, lang.Spanish, lang.French, lang.Chinese}

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
			for _, r := range rulesOf(l) {
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
	if m == nil || !verbReading(tag, s, r.re) {
		return fact{}, false
	}
	f := fact{attr: r.attr, label: r.label}
	done := ""
	for i, g := range r.re.SubexpNames() {
		switch g {
		case "v":
			f.value = strings.TrimSpace(m[i])
		case "w":
			if done = strings.ToLower(m[i]); notDone[done] {
				return fact{}, false // "I have now three cats" counts cats, by the rule of having
			}
			if !gotten[done] {
				f.label += " " + done
			}
		case "a", "e":
			f.noun = strings.ToLower(m[i])
		}
	}
	if f.value == "" || len(strings.Fields(f.value)) > 6 || notCounted[f.noun] {
		return fact{}, false
	}
	return f.named(tag, done)
}

// named gives a fact of an attribute the speaker names (a count, a
// favourite, the time of an event) that attribute and its label, and
// refuses the time of an event that names no time: "the book is on the
// table".
func (f fact) named(tag, done string) (fact, bool) {
	switch f.attr {
	case "count":
		f.attr = "count of " + lang.Stem(tag, f.noun)
		if done != "" && !gotten[done] {
			f.attr = "count of " + lang.Stem(tag, done) + " " + lang.Stem(tag, f.noun)
		}
		f.label += " " + f.noun + ":"
	case "favourite":
		f.attr = "favourite " + lang.Stem(tag, f.noun)
		f.label += " " + f.noun + ":"
	case "time":
		if !timeWord.MatchString(f.value) || notEvent[f.noun] {
			return fact{}, false
		}
		var stems []string
		for _, w := range strings.Fields(f.noun) {
			stems = append(stems, lang.Stem(tag, w))
		}
		f.attr = "time of " + strings.Join(stems, " ")
		f.label = f.noun + " " + f.label + ":"
	}
	return f, true
}

// gotten are the verbs of a count that say one has it, not did it: "I've
// got three cats" counts cats as "I have three cats" does.
var gotten = setOf("got gotten")

// notDone are the adverbs that the verb of a count of what one has done
// could be taken for when they stand where the verb would ("I have now
// three cats"): such a sentence counts what one has, by another rule.
var notDone = setOf("now already just still maintenant déjà désormais encore ahora ya todavía jetzt schon bereits inzwischen noch")

// timeWord finds a time in a phrase, in English, German, Spanish or
// French: a weekday, a month, tomorrow, a clock time.
var timeWord = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|tomorrow|tonight|noon|midnight|` +
	`january|february|march|april|june|july|august|september|october|november|december|` +
	`montags?|dienstags?|mittwochs?|donnerstags?|freitags?|samstags?|sonntags?|morgen|übermorgen|januar|februar|märz|mai|juni|juli|oktober|dezember|` +
	`lunes|martes|miércoles|jueves|viernes|sábados?|domingos?|mañana|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|` +
	`lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|demain|janvier|février|mars|avril|juin|juillet|août|septembre|octobre|novembre|décembre|midi|minuit|` +
	`\d{1,2}(?::\d\d)? ?(?:am|pm|o'clock|uhr|heures?)|\d{1,2} ?h(?:\d\d)?|\d{1,2}:\d\d|a las \d|um \d)(?:[^\p{L}]|$)`)

// notEvent are nouns of the time phrasing that name no event of the
// speaker's: "the weather is ... tomorrow".
var notEvent = setOf("weather time date day week weekend wetter zeit tag woche tiempo día semana météo temps jour semaine")

// notCounted are nouns whose count is no attribute of a person ("I have
// ten minutes").
var notCounted = setOf("minute minutes hour hours day days week weeks month months year years time times " +
	"question questions thing things idea ideas more other different minuten stunden tage wochen jahre fragen " +
	"minutos horas días semanas años preguntas cosas minutes heures jours semaines mois ans questions choses")

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

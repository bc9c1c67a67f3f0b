package formation

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/engramhq/engram/lang"
)

// Changes a turn states beyond the fixed phrasings of factRules: a job
// stated as title and employer together, what one drinks now, a home
// given as a street, facts in Chinese, and stopping something one did or
// was (see stopsOf). The rules here are tried before factRules (see
// rulesOf): the first fact of an attribute a sentence states wins.

// Pieces of the change patterns: a job title (lower or upper case, up to
// five words) before the employer; a name that is not the fact's value;
// a Chinese value (a run of Han characters ended by a particle or a
// mark); and a thing stopped or drunk, ended by a mark, a conjunction or
// a word of time.
const (
	titleV = `(?P<v>\p{L}[\p{L}'’-]*(?: [\p{L}'’-]+){0,4}?)`
	titleX = `(?:\p{L}[\p{L}'’-]*(?: [\p{L}'’-]+){0,4}?)`
	hanV   = `(?P<v>\p{Han}{1,10}?)(?:了|吧|啊|呢|[，,。.！!；;、]|$)`
	thingV = `(?P<v>[\p{L}\d'’ -]{2,40}?)(?:[,.;!?]|\s(?:and|but|because|since|now|last|this|yesterday|today|anymore|any|for|ago|after|every|each|when|while|with|before|during|und|aber|weil|jetzt|seit|jeden|jede|letzte[nrs]?|mehr|y|pero|porque|ahora|desde|hace|cada|todos|todas|la semana|el mes|et|mais|parce|maintenant|depuis|chaque|tous|la semaine|le mois|il y a)\b|$)`
)

// nowV is what one switched to, group "n": "I switched from coffee to
// tea".
const nowV = `(?P<n>[\p{L}\d'’ -]{2,40}?)(?:[,.;!?]|\s(?:and|but|because|since|now|last|this|und|aber|jetzt|y|pero|ahora|et|mais|maintenant)\b|$)`

// nameX is name without its value group: an employer where the title is
// the fact's value.
var nameX = strings.Replace(name, "(?P<v>", "(?:", 1)

// jobRules returns the rules of a job stated as title and employer: for
// each phrasing pre+title+mid+employer, one rule whose value is the title
// (occupation) and one whose value is the employer (workplace), labelled
// in the language of the turn (labels: occupation's, workplace's), so a
// question in that language meets the fact's own words ("Wo arbeitet
// Bob?", "Bob arbeitet bei Siemens").
func jobRules(labels [2]string, need string, phrasings ...[2]string) []factRule {
	var out []factRule
	for _, p := range phrasings {
		out = append(out, rules("occupation", labels[0], need, p[0]+titleV+p[1]+nameX)...)
		out = append(out, rules("workplace", labels[1], need, p[0]+titleX+p[1]+name)...)
	}
	return out
}

// changeRules are the phrasings of this file, per language.
var changeRules = map[string][]factRule{
	lang.English: join(
		jobRules([2]string{"works as", "works at"}, "as",
			[2]string{`(?i:\bI(?:'m|’m| am)? (?:now |currently |still )?(?:work|working) as (?:an? )?)`, `(?i: (?:at|for|with) )`},
			[2]string{`(?i:\bI(?:'ve|’ve| have)? (?:just |recently |now )?(?:(?:[\p{L}'’]+ ){1,4}?and (?:then )?)?(?:started|begun|began|got|took|accepted|landed) (?:a |my |the )?(?:new )?(?:job|position|role|post) as (?:an? )?)`, `(?i: (?:at|for|with) )`}),
		rules("drink", "drinks", "drink",
			`(?i:\bI (?:now |only |mostly |just |usually )*drink (?:only |mostly )?)`+thingV),
		rules("residence", "lives in", "live street road avenue lane",
			`(?i:\bI(?:'m|’m| am)? (?:now |currently )?(?:live|living) (?:now )?(?:at|on|in) )(?P<v>(?:\d+ )?\p{Lu}[\p{L}'’-]* (?:Street|St|Road|Rd|Avenue|Ave|Lane|Boulevard|Drive|Way|Place|Square))\b`),
	),
	lang.German: join(
		jobRules([2]string{"arbeitet als", "arbeitet bei"}, "als",
			[2]string{`(?i:\b(?:ich|und) arbeite (?:jetzt |nun |inzwischen |seit (?:\S+ ){1,2})?als )`, `(?i: (?:bei|für) )`},
			[2]string{`(?i:\bich (?:habe |hab )?(?:\S+ ){0,4}?(?:eine[nr]? )?(?:neue[nr]? )?(?:stelle|job|position|arbeit) als )`, `(?i: (?:bei|für) )`}),
		rules("drink", "trinkt", "trinke",
			`(?i:\b(?:ich trinke|trinke ich) (?:jetzt |nun |inzwischen )?(?:nur noch |nur |meistens |fast nur )?)`+thingV),
		rules("residence", "wohnt in", "wohne lebe",
			`(?i:\b(?:ich|und) (?:wohne|lebe) (?:jetzt |nun |inzwischen |mittlerweile )?(?:in der |im |am )?)(?P<v>\p{Lu}\p{L}*(?:straße|strasse|str\.|weg|gasse|allee|platz|ring|damm))`),
	),
	lang.Spanish: join(
		jobRules([2]string{"trabaja como", "trabaja en"}, "como",
			[2]string{`(?i:\b(?:yo )?trabajo (?:ahora |actualmente )?(?:de |como )(?:una? )?)`, `(?i: (?:en|para) )`},
			[2]string{`(?i:\b(?:empecé|comencé|he empezado|he comenzado) (?:a trabajar|un (?:nuevo )?trabajo|un trabajo nuevo) (?:de |como )(?:una? )?)`, `(?i: (?:en|para) )`}),
		rules("drink", "bebe", "bebo",
			`(?i:\b(?:ahora )?(?:solo |sólo |solamente )?bebo (?:ahora )?(?:solo |sólo )?)`+thingV),
		rules("residence", "vive en", "vivo calle avenida",
			`(?i:\bvivo (?:ahora )?en (?:la )?)(?P<v>(?:calle|avenida|plaza|paseo) (?:de (?:la )?)?\p{Lu}[\p{L}'’-]*)`),
	),
	lang.French: join(
		jobRules([2]string{"travaille comme", "travaille chez"}, "comme tant",
			[2]string{`(?i:\bje travaille (?:maintenant |actuellement |désormais )?(?:comme|en tant que) )`, `(?i: (?:chez|pour|à) )`},
			[2]string{`(?i:\b(?:j'|j’)ai (?:commencé|trouvé|pris|accepté) un (?:nouveau )?(?:travail|poste|emploi|job) (?:comme |de |d['’]|en tant que ))`, `(?i: (?:chez|pour|à) )`}),
		rules("drink", "boit", "bois",
			`(?i:\bje (?:ne )?bois (?:maintenant |désormais )?(?:plus que |que |seulement |uniquement )?(?:du |de la |de l['’]|des )?)`+thingV),
		rules("residence", "habite", "habite rue avenue boulevard",
			`(?i:\b(?:j'|j’)habite (?:maintenant )?(?:au \d+,? |dans la |à la |)?)(?P<v>(?:rue|avenue|boulevard|place) (?:de la |de l['’]|du |des |de )?\p{Lu}[\p{L}'’-]*)`),
	),
	lang.Chinese: join(
		// A Han value needs no capital: the title and employer of "我在西门子当工程师".
		rules("occupation", "职业是", "我", `(?:我|[，,])(?:现在|目前|如今)?在\p{Han}{2,10}?(?:公司)?(?:当|做|担任)`+hanV),
		rules("workplace", "工作单位是", "我", `(?:我|[，,])(?:现在|目前|如今)?在(?P<v>\p{Han}{2,10}?)(?:公司)?(?:当|做|担任)`,
			// "我在华为工作": the employer alone, not a place one works in
			// ("家里", "这里"), a description ("北京的一家公司") or a
			// search for work ("找工作", "换工作").
			`(?:我|[，,])(?:现在|目前|如今|还)?在(?P<v>[^的这那哪家\P{Han}][^的找换求没不\P{Han}]{1,9}?)(?:公司)?(?:工作|上班)`),
		// A word of time may stand between 我 and the verb ("我上个月搬到了
		// 上海"), and a second clause may leave 我 out ("，现在住在浦东").
		rules("residence", "住在", "我", `(?:我(?:上个月|上周|去年|今年|最近|刚刚|刚|已经|现在|目前|如今){0,2}|[，,](?:现在|目前|如今))(?:住在|搬到了?|搬去了?)`+hanV),
		// Drinking now or as a habit, not what was drunk once ("喝了"):
		// after 我, or after a comma with an adverb of now, only or instead.
		rules("drink", "喝", "我", `(?:我(?:现在|如今|目前)?(?:只|每天早上|每天晚上|每天|早上|晚上|平时|通常|一般|经常|主要)?(?:改)?|[，,；;](?:现在|如今|目前)(?:只|每天|一般|经常|主要)?(?:改)?|[，,；;](?:只|改))喝(?P<v>[^了过着\P{Han}]\p{Han}{0,9}?)(?:了|吧|啊|呢|[，,。.！!；;、]|$)`),
		rules("favourite", "最喜欢的", "我", `我最喜欢的(?P<a>\p{Han}{1,4}?)(?:是|现在是)`+hanV),
	),
}

// rulesOf returns the rules of language tag: this file's first, then
// factRules'.
func rulesOf(tag string) []factRule { return allRules[tag] }

// allRules are rulesOf's answers, joined once.
var allRules = func() map[string][]factRule {
	out := map[string][]factRule{}
	for _, l := range ruleLangs {
		out[l] = join(changeRules[l], factRules[l])
	}
	return out
}()

// A stop is something a sentence says the speaker stopped doing or
// being: "I stopped drinking coffee", "ich trinke keinen Kaffee mehr",
// "ya no soy profesora", "j'ai arrêté de fumer", "我不再喝咖啡了".
type stop struct {
	tag      string
	thing    string // as said: "coffee", "teaching"
	now      string // what one switched to, "" when not said: "tea"
	sentence string // the sentence that says it
}

// stopRules are the phrasings of stopping, per language, the thing in
// group "v". Each is anchored on the speaker; a verb that names the
// activity (drinking, eating, working as) stands before the thing.
var stopRules = map[string][]*regexp.Regexp{
	lang.English: res(
		`(?i:\bI(?:'ve|’ve| have)? (?:just |recently |finally |already )?(?:stopped|quit|quitted|gave up|given up|give up|ditched) (?:(?:drinking|eating|smoking|taking|using|playing|doing|working|having|buying|watching|living) (?:as (?:an? )?|at |for )?|being (?:an? )?|my (?:job|work|position) (?:as (?:an? )?|at )?)?)`+thingV,
		`(?i:\bI(?:'m|’m| am) (?:now )?no longer (?:an? |the )?)`+thingV,
		`(?i:\bI (?:now )?no longer \p{L}+ (?:as (?:an? )?|at |in |for )?)`+thingV,
		`(?i:\bI(?:'m|’m| am) not (?:an? )?)(?P<v>[\p{L} -]{2,30}?) any ?more\b`,
		`(?i:\bI (?:don't|don’t|do not) (?:\p{L}+) (?:any )?)(?P<v>[\p{L} -]{2,30}?) any ?more\b`,
		`(?i:\bI(?:'ve|’ve| have)? (?:just |recently )?switched from (?:drinking |eating |using )?)(?P<v>[\p{L} -]{2,30}?) to (?:drinking |eating |using )?`+nowV),
	lang.German: res(
		`(?i:\bich (?:\p{L}+) (?:jetzt |nun |seitdem |auch )?kein(?:e|en|er|es|em)? )(?P<v>[\p{L} -]{2,40}?) mehr\b`,
		`(?i:\bich (?:\p{L}+) (?:jetzt |nun |seitdem )?nicht mehr (?:als |bei |in |im |für )?)`+thingV,
		`(?i:\b(?:ich habe|habe ich|ich hab) (?:\S+ ){0,3}?als )(?P<v>\p{L}+) aufgehört\b`,
		`(?i:\b(?:ich habe|habe ich|ich hab) (?:\S+ ){0,3}?mit (?:dem |der |den )?)(?P<v>[\p{L} -]{2,40}?) aufgehört\b`,
		`(?i:\b(?:ich habe|habe ich|ich hab) (?:\S+ ){0,3}?aufgehört,? (?:als |bei )?)(?P<v>[\p{L} -]{2,40}?)(?: zu \p{L}+|[,.;!]|$)`,
		`(?i:\bich habe (?:\S+ ){0,3}?meine[nr]? (?:job|stelle|arbeit) (?:als |bei )?)(?P<v>[\p{L} -]{2,30}?)(?i: gekündigt)`,
		`(?i:\bich bin (?:\S+ ){0,3}?von (?:dem |der |den )?)(?P<v>[\p{L} -]{2,30}?)(?i: (?:auf|zu) (?:dem |der |den )?)(?P<n>[\p{L} -]{2,30}?)(?i: (?:umgestiegen|gewechselt))`),
	lang.Spanish: res(
		`(?i:\bya no (?:\p{L}*(?:o|oy)) (?:más )?(?:como |en |de |para )?)`+thingV,
		`(?i:\b(?:dejé|he dejado) de (?:\p{L}+r (?:como |en |de |para )?)?)`+thingV,
		`(?i:\b(?:dejé|he dejado) (?:la |el |mi )(?:trabajo (?:como |de |en )?)?)`+thingV,
		`(?i:\b(?:renuncié|he renunciado) a (?:mi (?:trabajo|puesto|empleo) (?:como |de |en )?)?)`+thingV,
		`(?i:\b(?:me )?(?:pasé|cambié|he pasado|he cambiado) del? )(?P<v>[\p{L} -]{2,30}?)(?i: (?:a|al|por) (?:la |el )?)`+nowV),
	lang.French: res(
		`(?i:\b(?:je|j['’]) ?(?:ne |n['’])(?:\p{L}+) plus (?:de |d['’]|du |de la |des |le |la |les |comme |chez |à |en )?)`+thingV,
		`(?i:\b(?:j'|j’)ai (?:\S+ )?(?:arrêté|cessé|abandonné|quitté) (?:de |d['’])?(?:\p{L}+(?:er|ir|re) (?:de |d['’]|du |le |la |les |comme |chez )?|le |la |les |l['’]|mon |ma |mes )?(?:poste (?:de |chez )|travail (?:de |chez )|emploi (?:de |chez ))?)`+thingV,
		`(?i:\bje suis (?:\S+ )?passée? (?:du |de la |de l['’]|des |de )?)(?P<v>[\p{L} -]{2,30}?)(?i: (?:au|à la|à l['’]|aux|à) ?)`+nowV),
	lang.Chinese: res(
		`我(?:已经|现在)?(?:不再|不|没)(?:喝|吃|抽|当|做|去|用|玩|养)`+hanV,
		`我(?:已经|上周|上个月|去年)?(?:戒了|戒掉了|辞去了|辞掉了|放弃了|退出了)`+hanV,
		`我(?:已经)?把`+hanV+`(?:戒了|戒掉了|辞了|辞掉了)`),
}

// stopsOf returns what the sentences of text say the speaker stopped,
// read by the rules of tag, else of the first other language with rules
// that match; questions and conditions ("if I quit coffee") stop
// nothing.
func stopsOf(tag, text string) []stop {
	var out []stop
	for _, s := range sentences(text) {
		if strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") || strings.HasPrefix(s, "¿") {
			continue
		}
		for _, l := range tryOrder(tag) {
			n := len(out)
			for _, re := range stopRules[l] {
				loc := re.FindStringSubmatchIndex(s)
				if loc == nil || conditional.MatchString(s[:loc[0]]) {
					continue
				}
				v := strings.TrimSpace(s[loc[2]:loc[3]])
				if v != "" && len(strings.Fields(v)) <= 6 && !notStopped[strings.ToLower(strings.Fields(v)[0])] {
					st := stop{tag: l, thing: v, sentence: s}
					if n := re.SubexpIndex("n"); n >= 0 && loc[2*n] >= 0 {
						st.now = strings.TrimSpace(s[loc[2*n]:loc[2*n+1]])
					}
					out = append(out, st)
				}
			}
			if len(out) > n {
				break
			}
		}
	}
	return out
}

// notStopped are first words of a thing that make the verb one of going,
// not of stopping: "I just left for our vacation", "I left at noon".
var notStopped = setOf("for to from at on into by in off over up and it que than")

// conditional finds a word that makes what follows a condition or a
// wish: "if", "wenn", "si", "如果".
var conditional = regexp.MustCompile(`(?i)(?:\b(?:if|unless|whether|when|wenn|falls|ob|si|cuando|quand|lorsque)\b|如果|要是|假如)`)

// withoutStopped drops the facts that say, in the sentence that stops
// it, what was stopped: "ich trinke keinen Kaffee mehr" states no drink.
func withoutStopped(fs []fact, stops []stop) []fact {
	out := fs[:0:0]
	for _, f := range fs {
		dropped := false
		for _, st := range stops {
			if strings.Contains(st.sentence, f.value) && mentions(st.thing, f.value) {
				dropped = true
				break
			}
		}
		if !dropped {
			out = append(out, f)
		}
	}
	return out
}

// mentions reports whether the thing stopped and a held value name the
// same thing: for text in Han script, one holds the other; else a content
// word of each is the same or shares its first five letters ("teaching",
// "teacher"; "Kaffeetrinken", "Kaffee").
func mentions(thing, value string) bool {
	t, v := strings.ToLower(thing), strings.ToLower(value)
	if hasHan(t) || hasHan(v) {
		return hanOverlap(t, v)
	}
	for _, a := range contentWords(t) {
		for _, b := range contentWords(v) {
			if a == b || commonPrefix(a, b) >= 5 {
				return true
			}
		}
	}
	return false
}

// contentWords are the words of s of four letters or more that are not
// words of time or of function in the languages the rules read.
func contentWords(s string) []string {
	var out []string
	for _, w := range lang.Words(s) {
		if len([]rune(w)) >= 4 && !notContent[w] {
			out = append(out, w)
		}
	}
	return out
}

var notContent = setOf("with from that this last week month year anymore more than then just also only very much " +
	"mehr letzte letzten woche monat jahr jetzt seit schon noch auch nicht keine keinen kein meine meinen meiner " +
	"semana pasada pasado desde ahora también nada trabajo " +
	"semaine dernier dernière depuis maintenant aussi plus " +
	"work working job position")

// hanOverlap reports whether a run of two or more Han characters of a is
// in b, or of b in a.
func hanOverlap(a, b string) bool {
	for _, run := range hanRuns(a) {
		if len([]rune(run)) >= 2 && strings.Contains(b, run) {
			return true
		}
	}
	for _, run := range hanRuns(b) {
		if len([]rune(run)) >= 2 && strings.Contains(a, run) {
			return true
		}
	}
	return false
}

func hanRuns(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.Is(unicode.Han, r) })
}

func hasHan(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) })
}

func commonPrefix(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n
}

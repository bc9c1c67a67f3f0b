package retrieval

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
	"github.com/engramhq/engram/textsearch"
)

// Query is what analysis reads out of a search's free text: the text each
// channel should see and the hints the reranker uses.
type Query struct {
	Text string
	// Lang is the language of Text (see lang.Detect), "" when undecided:
	// analysis then reads it as English.
	Lang string
	// Dense is the text to embed: the question with its question words,
	// auxiliaries and question mark stripped, so that it looks like the
	// statements it should meet rather than like other questions.
	Dense string
	// Views are the phrasings of the query whose embeddings, averaged, make
	// the dense channel's query vector: Dense and the query as typed, each
	// also without the names it holds. A name weighs heavily in a short
	// embedding and pulls it towards everything that person said; the
	// question form meets the questions that came before an answer, which
	// formation indexes with it.
	Views []string
	// Parts are the occasions a comparison names ("which came first, the
	// tomatoes or the marigolds?", "how many days between A and B?"). The
	// dense channel searches for each on its own as well, since one
	// embedding of both lands between them.
	Parts []string
	// Terms are the query's content words, lower case (see
	// textsearch.TermsLang), without the question words.
	Terms []string
	// Names are the proper names in the query ("Caroline", "New York").
	Names []string
	// Temporal is true for questions about time: "when", "what date",
	// "how long ago", "which ... first", and their German, Spanish,
	// French, Italian, Portuguese, Dutch, Chinese and Japanese equivalents.
	Temporal bool
	// Periods are the absolute periods the query names or implies, relative
	// ones resolved against the search's reference time.
	Periods []lang.Mention
	// Months are months named without a year ("in June"): a match in any
	// year counts, because the reference time of a question about an old
	// conversation is rarely the conversation's year.
	Months []time.Month
	// Answer is the kind of answer a question wants, when its question
	// word says: AnswerPlace ("where"), AnswerPerson ("who"), AnswerCount
	// ("how many"), AnswerName ("what is the name"), or "".
	Answer string
	// Gathers is true for questions whose answer is put together from
	// several occasions: counts and totals ("how many", "in total"),
	// comparisons and orders ("the most", "which ... first"), the
	// present state of something that changed ("currently", "so far"),
	// and occasions placed by a period relative to now that has ended
	// ("two months ago", "last month"): the answer is picked among the
	// times the subject came up by their dates.
	Gathers bool
	// Tense is which state of a fact that changed the question asks
	// about: TenseNow, TensePast or TenseOpen (see Current).
	Tense string
	// AsksAssistant is true when the query is about what the assistant
	// said ("you told me", "you recommended"); AsksUser when it is about
	// the user ("I", "my").
	AsksAssistant, AsksUser bool
}

// Kinds of answer a question can ask for.
const (
	AnswerPlace  = "place"
	AnswerPerson = "person"
	AnswerCount  = "count"
	AnswerName   = "name"
)

var (
	placeQuestion  = regexp.MustCompile(`(?i)^\s*where\b|\bwhat (city|country|place|state|town)\b`)
	personQuestion = regexp.MustCompile(`(?i)^\s*(who|whom|whose)\b`)
	countQuestion  = regexp.MustCompile(`(?i)\bhow (many|much|long|old|often|far)\b`)
	nameQuestion   = regexp.MustCompile(`(?i)\bnames?\b|\bcalled\b|\bwhat (book|movie|show|song|band|game|restaurant|brand)s?\b`)
)

// leadingWords are stripped from the start of a question for the dense
// text: question words, auxiliaries and the articles after them. English's
// serve "" and the languages without a list of their own.
var leadingWords = map[string]map[string]bool{
	lang.English: wordSet(`what when where who whom whose which why how many much long often old far
		did does do is are was were has have had will would can could should might the a an kind type
		types kinds of sort`),
	lang.German: wordSet(`wann wo wohin woher wer wen wem wessen was wie welche welcher welches welchen
		welchem warum wieso weshalb viele viel lange oft alt weit hat habe hast haben hatte hatten ist
		sind war waren bin bist wird werden wurde wurden kann konnte können soll sollte der die das den
		dem ein eine einen mit von für seit`),
	lang.Spanish: wordSet(`qué que cuándo cuando dónde donde adónde quién quien quiénes cómo como cuál
		cuáles cuánto cuánta cuántos cuántas por porqué fue era es son está estaba he has ha hemos
		el la los las un una con de a`),
	lang.French: wordSet(`quand où qui que qu quoi comment quel quelle quels quelles combien pourquoi
		est-ce qu'est-ce est ce c'est ai as a avons avez ont était le la les un une de d avec à`),
	lang.Italian: wordSet(`quando dove chi che cosa come quale quali quanto quanta quanti quante
		perché ho hai ha è sono era il lo la i gli le un una con di a`),
	lang.Portuguese: wordSet(`quando onde quem que o qual quais quanto quanta quantos quantas como
		porque por é foi era está estava a os as um uma com de`),
	lang.Dutch: wordSet(`wanneer waar wie wat hoe welke welk hoeveel waarom heb hebt heeft hebben had
		was waren is zijn ben bent de het een met`),
}

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// questionWords are never content terms.
var questionWords = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "whose": true, "which": true,
	"why": true, "how": true, "kind": true, "type": true, "many": true, "much": true,
}

var (
	temporalQuestion = regexp.MustCompile(`(?i)^\s*when\b|\b(what|which) (date|day|time|year|month|week|season)\b|\bhow long (ago|since|before|after)\b|\bhow (many|much) (days|weeks|months|years|time)\b|\b(first|earlier|later|before|after|recently|most recent|latest|last time)\b|\bwhat order\b`)
	assistantRef     = regexp.MustCompile(`(?i)\byou (told|mentioned|said|recommended|suggested|provided|gave|listed|shared|wrote|described|explained|proposed|advised|came up with|helped)\b|\bremind me (what|of|which|how|about)\b|\b(your|you're|you) (recommendation|suggestion|advice|list|answer|response)s?\b`)
	userRef          = regexp.MustCompile(`(?i)\bI (mentioned|said|told you|shared|wrote|described|explained|asked)\b`)
	gathersQuestion  = regexp.MustCompile(`(?i)\b(how many|how much|total|in total|altogether|combined|the most|the least|first|both|different|each|every|between|currently|current|still|latest|recent|recently|all the|so far|what order)\b`)
	comparison       = regexp.MustCompile(`(?i)\b(first|before|after|earlier|later|sooner|between)\b`)
	between          = regexp.MustCompile(`(?i)\bbetween (.+?) and (.+?)[?.!]*$`)
	firstPerson      = regexp.MustCompile(`(?i)\b(i|i'm|i've|i'd|i'll|me|my|mine|myself)\b`)
)

// The question patterns of the languages other than English: simpler
// than English's, they say when a question asks about time, what kind of
// answer it wants, whether it gathers occasions and whether it is about the
// user.
var (
	temporalLang = map[string]*regexp.Regexp{
		lang.German:     regexp.MustCompile(`(?i)^\s*wann\b|\bseit wann\b|\b(welche[nmrs]?|an welchem) (datum|tag|jahr|monat|woche)\b|\bwie lange (her|schon)\b|\bwie viele (tage|wochen|monate|jahre)\b|\b(zuerst|vorher|nachher|früher|später|zuletzt)\b`),
		lang.Spanish:    regexp.MustCompile(`(?i)(^|[¿\s])cuándo\b|\bqué (día|fecha|año|mes|semana)\b|\bhace cuánto\b|\bcuánto tiempo\b|\b(primero|antes|después|última vez)\b`),
		lang.French:     regexp.MustCompile(`(?i)\bquand\b|\bquel(?:le)? (date|jour|année|mois|semaine)\b|\bdepuis (quand|combien)\b|\bil y a combien\b|\b(d'abord|avant|après|plus tôt|plus tard|la dernière fois)\b`),
		lang.Italian:    regexp.MustCompile(`(?i)^\s*quando\b|\b(quale|che) (giorno|data|anno|mese)\b|\bda quanto\b`),
		lang.Portuguese: regexp.MustCompile(`(?i)^\s*quando\b|\b(que|qual) (dia|data|ano|mês)\b|\bhá quanto\b`),
		lang.Dutch:      regexp.MustCompile(`(?i)^\s*wanneer\b|\bwelke (dag|datum|maand|week|jaar)\b|\bhoe lang (geleden|al)\b`),
		lang.Chinese:    regexp.MustCompile(`什么时候|什麼時候|何时|何時|哪天|哪一天|几号|幾號|几月|哪年|多久`),
		lang.Japanese:   regexp.MustCompile(`いつ|何日|何曜日|何年|何月|どのくらい前`),
	}
	// answerLang lists, per language, the patterns of AnswerPlace,
	// AnswerPerson, AnswerCount and AnswerName, in that order.
	answerLang = map[string][4]*regexp.Regexp{
		lang.German: {
			regexp.MustCompile(`(?i)^\s*(wo|wohin|woher)\b|\bin welche[mr]? (stadt|land|ort)\b`),
			regexp.MustCompile(`(?i)^\s*(mit |von |für )?(wer|wen|wem|wessen)\b`),
			regexp.MustCompile(`(?i)\bwie (viele?|lange|oft|alt|weit)\b`),
			regexp.MustCompile(`(?i)\bnamen?\b|\bheißt\b|\bwelche[nmrs]? (buch|film|serie|lied|band|spiel|restaurant|marke)\b`),
		},
		lang.Spanish: {
			regexp.MustCompile(`(?i)(^|[¿\s])(a|de)?dónde\b|\ben qué (ciudad|país|lugar)\b`),
			regexp.MustCompile(`(?i)(^|[¿\s])quién(es)?\b`),
			regexp.MustCompile(`(?i)\bcuánt[oa]s?\b`),
			regexp.MustCompile(`(?i)\bnombre\b|\bse llama\b|\bqué (libro|película|serie|canción|juego|restaurante|marca)\b`),
		},
		lang.French: {
			regexp.MustCompile(`(?i)(^|[\s'’])où([\s?]|$)|\bdans quel(le)? (ville|pays)\b`),
			regexp.MustCompile(`(?i)^\s*(avec |à |de |pour )?qui\b`),
			regexp.MustCompile(`(?i)\bcombien\b`),
			regexp.MustCompile(`(?i)\bnom\b|\bs'appelle\b|\bquel(le)? (livre|film|série|chanson|jeu|restaurant|marque)\b`),
		},
		lang.Chinese: {
			regexp.MustCompile(`哪里|哪裡|哪儿|在哪|什么地方|什麼地方`),
			regexp.MustCompile(`谁|誰`),
			regexp.MustCompile(`多少|几个|幾個|几次|几天`),
			regexp.MustCompile(`叫什么|叫什麼|名字`),
		},
		lang.Japanese: {
			regexp.MustCompile(`どこ`),
			regexp.MustCompile(`誰|だれ`),
			regexp.MustCompile(`いくつ|何人|何回|何個|どのくらい`),
			regexp.MustCompile(`名前|何という`),
		},
	}
	gathersLang = map[string]*regexp.Regexp{
		lang.German:  regexp.MustCompile(`(?i)\bwie (viele?)\b|\binsgesamt\b|\bzusammen\b|\bam (meisten|wenigsten)\b|\bzuerst\b|\bderzeit\b|\bmomentan\b|\bbisher\b`),
		lang.Spanish: regexp.MustCompile(`(?i)\bcuánt[oa]s\b|\ben total\b|\bprimero\b|\bactualmente\b|\bhasta ahora\b`),
		lang.French:  regexp.MustCompile(`(?i)\bcombien\b|\bau total\b|\ben tout\b|\bd'abord\b|\bactuellement\b|\bjusqu'à présent\b`),
		lang.Chinese: regexp.MustCompile(`多少|几次|总共|一共|最先|目前|现在`),
	}
	firstPersonLang = map[string]*regexp.Regexp{
		lang.German:     regexp.MustCompile(`(?i)\b(ich|mich|mir|mein|meine|meinem|meinen|meiner|meines)\b`),
		lang.Spanish:    regexp.MustCompile(`(?i)\b(yo|me|mi|mis|conmigo)\b`),
		lang.French:     regexp.MustCompile(`(?i)\b(je|moi|me|mon|ma|mes)\b|\b[jm]['’]`),
		lang.Italian:    regexp.MustCompile(`(?i)\b(io|mi|mio|mia|miei|mie|me)\b`),
		lang.Portuguese: regexp.MustCompile(`(?i)\b(eu|me|meu|minha|meus|minhas|comigo)\b`),
		lang.Dutch:      regexp.MustCompile(`(?i)\b(ik|mij|me|mijn)\b`),
		lang.Chinese:    regexp.MustCompile(`我`),
		lang.Japanese:   regexp.MustCompile(`私|僕|俺|わたし`),
	}
)

// english reports whether a query in language tag is read with the English
// patterns: English, and text whose language is undecided.
func english(tag string) bool { return tag == "" || tag == lang.English }

// Analyze reads a query in the language lang.Detect finds for it (English
// when undecided). now is the reference time for relative expressions
// ("last week", "letzte Woche").
func Analyze(text string, now time.Time) *Query {
	tag := lang.Detect(text)
	en := english(tag)
	q := &Query{Text: text, Lang: tag}
	q.Dense = denseText(tag, text)
	for _, t := range textsearch.TermsLang(tag, text) {
		if !en || !questionWords[t] {
			q.Terms = append(q.Terms, t)
		}
	}
	// Every word of a question may be a name at the start of a sentence,
	// but in German the capital of a noun says nothing.
	known := map[string]bool{}
	if tag != lang.German {
		for _, w := range strings.FieldsFunc(text, textsearch.IsSeparator) {
			known[strings.ToLower(w)] = true
		}
	}
	q.Names = lang.Names(tag, text, known)
	q.Views = views(q.Dense, text, q.Names)
	switch {
	case en:
		q.Temporal = temporalQuestion.MatchString(text)
		q.Gathers = gathersQuestion.MatchString(text)
		if comparison.MatchString(text) {
			q.Parts = parts(text)
		}
		switch {
		case placeQuestion.MatchString(text):
			q.Answer = AnswerPlace
		case personQuestion.MatchString(text):
			q.Answer = AnswerPerson
		case countQuestion.MatchString(text):
			q.Answer = AnswerCount
		case nameQuestion.MatchString(text):
			q.Answer = AnswerName
		}
	default:
		if re := temporalLang[tag]; re != nil {
			q.Temporal = re.MatchString(text)
		}
		if re := gathersLang[tag]; re != nil {
			q.Gathers = re.MatchString(text)
		}
		if res, ok := answerLang[tag]; ok {
			for i, kind := range []string{AnswerPlace, AnswerPerson, AnswerCount, AnswerName} {
				if res[i].MatchString(text) {
					q.Answer = kind
					break
				}
			}
		}
	}
	for _, m := range lang.ResolveLang(tag, text, now) {
		if !m.Relative && m.Unit == lang.Month && !hasYear(m.Text) {
			q.Months = append(q.Months, m.From.Month())
			continue
		}
		q.Periods = append(q.Periods, m)
		if m.Relative && !m.To.After(now) {
			// "two months ago", "last month": the subject came up on
			// several occasions, and the answer is the one of that time.
			q.Gathers = true
		}
	}
	if len(q.Periods) > 0 || len(q.Months) > 0 {
		q.Temporal = true
	}
	q.Terms = withoutRelative(tag, q.Terms, q.Periods)
	q.Tense, q.Terms = tenseOf(tag, text, q.Periods), withoutNow(q.Terms)
	if en {
		// "I mentioned ..." asks about the user's own words even when the
		// assistant is asked to remember them.
		q.AsksAssistant = assistantRef.MatchString(text) && !userRef.MatchString(text)
		q.AsksUser = !q.AsksAssistant && firstPerson.MatchString(text)
	} else if re := firstPersonLang[tag]; re != nil {
		q.AsksUser = re.MatchString(text)
	}
	return q
}

// withoutRelative returns terms without the words of the relative time
// expressions among ms ("last week", "vor zwei Tagen"): the temporal
// channel and the period boost find what happened then, while the words
// themselves would match any memory that says "last" or "week".
//
// A run of CJK characters is one term however many words it holds
// ("先週何をしましたか"): the expression is cut out of it, and what is left on
// either side stays.
func withoutRelative(tag string, terms []string, ms []lang.Mention) []string {
	drop := map[string]bool{}
	for _, m := range ms {
		if m.Relative {
			for _, t := range textsearch.TermsLang(tag, m.Text) {
				drop[t] = true
			}
		}
	}
	if len(drop) == 0 {
		return terms
	}
	var out []string
	for _, t := range terms {
		if drop[t] {
			continue
		}
		if textsearch.Segment(t) == t {
			out = append(out, t)
			continue
		}
		for d := range drop {
			t = strings.ReplaceAll(t, d, " ")
		}
		out = append(out, strings.Fields(t)...)
	}
	return out
}

// hasYear reports whether s holds a run of four digits: a month mention
// that names its year ("in March 2021", "2023年5月") rather than a month of
// any year ("in June", "im Mai", "5月").
func hasYear(s string) bool {
	run := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if run++; run == 4 {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

// Lexical returns the text the full-text channel searches for: the
// query's terms, without the words of the names drop says to leave out (a
// speaker's name alone matches every line that person said; the
// reranker's speaker boost weighs it instead), and, with inflect, each
// term's regular English inflections (see Inflections) for an English
// query, or its Snowball stem (see lang.Stem) when that differs, for a
// German, Spanish, French, Italian, Portuguese or Dutch one: the text
// index matches whole words, so a stem finds the texts where it stands as
// a word of its own ("Hunden" finds "Hund"). A CJK term is split into its
// character bigrams and its characters. With no terms left it returns the query as typed, or
// "" when the query named a period and nothing else ("what did I do last
// week?"), which the temporal channel answers.
func (q *Query) Lexical(inflect bool, drop func(name string) bool) string {
	skip := map[string]bool{}
	if drop != nil {
		for _, n := range q.Names {
			if !drop(n) {
				continue
			}
			for _, w := range strings.FieldsFunc(n, textsearch.IsSeparator) {
				skip[strings.ToLower(w)] = true
			}
		}
	}
	var out []string
	for _, t := range q.Terms {
		if skip[t] {
			continue
		}
		if seg := textsearch.Segment(t); seg != t {
			// A run of CJK characters is a phrase of its bigrams to the
			// text index: a whole question would have to appear verbatim.
			// Its bigrams as separate terms match the words it shares
			// with a memory; its characters, as terms too, match a
			// character a memory holds on its own ("Wei 喝 绿茶", as
			// formation writes a fact), which no bigram of the run
			// ("喝什么": "喝什", "什么") can.
			out = append(out, strings.Fields(seg)...)
			out = append(out, cjkChars(t)...)
			continue
		}
		out = append(out, t)
		switch {
		case !inflect:
		case english(q.Lang):
			out = append(out, Inflections(t)...)
		default:
			if st := lang.Stem(q.Lang, t); st != t && utf8.RuneCountInString(st) >= 3 {
				out = append(out, st)
			}
		}
	}
	if len(out) == 0 && len(q.Periods) == 0 {
		return q.Text
	}
	return strings.Join(out, " ")
}

// Speakers collects the speakers of memories, as name keys for
// SpeakerNamed.
type Speakers map[string]bool

// Add records the speaker of m, if it has one.
func (s Speakers) Add(m *engram.Memory) {
	if sp := m.Speaker(); sp != "" {
		s[strings.ToLower(sp)] = true
		if i := strings.IndexByte(sp, ' '); i > 0 {
			s[strings.ToLower(sp[:i])] = true
		}
	}
}

// Named reports whether a name is one of the speakers (whole or first name).
func (s Speakers) Named(name string) bool {
	return s[strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(name, "'s"), "’s"))]
}

// denseText strips a question's leading question words and auxiliaries
// (those of language tag) and its question marks: "When did Caroline go to
// the support group?" becomes "Caroline go to the support group", "Wann
// war ich im Park?" "ich im Park".
func denseText(tag, text string) string {
	lead, ok := leadingWords[tag]
	if !ok {
		lead = leadingWords[lang.English]
	}
	t := strings.TrimSpace(text)
	for {
		i := strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
		w := t
		if i >= 0 {
			w = t[:i]
		}
		if !lead[strings.ToLower(strings.Trim(w, ",'\"¿¡"))] || i < 0 {
			break
		}
		t = strings.TrimSpace(t[i:])
	}
	t = strings.TrimSpace(strings.NewReplacer("?", " ", "¿", " ").Replace(t))
	if t == "" {
		return strings.TrimSpace(text)
	}
	return strings.Join(strings.Fields(t), " ")
}

// views returns the distinct phrasings of a query to embed (see
// Query.Views).
func views(dense, text string, names []string) []string {
	var nameRe *regexp.Regexp
	if len(names) > 0 {
		alt := make([]string, len(names))
		for i, n := range names {
			alt[i] = regexp.QuoteMeta(n)
		}
		// Whole words only, with their possessive endings.
		nameRe = regexp.MustCompile(`\b(?:` + strings.Join(alt, "|") + `)(?:'s|’s)?\b`)
	}
	var out []string
	for _, v := range []string{dense, withoutNames(dense, nameRe), strings.TrimSpace(text), withoutNames(text, nameRe)} {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// withoutNames removes what names matches from text, or returns "" when
// there are no names or nothing else would be left.
func withoutNames(text string, names *regexp.Regexp) string {
	if names == nil {
		return ""
	}
	text = names.ReplaceAllString(text, " ")
	if len(textsearch.Terms(text)) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(text), " ")
}

// parts returns the two occasions a comparison names: the alternatives
// after its last comma, dash or colon ("..., A or B?"), or the ends of
// "between A and B". It returns nil when the question has neither form.
func parts(text string) []string {
	clean := func(s string) string {
		return strings.Trim(strings.TrimSpace(s), "?.!,;:\"' ")
	}
	tail := text
	if i := strings.LastIndexAny(text, ",:;–—"); i >= 0 {
		_, n := utf8.DecodeRuneInString(text[i:])
		tail = text[i+n:]
	} else if i := strings.LastIndex(text, " - "); i >= 0 {
		tail = text[i+3:]
	}
	if a, b, ok := strings.Cut(tail, " or "); ok && tail != text {
		if a, b = clean(a), clean(b); a != "" && b != "" {
			return []string{a, b}
		}
	}
	if g := between.FindStringSubmatch(text); g != nil {
		if a, b := clean(g[1]), clean(g[2]); a != "" && b != "" {
			return []string{a, b}
		}
	}
	return nil
}

// cjkChars returns the distinct CJK characters of t, in order: a lone
// character is a token of its own in the text index only where it stands
// apart from other CJK characters, so these match only such characters.
func cjkChars(t string) []string {
	var out []string
	seen := map[rune]bool{}
	for _, r := range t {
		if textsearch.IsCJK(r) && !seen[r] {
			seen[r] = true
			out = append(out, string(r))
		}
	}
	return out
}

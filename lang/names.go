package lang

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// notNames are, per language, capitalised words that start sentences or
// stand alone in chat often enough to be mistaken for names when they
// appear mid-sentence after an emoji or a dash, and the names of days and
// months. Lower-case. The English list applies to every language, since
// chat in any language borrows "ok" and "lol".
var notNames = map[string]map[string]bool{
	English: setOf(`i i'm i've i'll i'd im ive ill id ok okay oh hey hi hello wow yes yeah yep no nope thanks thank
	please sorry congrats congratulations omg lol haha hmm um uh well so and but or also anyway btw
	mr mrs ms dr st mt
	monday tuesday wednesday thursday friday saturday sunday
	january february march april may june july august september october november december
	the a an this that these those my your our their his her its it we you they he she
	what when where why how who which there here then now today tomorrow yesterday
	ai tv`),
	German: setOf(`ja nein danke bitte hallo tschüss genau naja na ach super toll klar stimmt echt moin servus
	herr frau prof montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag
	januar jänner februar märz april mai juni juli august september oktober november dezember
	wann warum wieso weshalb woher wohin heute gestern morgen vorgestern übermorgen gut schön cool`),
	Spanish: setOf(`sí gracias hola vale bueno buena buenas adiós claro genial perfecto oye mira pues bien
	sr sra srta dra don doña lunes martes miércoles jueves viernes sábado domingo
	enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre
	hoy ayer mañana anteayer dónde cuándo quién cómo cuál usted ustedes`),
	French: setOf(`oui non merci bonjour salut bonsoir coucou d'accord super génial bien bon ah eh bref voilà alors
	m mme mlle lundi mardi mercredi jeudi vendredi samedi dimanche
	janvier février mars avril mai juin juillet août septembre octobre novembre décembre
	aujourd'hui hier demain quand où comment pourquoi`),
	Italian: setOf(`sì grazie ciao prego buongiorno buonasera bene va certo perfetto allora dai
	sig sig.ra dott lunedì martedì mercoledì giovedì venerdì sabato domenica
	gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre
	oggi ieri domani dove quando come perché lei`),
	Portuguese: setOf(`sim não obrigado obrigada olá oi tchau beleza legal ótimo bom boa bem claro então
	sr sra dr dra segunda terça quarta quinta sexta sábado domingo
	janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro
	hoje ontem amanhã onde quando como porquê você`),
	Dutch: setOf(`ja nee dank bedankt hallo hoi doei oké goed leuk mooi prima nou dus
	dhr mevr maandag dinsdag woensdag donderdag vrijdag zaterdag zondag
	januari februari maart april mei juni juli augustus september oktober november december
	vandaag gisteren morgen waar wanneer hoe waarom u`),
}

// titles are abbreviations written with a full stop before a name: the
// stop does not end a sentence, and the title belongs to the name.
var titles = setOf(`mr mrs ms dr prof st mt jr sr sra srta dra mme mlle dhr mevr hr`)

// joiners are the lower-case words that may join two capitalised words
// into one name, per language ("Bank of America", "Universidad de
// Salamanca").
var joiners = map[string]map[string]bool{
	English:    setOf(`of the`),
	Spanish:    setOf(`de del la`),
	French:     setOf(`de du des la`),
	Italian:    setOf(`di del della`),
	Portuguese: setOf(`de do da dos das`),
	Dutch:      setOf(`van der den`),
	German:     setOf(`von`),
}

// word is one token of a text with its position.
type word struct {
	text       string
	start, end int
	// sentenceStart is true for the first word of a sentence, whose
	// capital says nothing about it being a name.
	sentenceStart bool
}

// words splits text into letter-digit runs (apostrophes inside a word kept,
// so "Charlotte's" stays one word) and marks the first word of each
// sentence.
func words(text string) []word {
	var out []word
	start := -1
	newSentence := true
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) ||
			((r == '\'' || r == '’' || r == '-') && start >= 0 && i+utf8.RuneLen(r) < len(text) && isLetterAt(text, i+utf8.RuneLen(r)))
		if inWord {
			if start < 0 {
				start = i
			}
			continue
		}
		afterTitle := false
		if start >= 0 {
			out = append(out, word{text: text[start:i], start: start, end: i, sentenceStart: newSentence})
			newSentence = false
			afterTitle = r == '.' && titles[strings.ToLower(text[start:i])]
			start = -1
		}
		if afterTitle {
			continue
		}
		switch r {
		case '.', '!', '?', '\n', ':', ';', '"', '“', '(', '。', '！', '？', '¿', '¡', '„', '«':
			newSentence = true
		}
	}
	if start >= 0 {
		out = append(out, word{text: text[start:], start: start, end: len(text), sentenceStart: newSentence})
	}
	return out
}

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// NameKey folds a word for the name lists: lower case, possessive dropped.
func NameKey(w string) string {
	w = strings.ToLower(w)
	for _, s := range []string{"'s", "’s"} {
		w = strings.TrimSuffix(w, s)
	}
	return w
}

// notName reports whether a capitalised word is a function word or chat
// filler of language tag rather than a possible name.
func notName(tag, w string) bool {
	k := NameKey(w)
	return notNames[English][k] || notNames[tag][k] || IsStopWord(tag, k)
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// cjk reports whether tag is a language written without capitals.
func cjk(tag string) bool { return tag == Chinese || tag == Japanese || tag == Korean }

// deDeterminers are the German words after which a capitalised word is a
// noun: articles, possessives, demonstratives, quantifiers and the
// contractions of a preposition with an article.
var deDeterminers = setOf(`der die das dem den des ein eine einem einen einer eines kein keine keinem keinen
	keiner keines mein meine meinem meinen meiner meines dein deine deinem deinen deiner deines sein seine
	seinem seinen seiner seines ihr ihre ihrem ihren ihrer ihres unser unsere unserem unseren unserer
	euer eure eurem euren eurer dieser diese diesem diesen dieses jener jene jenem jenen jeder jede jedem
	jeden jedes welcher welche welchem welchen welches alle allen aller viele vielen einige einigen
	manche manchen mehrere beide beiden im am zum zur vom beim ins ans aufs ums fürs durchs`)

// deAdjective matches the German adjectives that most often stand before a
// noun, in their inflected forms ("letzte Woche", "neuen Job").
var deAdjective = regexp.MustCompile(`^(letzt|nächst|vorig|vergangen|kommend|erst|zweit|dritt|ander|neu|alt|gut|groß|klein|ganz|schön|lang|jung|toll|best|lieb|viel|wenig|eigen|früh|spät|nett|riesig|lecker|schwer|leicht|echt|wichtig|super)(e|en|er|em|es)$`)

// deNounSuffix matches the endings of German common nouns that no given
// name or place has.
var deNounSuffix = regexp.MustCompile(`(ung|ungen|heit|heiten|keit|keiten|schaft|schaften|chen|lein|tion|tionen|tät|täten|nis|nisse|ismus|ment|tum|ling|linge)$`)

// germanName reports whether the capitalised word ws[i] of a German text
// is a name by the German rule: every noun is capitalised, so the capital
// says nothing; a word counts when known says it is a name, or, inside a
// sentence, when no article, possessive or adjective makes it a noun and
// its ending is not a common noun's.
func germanName(ws []word, i int, known map[string]bool) bool {
	w := ws[i]
	if known[NameKey(w.text)] {
		return true
	}
	if w.sentenceStart || deNounSuffix.MatchString(strings.ToLower(w.text)) {
		return false
	}
	if i > 0 {
		p := strings.ToLower(ws[i-1].text)
		if deDeterminers[p] || deNumerals[p] || deAdjective.MatchString(p) || digits(p) {
			return false
		}
	}
	return true
}

// deNumerals are the German number words after which a capitalised word
// is a noun ("seit drei Jahren").
var deNumerals = setOf(`zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig dreißig vierzig
	fünfzig hundert tausend paar`)

// digits reports whether w is a number written in digits.
func digits(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Names returns the proper names of text in language tag ("" is taken for
// English): runs of capitalised words ("Caroline", "New York",
// "Charlotte's Web"), joined by at most one of the language's joining
// words ("Bank of America", "Universidad de Salamanca"). A capitalised word
// that starts a sentence counts only when known says it is a name (known
// holds name keys, see NameKeys), because a capital there is grammar, not
// meaning. In German, where every noun is capitalised, a word inside a
// sentence also needs no article, possessive or adjective before it and no
// common noun's ending (see germanName), and a name is one word unless
// known joins the next. Chinese, Japanese and Korean have no capitals: no
// names. Each name is returned once, in order of first appearance.
func Names(tag, text string, known map[string]bool) []string {
	if cjk(tag) {
		return nil
	}
	if tag == "" {
		tag = English
	}
	ws := words(text)
	var out []string
	seen := map[string]bool{}
	isName := func(i int) bool {
		w := ws[i]
		if !capitalised(w.text) || notName(tag, w.text) || allDigits(w.text) {
			return false
		}
		if tag == German {
			return germanName(ws, i, known)
		}
		return !w.sentenceStart || known[NameKey(w.text)]
	}
	// continues reports whether ws[j], capitalised, continues a name.
	continues := func(j int) bool {
		if !capitalised(ws[j].text) || notName(tag, ws[j].text) {
			return false
		}
		return tag != German || known[NameKey(ws[j].text)]
	}
	join := joiners[tag]
	for i := 0; i < len(ws); i++ {
		title := titles[strings.ToLower(ws[i].text)] && capitalised(ws[i].text) && i+1 < len(ws) &&
			capitalised(ws[i+1].text) && !notName(tag, ws[i+1].text)
		if !title && !isName(i) {
			continue
		}
		j := i + 1
		for j < len(ws) {
			gap := text[ws[j-1].end:ws[j].start]
			if strings.TrimSpace(gap) != "" && gap != ". " && gap != "." {
				break // a comma or other punctuation ends the name
			}
			if continues(j) || title && j == i+1 {
				j++
				continue
			}
			if lw := strings.ToLower(ws[j].text); join[lw] && j+1 < len(ws) && continues(j+1) && !strings.ContainsAny(text[ws[j].end:ws[j+1].start], ",;:!?") {
				j += 2
				continue
			}
			break
		}
		name := strings.TrimRight(text[ws[i].start:ws[j-1].end], ".")
		if k := strings.ToLower(name); !seen[k] {
			seen[k] = true
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

// NameKeys returns the keys (see Names) of the words of texts in language
// tag that are evidence of a name wherever they appear: capitalised in the
// middle of a sentence, and in German also passing the German rule (see
// Names). Chinese, Japanese and Korean give none.
func NameKeys(tag string, texts ...string) map[string]bool {
	known := map[string]bool{}
	if cjk(tag) {
		return known
	}
	if tag == "" {
		tag = English
	}
	for _, t := range texts {
		ws := words(t)
		for i, w := range ws {
			if w.sentenceStart || !capitalised(w.text) || notName(tag, w.text) || allDigits(w.text) {
				continue
			}
			if tag == German && !germanName(ws, i, nil) {
				continue
			}
			known[NameKey(w.text)] = true
		}
	}
	return known
}

// Titles returns the phrases of text set in quotes ("Charlotte's Web",
// “Nothing is Impossible”, „Der Process“, « Le Petit Prince ») that are
// short enough to be titles or names rather than quoted speech: one to
// eight words.
func Titles(text string) []string {
	var out []string
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"„", "“"}, {"«", "»"}} {
		rest := text
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(q[0]):]
			j := strings.Index(rest, q[1])
			if j < 0 {
				break
			}
			t := strings.TrimSpace(rest[:j])
			rest = rest[j+len(q[1]):]
			if n := len(strings.Fields(t)); n >= 1 && n <= 8 && len(t) <= 80 {
				out = append(out, strings.Trim(t, ".,!?"))
			}
		}
	}
	return out
}

// Words returns the words of text (letter and digit runs, apostrophes
// inside a word kept), for callers that fold them with NameKey.
func Words(text string) []string {
	ws := words(text)
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

package lang

import (
	"unicode"
	"unicode/utf8"
)

// The languages Detect tells apart, as BCP 47 base tags.
const (
	English    = "en"
	German     = "de"
	Spanish    = "es"
	French     = "fr"
	Italian    = "it"
	Portuguese = "pt"
	Dutch      = "nl"
	Polish     = "pl"
	Turkish    = "tr"
	Swedish    = "sv"
	Chinese    = "zh"
	Japanese   = "ja"
	Korean     = "ko"
	Russian    = "ru"
	Ukrainian  = "uk"
	Arabic     = "ar"
	Persian    = "fa"
	Greek      = "el"
	Hebrew     = "he"
	Hindi      = "hi"
	Thai       = "th"
)

// latin are the Latin-script languages of the profiles, in the order of
// the bits of profile's masks.
var latin = [...]string{English, German, Spanish, French, Italian, Portuguese, Dutch, Polish, Turkish, Swedish}

// Indexes into latin, for the letters that count for a language.
const (
	iEN = iota
	iDE
	iES
	iFR
	iIT
	iPT
	iNL
	iPL
	iTR
	iSV
)

// profile maps a lower-case word to the set of Latin-script languages (bit
// i for latin[i]) it is a frequent word of: articles, pronouns,
// prepositions, auxiliaries, question words and chat words. A word shared
// by several languages counts for each.
var profile = func() map[string]uint16 {
	words := [...]string{
		// en
		`the and is are was were you i i'm my it that this with have has what when where how did do does not
		of to for on just me we they be been would will your yesterday about from but so can don't it's
		thanks sounds great good really think going went got very there their them like a an as in at or if
		why who which whom whose he she her his him had get after by up out all some any one more also than
		then its our us could should might much many been being into over did what's i've i'll you're`,
		// de
		`der die das und ist ich nicht mit ein eine einen einem zu den dem des auf für auch es sich war waren
		wann wo wie was wer mein meine meinem meinen dein im am gestern heute hast habe hat bin bist sind
		gut danke klingt noch aber oder schon mal doch ja nein ganz sehr wir du sie letzte letzten woche
		nach bei vom zum zur über können kann gehen geht wirklich toll super hallo`,
		// es
		`el la los las y es que de en un una por con para no qué cómo cuándo dónde quién cuál muy pero mi
		me te lo se del al está estoy estás fue ayer hoy tal gracias hola sí también pasado pasada hace
		semana más eso esto yo tú su sus nos fui hoy bien bueno buena vale genial`,
		// fr
		`le la les et est je tu il elle nous vous un une des du de en que qui pas ne pour avec sur dans ce
		c'est mais très merci bonjour salut oui non quand où comment quoi j'ai suis était hier aujourd'hui
		semaine au aux mon ma mes ton ta son sa ça cette été avait bien super génial`,
		// it
		`il lo la gli le e è che di un una per con non sono ho hai ha mi ti ci della del nel nella alla anche
		ma molto grazie ciao sì quando dove come cosa chi ieri oggi settimana scorsa scorso sei era questo
		questa bene bello bella sono stato stata`,
		// pt
		`o a os as e é que de do da dos das em no na um uma para com não por mais muito obrigado obrigada
		olá oi sim quando onde como quem ontem hoje você eu meu minha estou foi semana passada passado
		isso está também tudo bem legal ótimo`,
		// nl
		`de het een en is ik je jij niet van op te dat die met voor zijn was wat wanneer waar hoe wie ook
		maar heb heeft mijn we wij er nog al dank bedankt gisteren vandaag week vorige naar bij om goed ja
		nee zo dit hebben leuk fijn mooi`,
		// pl (not "a", "do", "on", "to": English has them too)
		`i w na z się nie że jest jak co ale po tak mi mnie już jestem był była było są być ten ta te tym czy
		dla od przez mój moja moje twój jego jej ich nas wczoraj dzisiaj jutro dziękuję cześć bardzo tylko
		może kiedy gdzie dlaczego który która mam masz ma mamy bo też jeszcze tydzień byłem byłam`,
		// tr (not "en", "de", "o": other languages' frequent words)
		`ve bir bu da için ile çok ben sen biz siz onlar var yok değil mı mü ama gibi daha kadar sonra
		şimdi dün bugün yarın evet hayır teşekkürler teşekkür merhaba nasıl neden nerede zaman her şey benim
		senin onun bana sana olarak olan oldu ise hem ki geçen hafta gittim çünkü`,
		// sv (not "men", "man", "den", "var": English and others have them)
		`och i att det som en på är av för med till har inte om ett han jag sig från vi så kan när
		säger hon nu ska skulle också efter vad hur då igår idag imorgon tack hej ja nej mycket min mitt
		mina din ditt hade blev vara veckan förra`,
	}
	m := map[string]uint16{}
	for i, ws := range words {
		for _, w := range splitSpace(ws) {
			m[w] |= 1 << i
		}
	}
	return m
}()

func splitSpace(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' || s[i] == '\t' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

// Detect returns the BCP 47 base tag of the language text is written in,
// or "" when it cannot tell: a text of no letters, a word or two that no
// language claims, a tie. It needs no model: scripts and frequent words.
//
// Text mostly in a CJK script is "ja" when it has kana, "ko" when Hangul
// outweighs Han, "zh" otherwise. Text mostly in another script with one
// main language is that language: Cyrillic "ru" ("uk" with і, ї, є or ґ
// and none of ы, э, ъ), Arabic "ar" ("fa" with پ, چ, ژ or گ), Greek "el",
// Hebrew "he", Devanagari "hi", Thai "th". Latin-script text is one of en,
// de, es, fr, it, pt, nl, pl, tr, sv: each of its words that is a frequent
// function word of a language scores a point for it, as do letters only
// one or a few of them use (ß, ñ, ¿, ç, ã, ł, ş, å…); the best score wins
// when it is at least 2 and beats the runner-up. Other scripts are "".
func Detect(text string) string {
	var d detector
	d.scan(text)
	if tag := d.script(); tag != "" {
		return tag
	}
	return d.latinTag()
}

// detector counts what Detect weighs, in one pass over the text.
type detector struct {
	score              [len(latin)]int
	han, kana, hangul  int
	other              int // letters of no CJK script
	scripts            [numScripts]int
	ukrainian, russian int // letters only Ukrainian, only Russian, uses
	persian            int // letters Persian uses and Arabic does not

	buf  [24]byte
	n    int  // bytes of the current word in buf
	long bool // the current word did not fit in buf
}

// The scripts other than Latin and CJK that name one main language.
const (
	sCyrillic = iota
	sArabic
	sGreek
	sHebrew
	sDevanagari
	sThai
	numScripts
)

var scriptTags = [numScripts]string{Russian, Arabic, Greek, Hebrew, Hindi, Thai}

// flush scores the word in buf and starts a new one.
func (d *detector) flush() {
	if d.n > 0 && !d.long {
		if mask := profile[string(d.buf[:d.n])]; mask != 0 {
			for i := range latin {
				if mask&(1<<i) != 0 {
					d.score[i]++
				}
			}
		}
	}
	d.n, d.long = 0, false
}

// push adds a lower-case letter to the current word.
func (d *detector) push(r rune) {
	if d.n+utf8.RuneLen(r) <= len(d.buf) {
		d.n += utf8.EncodeRune(d.buf[d.n:], r)
	} else {
		d.long = true
	}
}

func (d *detector) scan(text string) {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', c == '\'':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				d.flush()
				continue
			}
			d.other++
			if d.n < len(d.buf) {
				d.buf[d.n] = c
				d.n++
			} else {
				d.long = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		d.rune(r)
	}
	d.flush()
}

// rune weighs one non-ASCII character.
func (d *detector) rune(r rune) {
	d.letter(r)
	switch {
	case r == '’':
		d.other++
		if d.n < len(d.buf) {
			d.buf[d.n] = '\''
			d.n++
		}
		return
	case r < 0x0370 && unicode.IsLetter(r): // Latin
		d.other++
		d.push(unicode.ToLower(r))
		return
	case 0x0400 <= r && r <= 0x052F:
		d.scripts[sCyrillic]++
	case 0x0600 <= r && r <= 0x06FF, 0x0750 <= r && r <= 0x077F, 0xFB50 <= r && r <= 0xFEFF:
		d.scripts[sArabic]++
	case 0x0370 <= r && r <= 0x03FF, 0x1F00 <= r && r <= 0x1FFF:
		d.scripts[sGreek]++
	case 0x0590 <= r && r <= 0x05FF:
		d.scripts[sHebrew]++
	case 0x0900 <= r && r <= 0x097F:
		d.scripts[sDevanagari]++
	case 0x0E00 <= r && r <= 0x0E7F:
		d.scripts[sThai]++
	case 0x4E00 <= r && r <= 0x9FFF: // the common CJK ideographs, tested first for speed
		d.han++
	case 0x3040 <= r && r <= 0x30FF && r != 0x30FB: // kana, but not the middle dot
		d.kana++
	case 0xAC00 <= r && r <= 0xD7A3:
		d.hangul++
	case 0x3000 <= r && r <= 0x303F, 0xFF00 <= r && r <= 0xFF0F: // CJK and full-width punctuation
	case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
		d.kana++
	case unicode.Is(unicode.Hangul, r):
		d.hangul++
	case unicode.Is(unicode.Han, r):
		d.han++
	case unicode.IsLetter(r):
		d.other++
	}
	d.flush()
}

// letter scores the letters only one or a few languages use.
func (d *detector) letter(r rune) {
	switch r {
	case 'ß':
		d.score[iDE] += 2
	case 'ä', 'Ä':
		d.score[iDE]++
		d.score[iSV]++
	case 'ö', 'Ö':
		d.score[iDE]++
		d.score[iSV]++
		d.score[iTR]++
	case 'ü', 'Ü':
		d.score[iDE]++
		d.score[iTR]++
	case 'å', 'Å':
		d.score[iSV] += 2
	case 'ñ', 'Ñ', '¿', '¡':
		d.score[iES] += 2
	case 'ç', 'Ç':
		d.score[iFR]++
		d.score[iPT]++
		d.score[iTR]++
	case 'ã', 'õ', 'Ã', 'Õ':
		d.score[iPT] += 2
	case 'è', 'ê', 'â', 'î', 'ô', 'û', 'ë', 'ï', 'œ':
		d.score[iFR]++
	case 'ì', 'ò':
		d.score[iIT]++
	case 'ą', 'ę', 'ł', 'ś', 'ź', 'ż', 'ć', 'ń', 'Ą', 'Ę', 'Ł', 'Ś', 'Ź', 'Ż', 'Ć', 'Ń':
		d.score[iPL] += 2
	case 'ı', 'ş', 'ğ', 'İ', 'Ş', 'Ğ':
		d.score[iTR] += 2
	case 'і', 'ї', 'є', 'ґ', 'І', 'Ї', 'Є', 'Ґ':
		d.ukrainian++
	case 'ы', 'э', 'ъ', 'Ы', 'Э', 'Ъ':
		d.russian++
	case 'پ', 'چ', 'ژ', 'گ':
		d.persian++
	}
}

// script returns the language of a text mostly in a script other than
// Latin, or "".
func (d *detector) script() string {
	// A CJK character carries about as much as a short word: weigh them up.
	if cjk := 3 * (d.han + d.kana + d.hangul); cjk > 0 && cjk > d.other+sum(d.scripts[:]) {
		switch {
		case d.kana > 0:
			return Japanese
		case d.hangul > d.han:
			return Korean
		}
		return Chinese
	}
	best := 0
	for i, n := range d.scripts {
		if n > d.scripts[best] {
			best = i
		}
	}
	if n := d.scripts[best]; n == 0 || n <= d.other {
		return ""
	}
	switch {
	case best == sCyrillic && d.ukrainian > 0 && d.russian == 0:
		return Ukrainian
	case best == sArabic && d.persian > 0:
		return Persian
	}
	return scriptTags[best]
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// latinTag returns the Latin-script language with the best score, or ""
// when no score is at least 2 or two tie for best.
func (d *detector) latinTag() string {
	best, second := -1, 0
	for i, s := range d.score {
		switch {
		case best < 0 || s > d.score[best]:
			if best >= 0 {
				second = d.score[best]
			}
			best = i
		case s > second:
			second = s
		}
	}
	if d.score[best] < 2 || d.score[best] == second {
		return ""
	}
	return latin[best]
}

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
	Chinese    = "zh"
	Japanese   = "ja"
	Korean     = "ko"
)

// latin are the Latin-script languages of the profiles, in the order of
// the bits of profile's masks.
var latin = [...]string{English, German, Spanish, French, Italian, Portuguese, Dutch}

// profile maps a lower-case word to the set of Latin-script languages (bit
// i for latin[i]) it is a frequent word of: articles, pronouns,
// prepositions, auxiliaries, question words and chat words. A word shared
// by several languages counts for each.
var profile = func() map[string]uint8 {
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
	}
	m := map[string]uint8{}
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
// language claims, a tie. Text mostly in a CJK script is "ja" when it has
// kana, "ko" when Hangul outweighs Han, "zh" otherwise. Latin-script text
// is one of en, de, es, fr, it, pt, nl: each of its words that is a
// frequent function word of a language scores a point for it, as do
// letters only one or two of them use (ß, ñ, ¿, ç, ã…); the best score wins
// when it is at least 2 and beats the runner-up. Other scripts are "".
func Detect(text string) string {
	var score [len(latin)]int
	var han, kana, hangul, other int
	var buf [24]byte
	n := 0        // bytes of the current word in buf
	long := false // the current word did not fit in buf
	flush := func() {
		if n > 0 && !long {
			if mask := profile[string(buf[:n])]; mask != 0 {
				for i := range latin {
					if mask&(1<<i) != 0 {
						score[i]++
					}
				}
			}
		}
		n, long = 0, false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', c == '\'':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				flush()
				continue
			}
			other++
			if n < len(buf) {
				buf[n] = c
				n++
			} else {
				long = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch r {
		case 'ß':
			score[1] += 2
		case 'ä', 'ö', 'Ä', 'Ö':
			score[1]++
		case 'ü', 'Ü':
			score[1]++
		case 'ñ', 'Ñ', '¿', '¡':
			score[2] += 2
		case 'ç', 'Ç':
			score[3]++
			score[5]++
		case 'ã', 'õ', 'Ã', 'Õ':
			score[5] += 2
		case 'è', 'ê', 'â', 'î', 'ô', 'û', 'ë', 'ï', 'œ':
			score[3]++
		case 'ì', 'ò':
			score[4]++
		case '’':
			r = '\''
		}
		switch {
		case r < 0x1100 && unicode.IsLetter(r), r == '\'':
			other++
			if r == '\'' {
				if n < len(buf) {
					buf[n] = '\''
					n++
				}
				continue
			}
			r = unicode.ToLower(r)
			if n+utf8.RuneLen(r) <= len(buf) {
				n += utf8.EncodeRune(buf[n:], r)
			} else {
				long = true
			}
			continue
		case 0x4E00 <= r && r <= 0x9FFF: // the common CJK ideographs, tested first for speed
			han++
		case 0x3040 <= r && r <= 0x30FF && r != 0x30FB: // kana, but not the middle dot
			kana++
		case 0xAC00 <= r && r <= 0xD7A3:
			hangul++
		case 0x3000 <= r && r <= 0x303F, 0xFF00 <= r && r <= 0xFF0F: // CJK and full-width punctuation
		case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.IsLetter(r):
			other++
		}
		flush()
	}
	flush()
	// A CJK character carries about as much as a short word: weigh them up.
	if cjk := 3 * (han + kana + hangul); cjk > 0 && cjk > other {
		switch {
		case kana > 0:
			return Japanese
		case hangul > han:
			return Korean
		}
		return Chinese
	}
	best, second := -1, 0
	for i, s := range score {
		switch {
		case best < 0 || s > score[best]:
			if best >= 0 {
				second = score[best]
			}
			best = i
		case s > second:
			second = s
		}
	}
	if score[best] < 2 || score[best] == second {
		return ""
	}
	return latin[best]
}

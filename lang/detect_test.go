package lang_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/lang"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"I went to the park with my dog yesterday.", "en"},
		{"Thanks, that sounds great!", "en"},
		{"When did Caroline go to the support group?", "en"},
		{"Would Caroline pursue writing as a career option?", "en"},
		{"Why did Jolene decide to get a snake as a pet?", "en"},
		{"What items did John mention having as a child?", "en"},
		{"Danke, das klingt gut!", "de"},
		{"Wann war ich letzte Woche mit meinem Hund im Park?", "de"},
		{"Gestern war ich mit Anna in München.", "de"},
		{"Straße", "de"},
		{"¿Qué tal?", "es"},
		{"Ayer fui al parque con mi perro.", "es"},
		{"Gracias, me parece muy bien.", "es"},
		{"Merci, c'est très gentil !", "fr"},
		{"Quand est-ce que je suis allé au parc avec mon chien ?", "fr"},
		{"Ciao, come stai? Ieri sono andato al mare.", "it"},
		{"Grazie mille, è perfetto!", "it"},
		{"Obrigado, você é muito gentil!", "pt"},
		{"Ontem eu fui ao parque com o meu cachorro.", "pt"},
		{"Gisteren ben ik met mijn hond naar het park geweest.", "nl"},
		{"Dank je wel, dat is leuk!", "nl"},
		{"我昨天去了东京。", "zh"},
		{"昨日東京に行きました。", "ja"},
		{"어제 서울에 갔어요.", "ko"},
		{"Wczoraj byłem z psem w parku.", "pl"},
		{"Dziękuję, to bardzo miłe!", "pl"},
		{"Cześć", "pl"},
		{"Dün köpeğimle parka gittim.", "tr"},
		{"Teşekkürler, çok güzel!", "tr"},
		{"Igår gick jag till parken med min hund.", "sv"},
		{"Tack, det är mycket bra!", "sv"},
		{"Вчера я ходил в парк с собакой.", "ru"},
		{"Спасибо", "ru"},
		{"Вчора я ходила до парку з собакою, і було чудово.", "uk"},
		{"ذهبت أمس إلى الحديقة مع كلبي.", "ar"},
		{"شکر", "ar"},
		{"دیروز با سگم به پارک رفتم.", "fa"},
		{"Χθες πήγα στο πάρκο με τον σκύλο μου.", "el"},
		{"אתמול הלכתי לפארק עם הכלב שלי.", "he"},
		{"कल मैं अपने कुत्ते के साथ पार्क गया।", "hi"},
		{"เมื่อวานฉันไปสวนสาธารณะกับสุนัข", "th"},
		// Mixed: the language most of the text is in wins; a name or a
		// word of another script does not move it.
		{"Ich war gestern mit Anna im Café Starbucks, it was great.", "de"},
		{"I met Владимир in Berlin yesterday and it was fun.", "en"},
		{"Мы вчера были в IKEA и купили стол.", "ru"},
		{"我昨天在 Starbucks 见了 Anna。", "zh"},
		{"Ayer fui a Berlin con my friend y fue genial.", "es"},
		{"", ""},
		{"ok", ""},
		{"Anna", ""},
		{"Tokyo Tower 东京", ""},
		{"12:30 → 14:00", ""},
	}
	for _, tt := range tests {
		if got := lang.Detect(tt.text); got != tt.want {
			t.Errorf("Detect(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func BenchmarkDetect(b *testing.B) {
	for _, bb := range []struct{ name, text string }{
		{"en", "I went to the support group yesterday and it was great, everyone was so welcoming. We talked about adoption agencies and what it takes to become a parent; I can't wait to go back next week!"},
		{"de", "Gestern war ich mit Anna in München, wir haben im Englischen Garten gesessen und über die letzte Woche geredet. Nächste Woche fahren wir vielleicht an den Tegernsee, wenn das Wetter gut ist."},
		{"zh", strings.Repeat("我昨天和朋友去了公园，", 7)},
		{"ru", "Вчера я ходил с Анной в парк, мы долго сидели на скамейке и говорили о прошлой неделе. На следующей неделе мы, может быть, поедем на озеро."},
		{"short", "Thanks!"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.text)))
			for i := 0; i < b.N; i++ {
				lang.Detect(bb.text)
			}
		})
	}
}

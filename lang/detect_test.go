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
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.text)))
			for i := 0; i < b.N; i++ {
				lang.Detect(bb.text)
			}
		})
	}
}

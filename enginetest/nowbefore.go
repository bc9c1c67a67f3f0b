package enginetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// nowBefore is a conversation of Bob's over three sessions a month apart
// in one language: his job changes in the second, his city in the third;
// first are questions whose first hit must hold the current value, top3
// questions about the past whose first three hits must hold the old one
// (a want of "a|b" is held by a hit holding a or b: a job's employer or
// title).
type nowBefore struct {
	lang     string
	sessions [3][]string
	first    []changeAsk
	top3     []changeAsk
}

var nowBeforeCases = []nowBefore{
	{lang: "de",
		sessions: [3][]string{
			{"Hallo!", "Ich arbeite als Lehrer bei Montessori.", "Ich wohne in Berlin."},
			{"Ich habe als Lehrer aufgehört und arbeite jetzt als Softwareentwickler bei Siemens.", "Die Kollegen sind nett."},
			{"Ich bin nach München gezogen.", "Ich wohne jetzt in Schwabing, einem Stadtteil von München."},
		},
		first: []changeAsk{{"Wo arbeitet Bob?", "Siemens|Softwareentwickler"}, {"Wo wohnt Bob?", "Schwabing"}},
		top3:  []changeAsk{{"Wo wohnte Bob früher?", "Berlin"}, {"Wo hat Bob vorher gearbeitet?", "Montessori|Lehrer"}},
	},
	{lang: "es",
		sessions: [3][]string{
			{"¡Hola!", "Trabajo como profesor en Cervantes.", "Vivo en Sevilla."},
			{"Dejé de ser profesor y ahora trabajo como ingeniero de software en Telefónica.", "Mis compañeros son simpáticos."},
			{"Me mudé a Madrid.", "Ahora vivo en Chamberí, un barrio de Madrid."},
		},
		first: []changeAsk{{"¿Dónde trabaja Bob?", "Telefónica|ingeniero"}, {"¿Dónde vive Bob?", "Chamberí"}},
		top3:  []changeAsk{{"¿Dónde vivía Bob antes?", "Sevilla"}},
	},
	{lang: "fr",
		sessions: [3][]string{
			{"Bonjour !", "Je travaille comme professeur chez Hachette.", "J'habite à Lyon."},
			{"J'ai arrêté d'enseigner et je travaille maintenant comme ingénieur chez Airbus.", "Mes collègues sont sympas."},
			{"J'ai déménagé à Toulouse.", "J'habite maintenant à Toulouse, près du centre."},
		},
		first: []changeAsk{{"Où travaille Bob ?", "Airbus|ingénieur"}, {"Où habite Bob ?", "Toulouse"}},
		top3:  []changeAsk{{"Où habitait Bob avant ?", "Lyon"}},
	},
	{lang: "en",
		sessions: [3][]string{
			{"Hi!", "I work as a teacher at Lincoln High.", "I live in Berlin."},
			{"I quit teaching and started a new job as a software engineer at Siemens.", "My colleagues are nice."},
			{"I moved to Munich.", "I live in Schwabing now, a district of Munich."},
		},
		first: []changeAsk{{"Where does Bob work?", "Siemens|software engineer"}, {"Where does Bob live?", "Schwabing"}},
		top3:  []changeAsk{{"Where did Bob live before?", "Berlin"}, {"Where did Bob work before?", "Lincoln High|teacher"}},
	},
}

// testNowAndBefore: over three sessions in German, Spanish, French and
// English, a question about the present finds the current job and home
// first (the new job's fact or turn, not another attribute's), and one
// about the past finds the old home among the first three, through the
// library and over HTTP.
func testNowAndBefore(t *testing.T, open Open) {
	for _, tc := range nowBeforeCases {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			for i, session := range tc.sessions {
				at := t0.Add(time.Duration(i*30*24) * time.Hour)
				for j, text := range session {
					sayAs(t, e, fmt.Sprintf("s%d", i+1), at.Add(time.Duration(j)*time.Minute), "Bob", text)
				}
			}
			client, _ := overHTTP(t, e)
			for _, via := range []struct {
				name string
				r    reader
			}{{"library", e}, {"http", client}} {
				for _, q := range tc.first {
					if hs := ask(t, via.r, q.question); len(hs) == 0 || !holdsOne(hs[0].Memory.Value, q.want) {
						t.Errorf("%s: %q finds %q first, want %q", via.name, q.question, hitValues(hs), q.want)
					}
				}
				for _, q := range tc.top3 {
					hs := ask(t, via.r, q.question)
					if !slices.ContainsFunc(hs[:min(3, len(hs))], func(h engram.Hit) bool { return holdsOne(h.Memory.Value, q.want) }) {
						t.Errorf("%s: %q finds %q, want %q in the first three", via.name, q.question, hitValues(hs), q.want)
					}
				}
			}
		})
	}
}

// ask searches Alice's memories for question, five hits.
func ask(t *testing.T, r reader, question string) []engram.Hit {
	t.Helper()
	res, err := r.Search(ctx, engram.SearchRequest{Scope: scA, Query: question, K: 5})
	if err != nil {
		t.Fatalf("search %q: %v", question, err)
	}
	return res.Hits
}

// holdsOne reports whether s holds one of the |-separated alternatives.
func holdsOne(s, alts string) bool {
	return slices.ContainsFunc(strings.Split(alts, "|"), func(a string) bool { return strings.Contains(s, a) })
}

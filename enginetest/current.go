package enginetest

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// dated is one turn of a conversation: the session it is filed in (as a
// chat client files its conversations) and the days after t0 it was said.
type dated struct {
	session string
	day     int
	text    string
}

// asked is a question and the texts that must rank in order: first above
// then (then "" when the first must only be the first hit).
type asked struct {
	question, first, then string
}

// sayAll stores each turn as speaker said it, in its session of nsA's
// user, at t0 plus its day (a minute apart within a day).
func sayAll(t *testing.T, e *engine.Engine, speaker string, turns []dated) {
	t.Helper()
	for i, d := range turns {
		at := t0.Add(time.Duration(d.day)*24*time.Hour + time.Duration(i)*time.Minute)
		ns := nsA
		ns.Session = d.session
		if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
			Episodes: []engram.EpisodeInput{{Role: "user", Speaker: speaker, Content: d.text, OccurredAt: &at}}}); err != nil {
			t.Fatalf("add %q: %v", d.text, err)
		}
	}
}

// checkOrder searches each question through the library and over HTTP,
// with now after the conversation (and as of asOf when it is not nil), and
// checks that a hit holding first ranks above every hit holding then (the
// first hit, when then is "").
func checkOrder(t *testing.T, e *engine.Engine, now time.Time, asOf *time.Time, qs []asked) {
	t.Helper()
	client, _ := overHTTP(t, e)
	for _, via := range []struct {
		name string
		r    reader
	}{{"library", e}, {"http", client}} {
		for _, q := range qs {
			res, err := via.r.Search(ctx, engram.SearchRequest{Scope: scA, Query: q.question, Now: &now, K: 10, Explain: true,
				Filter: engram.MemoryFilter{ValidAt: asOf}})
			if err != nil {
				t.Fatalf("%s: search %q: %v", via.name, q.question, err)
			}
			first, then := place(res.Hits, q.first), place(res.Hits, q.then)
			switch {
			case q.then == "" && first != 0:
				t.Errorf("%s: %q ranks %q at %d, want first; hits %q", via.name, q.question, q.first, first+1, hitValues(res.Hits))
			case q.then != "" && (first < 0 || then >= 0 && then < first):
				t.Errorf("%s: %q ranks %q at %d, %q at %d; want the first above; hits %q", via.name, q.question, q.first, first+1, q.then, then+1, hitValues(res.Hits))
			}
		}
	}
}

// place returns the index of the first hit whose text holds s (and not
// the other states named with it), or -1.
func place(hs []engram.Hit, s string) int {
	if s == "" {
		return -1
	}
	for i, h := range hs {
		if strings.Contains(strings.ToLower(h.Memory.Value), strings.ToLower(s)) {
			return i
		}
	}
	return -1
}

// testCurrentFirst: a person's residence and work (and, for the newcomer,
// drink) change over three sessions weeks apart, each filed in a session
// of its own, with turns of other languages among them (the newcomer of
// issue 44 says one in German and one in Chinese). A question about the
// present, with "now" or without a time, ranks the latest state first; a
// question about the past ranks the earlier state above the later one.
// Through the library and over HTTP, in English, German, Spanish, French
// and Chinese (whose schedule is said twice in the same form).
func testCurrentFirst(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, speaker string
		turns         []dated
		qs            []asked
	}{
		{"en", "Bob", []dated{
			{"s1", 0, "Hi, I'm Bob. I live in Berlin and I work as a teacher at the Humboldt school."},
			{"s1", 0, "My favourite drink is black coffee, no sugar."},
			{"s1", 0, "I cycle along the river to school when it is sunny."},
			{"s2", 60, "I quit teaching and started a new job as a software engineer at Siemens."},
			{"s2", 60, "Ich bin letzten Monat nach München gezogen."},
			{"s2", 60, "I miss my old colleagues at the school."},
			{"s3", 120, "I stopped drinking coffee last week; now I only drink green tea."},
			{"s3", 120, "我现在每天早上喝绿茶。"},
			{"s3", 120, "At Siemens I work on the rail signalling team."},
		}, []asked{
			{"Where does Bob live now?", "München", ""},
			{"Where does Bob work?", "Siemens", ""},
			{"What does Bob drink?", "green tea", ""},
			{"Where did Bob live before?", "Berlin", "München"},
		}},
		{"de", "Klaus", []dated{
			{"s1", 0, "Ich wohne in Hamburg und arbeite bei Airbus."},
			{"s1", 0, "Am Wochenende segle ich auf der Alster."},
			{"s2", 45, "Ich bin nach Köln gezogen."},
			{"s3", 90, "Ich arbeite jetzt bei Ford."},
			{"s3", 90, "Die Kantine bei Ford ist erstaunlich gut."},
		}, []asked{
			{"Wo wohnt Klaus jetzt?", "Köln", ""},
			{"Wo arbeitet Klaus?", "Ford", "Airbus"},
			{"Wo hat Klaus früher gewohnt?", "Hamburg", "Köln"},
		}},
		{"es", "Carmen", []dated{
			{"s1", 0, "Vivo en Sevilla y trabajo en Telefónica."},
			{"s1", 0, "Los domingos paseo por el río con mi perro."},
			{"s2", 45, "Me mudé a Valencia."},
			{"s3", 90, "Ahora trabajo en Iberdrola."},
		}, []asked{
			{"¿Dónde vive Carmen ahora?", "Valencia", ""},
			{"¿Dónde trabaja Carmen?", "Iberdrola", ""},
			{"¿Dónde vivía Carmen antes?", "Sevilla", "Valencia"},
		}},
		{"fr", "Julie", []dated{
			{"s1", 0, "J'habite à Lyon et je travaille chez Renault."},
			{"s1", 0, "Le dimanche, je fais du vélo le long du Rhône."},
			{"s2", 45, "J'ai déménagé à Bordeaux."},
			{"s3", 90, "Je travaille maintenant chez Airbus."},
		}, []asked{
			{"Où habite Julie maintenant ?", "Bordeaux", ""},
			{"Où travaille Julie ?", "Airbus", ""},
			{"Où Julie habitait-elle avant ?", "Lyon", "Bordeaux"},
		}},
		{"zh", "Wei", []dated{
			{"s1", 0, "我每周二晚上在音乐学校上钢琴课。"},
			{"s1", 0, "周末我常去公园跑步。"},
			{"s2", 45, "最近工作很忙，经常加班。"},
			{"s3", 90, "我每周四晚上在音乐学校上钢琴课。"},
		}, []asked{
			{"Wei的钢琴课是星期几？", "每周四", "每周二"},
			{"Wei以前星期几上钢琴课？", "每周二", "每周四"},
		}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			sayAll(t, e, tc.speaker, tc.turns)
			checkOrder(t, e, t0.AddDate(0, 5, 0), nil, tc.qs)
		})
	}
}

// testCurrentFirstChanged: counts and weekly days that change over
// sessions, and Chinese turns that state a workplace and a drink, rank
// their latest state first for a question about the present, and the
// earlier state first for one about the past; through the library and
// over HTTP, in English, German, Spanish and Chinese.
func testCurrentFirstChanged(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, speaker string
		turns         []dated
		qs            []asked
	}{
		{"en", "Nadia", []dated{
			{"s1", 0, "I have one cat, a tabby called Miso."},
			{"s1", 0, "I go climbing on Mondays after work."},
			{"s2", 40, "My neighbour gave us a kitten, so now I have two cats."},
			{"s2", 40, "I moved my climbing to Wednesdays because the gym is quieter then."},
			{"s3", 80, "The cats sleep on the sofa all afternoon."},
		}, []asked{
			{"How many cats does Nadia have?", "two", "one cat"},
			{"Which day does Nadia go climbing?", "Wednesdays", "Mondays"},
			{"How many cats did Nadia have at first?", "one cat", "two cats"},
		}},
		{"de", "Jonas", []dated{
			{"s1", 0, "Ich habe zwei Hunde, beide sind alt."},
			{"s2", 50, "Meine Tochter wollte einen Welpen, jetzt habe ich drei Hunde."},
			{"s3", 90, "Der Welpe kaut an allen Schuhen."},
		}, []asked{
			{"Wie viele Hunde hat Jonas?", "drei", "zwei Hunde"},
		}},
		{"es", "Lucía", []dated{
			{"s1", 0, "Mi clase de yoga es los lunes por la mañana."},
			{"s2", 50, "Mi clase de yoga es ahora los viernes, cambiaron el horario del centro."},
			{"s3", 90, "El centro de yoga tiene una sala nueva."},
		}, []asked{
			{"¿Qué día es la clase de yoga de Lucía?", "viernes", "lunes"},
		}},
		{"zh", "Li", []dated{
			{"s1", 0, "我在百度工作，负责搜索广告。"},
			{"s1", 0, "我每天晚上喝啤酒，放松一下。"},
			{"s2", 50, "我现在在阿里巴巴工作，做云计算。"},
			{"s3", 90, "我不再喝啤酒了，改喝红茶。"},
		}, []asked{
			{"Li在哪里工作？", "阿里巴巴", "百度"},
			{"Li喝什么？", "红茶", "每天晚上喝啤酒"},
			{"Li以前在哪里工作？", "百度", "阿里巴巴"},
		}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			sayAll(t, e, tc.speaker, tc.turns)
			checkOrder(t, e, t0.AddDate(0, 5, 0), nil, tc.qs)
		})
	}
}

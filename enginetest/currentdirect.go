package enginetest

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testRecurringNewerFirst: two memories of the same form about a
// recurring meeting at different times, added directly (no former) with
// their valid_from years apart, the newer added first: a question about
// the present ranks the newer first, one about the past the older.
// Through the library and over HTTP, in English, German, Spanish, French
// and Chinese.
func testRecurringNewerFirst(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, older, newer, oldAt, newAt string
		qs                               [2]string // about the present, about the past
	}{
		{"en", "The weekly planning meeting with the design team is on Mondays at 10:00.",
			"The weekly planning meeting with the design team is on Thursdays at 15:00.", "Mondays", "Thursdays",
			[2]string{"When is the weekly planning meeting?", "When was the weekly planning meeting before?"}},
		{"de", "Das wöchentliche Planungstreffen mit dem Designteam ist montags um 10 Uhr.",
			"Das wöchentliche Planungstreffen mit dem Designteam ist donnerstags um 15 Uhr.", "montags", "donnerstags",
			[2]string{"Wann ist das wöchentliche Planungstreffen?", "Wann war das Planungstreffen früher?"}},
		{"es", "La reunión semanal de planificación con el equipo de diseño es los lunes a las 10.",
			"La reunión semanal de planificación con el equipo de diseño es los jueves a las 15.", "lunes", "jueves",
			[2]string{"¿Cuándo es la reunión semanal de planificación?", "¿Cuándo era antes la reunión de planificación?"}},
		{"fr", "La réunion hebdomadaire de planification avec l'équipe design a lieu le lundi à 10 heures.",
			"La réunion hebdomadaire de planification avec l'équipe design a lieu le jeudi à 15 heures.", "lundi", "jeudi",
			[2]string{"Quand a lieu la réunion hebdomadaire de planification ?", "Quand avait lieu la réunion de planification avant ?"}},
		{"zh", "设计团队的每周计划会议在星期一举行。", "设计团队的每周计划会议在星期四举行。", "星期一", "星期四",
			[2]string{"每周计划会议在星期几？", "每周计划会议以前在星期几？"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			then, later := t0.AddDate(-3, 0, 0), t0.AddDate(-1, 0, 0)
			for _, m := range []engram.Memory{
				{Kind: engram.KindSemantic, Value: tc.newer, ValidFrom: &later},
				{Kind: engram.KindSemantic, Value: tc.older, ValidFrom: &then},
			} {
				if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{m}}); err != nil {
					t.Fatal(err)
				}
			}
			checkOrder(t, e, t0, nil, []asked{{tc.qs[0], tc.newAt, tc.oldAt}, {tc.qs[1], tc.oldAt, tc.newAt}})
		})
	}
}

// testAsOfResidenceFirst: a person states where she lives, where she
// works and what she has in one session; a month later she moves. An
// as-of search from before the move about where she lived ranks the
// residence valid then first, above her other facts and turns; as of
// after the move, the new residence. Through the library and over HTTP,
// in English, German, Spanish, French and Chinese.
func testAsOfResidenceFirst(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang               string
		turns              [4]string // residence, work, car, the move
		question, old, cur string
	}{
		{"en", [4]string{"I live in Berlin.", "I work at Siemens.", "I have two cars.", "I moved to Munich."},
			"Where did Alice live?", "Berlin", "Munich"},
		{"de", [4]string{"Ich wohne in Berlin.", "Ich arbeite bei Siemens.", "Ich habe zwei Autos.", "Ich bin nach München gezogen."},
			"Wo wohnte Alice?", "Berlin", "München"},
		{"es", [4]string{"Vivo en Berlín.", "Trabajo en Siemens.", "Tengo dos coches.", "Me mudé a Múnich."},
			"¿Dónde vivía Alice?", "Berlín", "Múnich"},
		{"fr", [4]string{"J'habite à Berlin.", "Je travaille chez Siemens.", "J'ai deux voitures.", "J'ai déménagé à Munich."},
			"Où habitait Alice ?", "Berlin", "Munich"},
		{"zh", [4]string{"我住在柏林。", "我在西门子工作。", "我有两辆车。", "我住在慕尼黑。"},
			"Alice住在哪里？", "柏林", "慕尼黑"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			sayAll(t, e, "Alice", []dated{{"s1", 0, tc.turns[0]}, {"s1", 0, tc.turns[1]}, {"s1", 0, tc.turns[2]}, {"s1", 30, tc.turns[3]}})
			before, after := t0.Add(10*24*time.Hour), t0.Add(40*24*time.Hour)
			checkOrder(t, e, before, &before, []asked{{tc.question, tc.old, ""}})
			checkOrder(t, e, after, &after, []asked{{tc.question, tc.cur, tc.old}})
		})
	}
}

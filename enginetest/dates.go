package enginetest

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/formation"
)

// testDates: a conversation over three sessions in each of five languages.
// On a Wednesday the speaker states a plan with a bare weekday; on the
// Thursday of the next week an appointment moved "to Thursday" (the
// Thursday a week on, not that day or the one before) and a visit "on
// Tuesday" (two days before); on the Sunday a class that now takes place
// every Friday (recurring: no date written in). Read through the library
// and over HTTP, each turn's memory carries the right event window and
// date in its abstraction, a search for the date finds the turn that
// names it first, and a search for the recurrence finds the class. The
// Spanish plan, a job interview ("entrevista de trabajo") in a city, forms
// no fact that Alice works there.
func testDates(t *testing.T, open Open) {
	s1 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)  // Wednesday
	s2 := time.Date(2024, 5, 9, 10, 0, 0, 0, time.UTC)  // Thursday
	s3 := time.Date(2024, 5, 12, 10, 0, 0, 0, time.UTC) // Sunday
	for _, tc := range []struct {
		lang, plan, planDate, moved, saw, every string
	}{
		{"en", "I have a dentist appointment on Monday.", "2024-05-06", "My dentist appointment was moved to Thursday.",
			"I saw my sister on Tuesday.", "Our yoga class moved to every Friday."},
		{"de", "Ich habe am Montag einen Zahnarzttermin.", "2024-05-06", "Der Zahnarzttermin wurde auf Donnerstag verschoben.",
			"Am Dienstag habe ich meine Schwester besucht.", "Unser Yogakurs ist jetzt jeden Freitag."},
		{"es", "Tengo una entrevista de trabajo en Valencia el viernes.", "2024-05-03", "La entrevista se cambió al jueves.",
			"El martes vi a mi hermana.", "La clase de yoga ahora es todos los viernes."},
		{"fr", "J'ai un rendez-vous chez le dentiste lundi.", "2024-05-06", "Le rendez-vous chez le dentiste est reporté à jeudi.",
			"Mardi, j'ai vu ma sœur.", "Le cours de yoga a lieu tous les vendredis."},
		{"zh", "我周一要去看牙医。", "2024-05-06", "牙医的预约改到周四了。", "我周二去看了我姐姐。", "我们的瑜伽课改到每周五了。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			plan := sayIn(t, e, "s1", s1, tc.plan)
			sayIn(t, e, "s1", s1.Add(time.Minute), "OK.")
			moved := sayIn(t, e, "s2", s2, tc.moved)
			saw := sayIn(t, e, "s2", s2.Add(time.Minute), tc.saw)
			every := sayIn(t, e, "s3", s3, tc.every)
			if ws := facts(t, e, "workplace", nil); len(ws) > 0 {
				t.Errorf("workplace facts %v; no turn says where Alice works", values(ws))
			}
			client, _ := overHTTP(t, e)
			for _, via := range []struct {
				name string
				r    reader
			}{{"library", e}, {"http", client}} {
				t.Run(via.name, func(t *testing.T) {
					for _, want := range []struct {
						episode, from, label string
					}{
						{plan, tc.planDate, labelOf(tc.planDate)},
						{moved, "2024-05-16", "16 May 2024"},
						{saw, "2024-05-07", "7 May 2024"},
					} {
						m := turnMemory(t, via.r, want.episode)
						if got := m.Metadata[engram.MetaEventFrom]; got != want.from || !strings.Contains(m.Abstraction, want.label) {
							t.Errorf("%q: event from %v, abstraction %q; want %s and %s", m.Value, got, m.Abstraction, want.from, want.label)
						}
					}
					m := turnMemory(t, via.r, every)
					if _, pinned := m.Metadata[engram.MetaEventFrom]; pinned || strings.Contains(m.Abstraction, "[") ||
						m.Metadata[formation.MetaRecurring] != "every Friday" {
						t.Errorf("recurring %q: metadata %v, abstraction %q; want no date and recurring every Friday", m.Value, m.Metadata, m.Abstraction)
					}
					for _, q := range []struct{ query, episode string }{
						{"What is on 16 May 2024?", moved},
						{"What happens every Friday?", every},
					} {
						res, err := via.r.Search(ctx, engram.SearchRequest{Scope: scA, Query: q.query, K: 5})
						if err != nil {
							t.Fatalf("search %q: %v", q.query, err)
						}
						if len(res.Hits) == 0 || !hasSource(res.Hits[0].Memory, q.episode) {
							t.Errorf("%q ranks %v first; want the turn that names it", q.query, hitValues(res.Hits))
						}
					}
				})
			}
		})
	}
}

// sayIn adds one turn of Alice's in a session of her own at time at and
// returns the episode's id.
func sayIn(t *testing.T, e *engine.Engine, session string, at time.Time, text string) string {
	t.Helper()
	ns := nsA
	ns.Session = session
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
		Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: text, OccurredAt: &at}}})
	if err != nil || len(res.Episodes) != 1 {
		t.Fatalf("add %q: %v", text, err)
	}
	return res.Episodes[0].ID
}

// turnMemory returns the memory of one turn: the active memory whose only
// source is the episode and that is no fact.
func turnMemory(t *testing.T, r reader, episode string) engram.Memory {
	t.Helper()
	p, err := r.ListMemories(ctx, scA, engram.MemoryFilter{Sources: []string{episode}, Limit: engram.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Memories {
		if len(m.Sources) == 1 && m.Kind == engram.KindEpisodic && m.Metadata[engram.MetaFactAttribute] == nil {
			return m
		}
	}
	t.Fatalf("no turn memory of %s among %v", episode, values(p.Memories))
	return engram.Memory{}
}

func hasSource(m engram.Memory, episode string) bool {
	for _, s := range m.Sources {
		if s == episode {
			return true
		}
	}
	return false
}

// labelOf renders a date as lang.Mention.Label does.
func labelOf(date string) string {
	d, _ := time.Parse(time.DateOnly, date)
	return d.Format("2 January 2006")
}

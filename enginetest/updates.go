package enginetest

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// update is one fact stated twice with different values, a month apart.
type update struct {
	name, before, after, question, oldValue, newValue string
}

// testCountUpdate: a new count of something one has, or has done,
// supersedes the older count; the question about it ranks the new count
// first; the old fact stays in history and an as-of read before the
// change ranks it first, through the library and over HTTP. In English,
// German and Spanish.
func testCountUpdate(t *testing.T, open Open) {
	runUpdates(t, open, []update{
		{"en/has", "I have two cats.", "I have three cats now.", "How many cats does Alice have?", "two", "three"},
		{"en/done", "I've run three marathons so far.", "I have now run five marathons.", "How many marathons has Alice run?", "three", "five"},
		{"de/has", "Ich habe zwei Katzen.", "Ich habe jetzt drei Katzen.", "Wie viele Katzen hat Alice?", "zwei", "drei"},
		{"de/done", "Ich habe schon drei Marathons gelaufen.", "Ich habe jetzt fünf Marathons gelaufen.", "Wie viele Marathons ist Alice gelaufen?", "drei", "fünf"},
		{"es/has", "Tengo dos gatos.", "Ahora tengo tres gatos.", "¿Cuántos gatos tiene Alice?", "dos", "tres"},
		{"es/done", "He corrido tres maratones.", "Ya he corrido cinco maratones.", "¿Cuántos maratones ha corrido Alice?", "tres", "cinco"},
		{"fr/has", "J'ai deux chats.", "J'ai maintenant trois chats.", "Combien de chats Alice a-t-elle ?", "deux", "trois"},
		{"fr/done", "J'ai couru trois marathons.", "J'ai maintenant couru cinq marathons.", "Combien de marathons Alice a-t-elle couru ?", "trois", "cinq"},
	})
}

// testScheduleUpdate: an event stated plainly at one time and later at
// another (no "instead") is superseded by the later statement; the
// question about it ranks the new time first; the old stays in history
// and as of before the change, through the library and over HTTP. In
// English, German and Spanish.
func testScheduleUpdate(t *testing.T, open Open) {
	runUpdates(t, open, []update{
		{"en", "Our team meeting is on Tuesday at 10am.", "Our team meeting is on Thursday at 2pm.", "When is the team meeting?", "Tuesday", "Thursday"},
		{"de", "Unser Teammeeting ist am Dienstag um 10 Uhr.", "Unser Teammeeting ist am Donnerstag um 14 Uhr.", "Wann ist das Teammeeting?", "Dienstag", "Donnerstag"},
		{"es", "Nuestra reunión es el martes a las 10.", "Nuestra reunión es el jueves a las 2.", "¿Cuándo es la reunión?", "martes", "jueves"},
		{"fr", "Notre réunion d'équipe est mardi à 10h.", "Notre réunion d'équipe est jeudi à 14h.", "Quand est la réunion d'équipe ?", "mardi", "jeudi"},
	})
}

func runUpdates(t *testing.T, open Open, cases []update) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			say(t, e, t0, "Alice", "Hi there!")
			first := say(t, e, t0.Add(time.Hour), "Alice", tc.before)
			later := t0.Add(30 * 24 * time.Hour)
			if res := say(t, e, later, "Alice", tc.after); res.Decisions[engram.OpSupersede] != 1 {
				t.Errorf("decisions = %v, want the old fact superseded", res.Decisions)
			}
			old, cur := factPair(t, e, first.Episodes[0].ID)
			if old == nil || cur == nil || !strings.Contains(old.Value, tc.oldValue) || !strings.Contains(cur.Value, tc.newValue) || old.SupersededBy != cur.ID {
				t.Fatalf("facts: old %v, current %v", old, cur)
			}
			if old.ValidTo == nil || !old.ValidTo.Equal(later) {
				t.Errorf("old fact valid to %v, want %v", old.ValidTo, later)
			}
			for _, m := range turnsOf(t, e, first.Episodes[0].ID) {
				if m.Kind == engram.KindEpisodic && m.Status != engram.StatusActive {
					t.Errorf("the old turn %q is %s, want active", m.Value, m.Status)
				}
			}
			client, _ := overHTTP(t, e)
			for _, via := range []struct {
				name string
				r    reader
			}{{"library", e}, {"http", client}} {
				res, err := via.r.Search(ctx, engram.SearchRequest{Scope: scA, Query: tc.question, K: 5})
				if err != nil {
					t.Fatalf("%s: search %q: %v", via.name, tc.question, err)
				}
				if hits := res.Hits; len(hits) == 0 || !strings.Contains(hits[0].Memory.Value, tc.newValue) {
					t.Errorf("%s: %q ranks %v, want %s first", via.name, tc.question, hitValues(hits), tc.newValue)
				}
				asOf := t0.Add(2 * time.Hour)
				past := searchAsOf(t, via.r, tc.question, asOf, nil)
				if len(past) == 0 || !strings.Contains(past[0].Memory.Value, tc.oldValue) {
					t.Errorf("%s: %q as of %v ranks %v, want %s first", via.name, tc.question, asOf, hitValues(past), tc.oldValue)
				}
				for _, h := range past {
					if strings.Contains(h.Memory.Value, tc.newValue) {
						t.Errorf("%s: %q as of %v found %q, said later", via.name, tc.question, asOf, h.Memory.Value)
					}
				}
			}
		})
	}
}

// factPair returns the superseded fact formed from episode and the active
// fact that replaced it.
func factPair(t *testing.T, e *engine.Engine, episode string) (old, cur *engram.Memory) {
	t.Helper()
	for _, m := range turnsOf(t, e, episode) {
		if m.Metadata[engram.MetaFactAttribute] == nil || m.Status != engram.StatusSuperseded {
			continue
		}
		n, err := e.GetMemory(ctx, scA, m.SupersededBy)
		if err != nil {
			t.Fatalf("the fact that replaced %q: %v", m.Value, err)
		}
		return &m, n
	}
	return nil, nil
}

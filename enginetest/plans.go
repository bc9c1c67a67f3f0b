package enginetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/formation"
)

// testPlanChange: a changed plan supersedes the plan it changes, at the
// time the change was said; a plan of another kind (a move) stays; the
// question about the trip finds the current plan first; an as-of read
// still sees the old one; a cancellation supersedes the current plan
// with a fact that says so. In English, German and Spanish.
func testPlanChange(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, before, move, after, cancel, question, oldCity, newCity string
	}{
		{"en", "I'm going to Lisbon in May.", "We plan to move to Canada next year.",
			"We changed our plans, we're going to Porto instead.", "The trip is cancelled.",
			"Where is Alice going in May?", "Lisbon", "Porto"},
		{"de", "Ich werde im Mai nach Lissabon fahren.", "Wir planen, nächstes Jahr nach Kanada zu ziehen.",
			"Wir fahren doch lieber nach Porto.", "Die Reise ist abgesagt.",
			"Wohin fährt Alice im Mai?", "Lissabon", "Porto"},
		{"es", "Voy a Lisboa en mayo.", "Vamos a mudarnos a Canadá el año que viene.",
			"Al final vamos a Oporto.", "El viaje se canceló.",
			"¿Adónde va Alice en mayo?", "Lisboa", "Oporto"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			start := t0.Add(-60 * 24 * time.Hour)
			say(t, e, start, "Alice", "Hi! Guess what.")
			say(t, e, start.Add(time.Hour), "Alice", tc.before)
			say(t, e, start.Add(2*time.Hour), "Alice", tc.move)
			later := start.Add(20 * 24 * time.Hour)
			if res := say(t, e, later, "Alice", tc.after); res.Decisions[engram.OpSupersede] != 1 {
				t.Errorf("decisions = %v, want the trip superseded", res.Decisions)
			}
			old, cur := splitFacts(t, facts(t, e, "plan trip", nil))
			if old == nil || cur == nil || !strings.Contains(old.Value, tc.oldCity) || !strings.Contains(cur.Value, tc.newCity) || old.SupersededBy != cur.ID {
				t.Fatalf("trip facts: old %v, current %v", old, cur)
			}
			if old.ValidTo == nil || !old.ValidTo.Equal(later) || old.Metadata[engram.MetaEventFrom] != "2024-05-01" {
				t.Errorf("old plan valid to %v, event from %v; want %v and May 2024", old.ValidTo, old.Metadata[engram.MetaEventFrom], later)
			}
			if v := lastVersion(t, e, old.ID); v.Op != engram.OpSupersede || v.Actor != formation.ActorRules || !strings.Contains(v.Reason, tc.newCity) {
				t.Errorf("old plan's last version = %s by %q: %q", v.Op, v.Actor, v.Reason)
			}
			if moves := facts(t, e, "plan move", nil); len(moves) != 1 || moves[0].Status != engram.StatusActive {
				t.Errorf("move facts = %v, want one active", values(moves))
			}
			hits := search(t, e, engram.SearchRequest{Query: tc.question, K: 5}).Hits
			if len(hits) == 0 || !strings.Contains(hits[0].Memory.Value, tc.newCity) {
				t.Errorf("%q ranks %v, want %s first", tc.question, hitValues(hits), tc.newCity)
			}
			asOf := start.Add(3 * time.Hour)
			past := search(t, e, engram.SearchRequest{Query: tc.question, Filter: engram.MemoryFilter{ValidAt: &asOf}}).Hits
			if !placed(past, old.ID) {
				t.Errorf("as-of search %q = %v, want the %s plan", tc.question, hitValues(past), tc.oldCity)
			}
			if res := say(t, e, later.Add(24*time.Hour), "Alice", tc.cancel); res.Decisions[engram.OpSupersede] != 1 {
				t.Errorf("cancel decisions = %v, want the trip superseded", res.Decisions)
			}
			active := facts(t, e, "plan trip", nil)
			active = slices.DeleteFunc(active, func(m engram.Memory) bool { return m.Status != engram.StatusActive })
			if len(active) != 1 || !strings.Contains(active[0].Value, tc.newCity) || active[0].ID == cur.ID {
				t.Errorf("after cancelling, active trip facts = %v, want one saying the %s trip is off", values(active), tc.newCity)
			}
		})
	}
}

// splitFacts returns the superseded and the active member of a pair.
func splitFacts(t *testing.T, fs []engram.Memory) (old, cur *engram.Memory) {
	t.Helper()
	for i := range fs {
		switch fs[i].Status {
		case engram.StatusSuperseded:
			old = &fs[i]
		case engram.StatusActive:
			cur = &fs[i]
		}
	}
	if len(fs) != 2 {
		t.Errorf("facts = %v, want two", values(fs))
	}
	return old, cur
}

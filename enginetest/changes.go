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

// change is one conversation of Bob's over three sittings a month apart
// in one language: what he drinks, his job and his home change.
type change struct {
	lang     string
	sittings [3][]string
	// others are said between the first and second sittings and must
	// change no fact: someone else's stop, a condition, a question.
	others []string
	// facts are, per attribute, the value of the fact active at the end
	// (every word of it) and of the one it replaced, "" when none.
	facts []changedFact
	// asks are questions whose hits must hold the current value.
	asks []changeAsk
}

// changedFact is, for one attribute, the words of the active fact, of
// the fact it replaced ("" when none) and of a fact kept active beside it
// ("" when none: a new home that may lie within the held one).
type changedFact struct{ attr, active, replaced, beside string }

type changeAsk struct{ question, want string }

// testChanges: over a conversation of three sittings, in English, German,
// Spanish, French and Chinese, stopping something ends the held fact
// that names it and what one does now replaces it, a new job of title
// and employer replaces both old facts, and a home within the city held
// refines it (the city stays answerable in the newer value) while
// others' stops, conditions and questions end nothing; the facts are
// checked active and superseded, and questions about the present find
// the current value, through the library and over HTTP.
func testChanges(t *testing.T, open Open) {
	runChanges(t, open, func(int) string { return nsA.Session })
}

// testChangesAcrossSessions is testChanges with every sitting a session
// of its own (and the others' turns a fourth): what Bob says in one
// session ends, replaces or refines the facts of another.
func testChangesAcrossSessions(t *testing.T, open Open) {
	runChanges(t, open, func(i int) string { return fmt.Sprintf("s%d", i+1) })
}

// runChanges runs changeCases with sitting i said in session sessionOf(i)
// of Alice's, the others' turns in sessionOf(3).
func runChanges(t *testing.T, open Open, sessionOf func(int) string) {
	for _, tc := range changeCases {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			for i, sitting := range tc.sittings {
				at := t0.Add(time.Duration(i*30*24) * time.Hour)
				for j, text := range sitting {
					sayAs(t, e, sessionOf(i), at.Add(time.Duration(j)*time.Minute), "Bob", text)
				}
				if i == 0 {
					before := activeFacts(t, e)
					for j, text := range tc.others {
						sayAs(t, e, sessionOf(3), at.Add(time.Duration(15*24)*time.Hour+time.Duration(j)*time.Minute), "Bob", text)
					}
					if after := activeFacts(t, e); !slices.Equal(before, after) {
						t.Errorf("others' stops, conditions and questions changed the facts: %q, then %q", before, after)
					}
				}
			}
			checkChangedFacts(t, e, tc.facts)
			client, _ := overHTTP(t, e)
			for _, via := range []struct {
				name string
				r    reader
			}{{"library", e}, {"http", client}} {
				for _, q := range tc.asks {
					res, err := via.r.Search(ctx, engram.SearchRequest{Scope: scA, Query: q.question, K: 5})
					if err != nil {
						t.Fatalf("%s: search %q: %v", via.name, q.question, err)
					}
					if !slices.ContainsFunc(res.Hits, func(h engram.Hit) bool { return strings.Contains(h.Memory.Value, q.want) }) {
						t.Errorf("%s: %q finds %q, want %q among them", via.name, q.question, hitValues(res.Hits), q.want)
					}
				}
			}
		})
	}
}

// activeFacts returns the values of Bob's active facts, sorted.
func activeFacts(t *testing.T, e *engine.Engine) []string {
	t.Helper()
	p, err := e.ListMemories(ctx, scA, engram.MemoryFilter{Limit: engram.MaxLimit, Metadata: map[string]any{engram.MetaFactSubject: "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	out := values(p.Memories)
	slices.Sort(out)
	return out
}

// checkChangedFacts checks, per attribute, the one active fact and the
// fact it replaced, superseded by it.
func checkChangedFacts(t *testing.T, e *engine.Engine, want []changedFact) {
	t.Helper()
	for _, w := range want {
		fs := facts(t, e, w.attr, nil)
		var active, replaced []engram.Memory
		for _, m := range fs {
			if m.Status == engram.StatusActive {
				active = append(active, m)
			} else {
				replaced = append(replaced, m)
			}
		}
		if w.active == "" && len(active) != 0 {
			t.Errorf("%s: active %q, want none", w.attr, values(active))
		}
		want := []string{w.active}
		if w.beside != "" {
			want = append(want, w.beside)
		}
		if w.active != "" && (len(active) != len(want) || !allHeld(active, want)) {
			t.Errorf("%s: active %q, want them holding %q", w.attr, values(active), want)
			continue
		}
		if w.replaced == "" {
			continue
		}
		i := slices.IndexFunc(replaced, func(m engram.Memory) bool { return holdsAll(m.Value, w.replaced) })
		if i < 0 || replaced[i].SupersededBy == "" {
			t.Errorf("%s: replaced %q, want one holding %q superseded", w.attr, values(replaced), w.replaced)
		}
	}
}

// holdsAll reports whether s holds every word of words.
func holdsAll(s, words string) bool {
	for _, w := range strings.Fields(words) {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// allHeld reports whether each of words is held by one of ms.
func allHeld(ms []engram.Memory, words []string) bool {
	for _, w := range words {
		if !slices.ContainsFunc(ms, func(m engram.Memory) bool { return holdsAll(m.Value, w) }) {
			return false
		}
	}
	return true
}

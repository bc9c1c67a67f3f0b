package eval

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// heldout is a fixture of everyday assistant conversations written for
// this project, in the LongMemEval_S format, for reporting on questions no
// tuning has seen. `make eval-heldout` runs it.
const heldout = "testdata/assistant_heldout.json"

// The fixture's labels must agree with its conversations, or the numbers
// it gives measure the labels instead of the engine.
func TestHeldoutFixtureLabels(t *testing.T) {
	r, _, err := readData(heldout)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := decodeArray[lmeRecord](r, 0, "held-out")
	if err != nil {
		t.Fatal(err)
	}
	ds := mustParse(t, BenchLongMemEval, heldout, 0)
	if got, want := len(ds.haystacks), 12; got != want {
		t.Fatalf("haystacks = %d, want %d", got, want)
	}
	types := map[string]int{}
	for i, rec := range recs {
		h := &ds.haystacks[i]
		l := ds.labels[rec.QuestionID]
		t.Run(rec.QuestionID, func(t *testing.T) {
			types[rec.QuestionType]++
			if n := len(rec.HaystackSessions); n < 4 || n > 8 {
				t.Errorf("%d sessions, want 4 to 8", n)
			}
			seen := map[string]bool{}
			for si, s := range rec.HaystackSessions {
				sid := rec.HaystackSessionIDs[si]
				if strings.HasPrefix(sid, "answer_") || seen[sid] {
					t.Errorf("session id %q gives the label away or repeats", sid)
				}
				seen[sid] = true
				if len(s) < 4 || len(s) > 10 {
					t.Errorf("session %s has %d turns, want 4 to 10", sid, len(s))
				}
				for ti, tr := range s {
					if want := []string{"user", "assistant"}[ti%2]; tr.Role != want {
						t.Errorf("session %s turn %d is by %q, want %q", sid, ti, tr.Role, want)
					}
				}
			}
			if len(h.questions) != 1 || h.questions[0].date == nil {
				t.Fatalf("want one dated question")
			}
			asked := *h.questions[0].date
			for _, tr := range h.turns {
				if !tr.at.Before(asked) {
					t.Errorf("turn %s at %v is not before the question (%v)", tr.key, tr.at, asked)
				}
			}
			if l.skip != "" || len(l.turns) == 0 {
				t.Fatalf("label %+v: no evidence turns", l)
			}
			if !slices.Equal(l.sessions, rec.AnswerSessionIDs) {
				t.Errorf("evidence sessions %v, answer_session_ids %v", l.sessions, rec.AnswerSessionIDs)
			}
			// has_answer turns and answer sessions name the same sessions.
			var evSessions []string
			var last *turn
			sessionAt := map[string]time.Time{}
			for _, key := range l.turns {
				tr := findTurn(h, key)
				if !slices.Contains(evSessions, tr.session) {
					evSessions = append(evSessions, tr.session)
				}
				if last == nil || tr.at.After(last.at) {
					last = tr
				}
				sessionAt[tr.session] = tr.at
			}
			if !sameSet(evSessions, l.sessions) {
				t.Errorf("has_answer turns lie in sessions %v, answer sessions are %v", evSessions, l.sessions)
			}

			answer := strings.ToLower(l.answer)
			switch rec.QuestionType {
			case "multi-session":
				// A count over sessions: one evidence session per item.
				if n, err := strconv.Atoi(l.answer); err != nil || n != len(l.sessions) {
					t.Errorf("count answer %q, %d evidence sessions", l.answer, len(l.sessions))
				}
			case "knowledge-update":
				// The newest statement of the fact is the answer.
				if !strings.Contains(strings.ToLower(last.content), answer) {
					t.Errorf("the latest evidence turn %s does not state the answer %q", last.key, l.answer)
				}
			default:
				found := false
				for _, key := range l.turns {
					found = found || strings.Contains(strings.ToLower(findTurn(h, key).content), answer)
				}
				if !found {
					t.Errorf("no evidence turn states the answer %q", l.answer)
				}
			}
			if rec.QuestionType == "temporal-reasoning" {
				// "Last month" is the calendar month before the question.
				want := time.Date(asked.Year(), asked.Month()-1, 1, 0, 0, 0, 0, time.UTC)
				for sid, at := range sessionAt {
					if at.Year() != want.Year() || at.Month() != want.Month() {
						t.Errorf("evidence session %s is of %s, want %s", sid, at.Format("2006-01"), want.Format("2006-01"))
					}
				}
			}
		})
	}
	for _, kind := range []string{"single-session-user", "single-session-assistant", "knowledge-update", "multi-session", "temporal-reasoning"} {
		if types[kind] == 0 {
			t.Errorf("no %s question", kind)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

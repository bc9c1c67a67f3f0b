package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// suite is a fixture of multi-session conversations written for this
// project, in English, German, Spanish, French and Chinese, in which
// people's residence, work, relationships, diet, pets, schedules and
// counts change over dated sessions. Each question names the answer true
// at its date and, for a fact that changed, the rival: the old value for
// a question about the present, the newer one for a question about the
// past. Neither reaches the engine: it gets the turns and the question
// with its date as the search's now, as a client would send them. The
// conversations marked heldout are reported apart and were not looked at
// while the ranking was tuned.
const suite = "testdata/conversations.json"

type suiteConversation struct {
	ID       string `json:"id"`
	Lang     string `json:"lang"`
	Heldout  bool   `json:"heldout"`
	Sessions []struct {
		Date  time.Time   `json:"date"`
		Turns [][2]string `json:"turns"` // speaker ("assistant" for the assistant), text
	} `json:"sessions"`
	Questions []suiteQuestion `json:"questions"`
}

type suiteQuestion struct {
	Q      string    `json:"q"`
	Date   time.Time `json:"date"`
	Answer []string  `json:"answer"` // any of these in a hit's text is the answer
	Rival  []string  `json:"rival"`  // a hit with one of these and no answer is the rival
}

func readSuite(t *testing.T) []suiteConversation {
	t.Helper()
	b, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	var cs []suiteConversation
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// The fixture must be what its comment says, or its figures measure the
// fixture: at least 12 conversations of three sessions or more, every
// language among them, a third held out, an answer (and a rival, where
// one is named) said in the turns or as the rules former states facts
// ("Maya has dogs: three"), questions asked after the last session.
func TestConversationSuiteFixture(t *testing.T) {
	cs := readSuite(t)
	if len(cs) < 12 {
		t.Errorf("%d conversations, want at least 12", len(cs))
	}
	langs, held := map[string]bool{}, 0
	for _, c := range cs {
		for _, l := range strings.Fields(c.Lang) {
			langs[l] = true
		}
		if c.Heldout {
			held++
		}
		if len(c.Sessions) < 3 {
			t.Errorf("%s: %d sessions, want 3 or more", c.ID, len(c.Sessions))
		}
		var said strings.Builder
		last := time.Time{}
		for _, s := range c.Sessions {
			if !s.Date.After(last) {
				t.Errorf("%s: session of %v is not after the one before", c.ID, s.Date)
			}
			last = s.Date
			for _, tr := range s.Turns {
				said.WriteString(strings.ToLower(tr[1]) + "\n")
			}
		}
		for _, q := range c.Questions {
			if !q.Date.After(last) {
				t.Errorf("%s: %q asked at %v, before the last session", c.ID, q.Q, q.Date)
			}
			for _, alts := range [][]string{q.Answer, q.Rival} {
				if len(alts) > 0 && !slices.ContainsFunc(alts, func(a string) bool { return strings.Contains(said.String(), strings.ToLower(a)) }) {
					t.Errorf("%s: %q: none of %q is said in a turn", c.ID, q.Q, alts)
				}
			}
			if len(q.Answer) == 0 {
				t.Errorf("%s: %q has no answer", c.ID, q.Q)
			}
		}
	}
	for _, l := range []string{"en", "de", "es", "fr", "zh"} {
		if !langs[l] {
			t.Errorf("no conversation in %s", l)
		}
	}
	if held*3 < len(cs) {
		t.Errorf("%d of %d conversations held out, want a third", held, len(cs))
	}
}

// suiteScore is what the suite measures over a part of it.
type suiteScore struct {
	questions, top3    int // questions; those with the answer in the top 3
	changed, ahead     int // questions with a rival; those with the answer above it
	first, firstOfThem int // questions; those with the answer first (reported, not a goal)
}

func (s suiteScore) String() string {
	return fmt.Sprintf("answer in top 3: %d/%d (%.3f); answer above the rival: %d/%d (%.3f); answer first: %d/%d",
		s.top3, s.questions, ratioOf(s.top3, s.questions), s.ahead, s.changed, ratioOf(s.ahead, s.changed), s.firstOfThem, s.first)
}

func ratioOf(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestConversationSuite stores each conversation of the suite in a fresh
// default engine (SQLite, the embedded encoder, the rules former), asks
// its questions with their dates as now, and reports, for the tuning part
// and the held-out part apart, the share of questions with the answer in
// the top 3 and, of those about a changed fact, the share with the answer
// ranked above the rival (a rival absent from the hits counts as below).
// With -v it logs the figures, and the ranks per question of the tuning
// part only (SUITE_SHOW=<id> logs one conversation's hits too). It fails
// below the figures measured when the suite landed (suiteFloors), so a
// change that loses what is true now is caught; the newcomer's questions
// are held to the current answer first by enginetest CurrentFirst.
func TestConversationSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("stores twelve conversations with the embedded encoder; skipped with -short")
	}
	var tune, held suiteScore
	for _, c := range readSuite(t) {
		sc := &tune
		if c.Heldout {
			sc = &held
		}
		runConversation(t, c, sc)
	}
	t.Logf("tuning part: %v", tune)
	t.Logf("held-out part: %v", held)
	for _, p := range []struct {
		name  string
		got   suiteScore
		floor [2]int // answers in the top 3, answers above the rival
	}{{"tuning", tune, suiteFloors[0]}, {"held-out", held, suiteFloors[1]}} {
		if p.got.top3 < p.floor[0] || p.got.ahead < p.floor[1] {
			t.Errorf("%s part: %v; want at least %d in the top 3 and %d above the rival", p.name, p.got, p.floor[0], p.floor[1])
		}
	}
}

// suiteFloors are the tuning and held-out figures measured on 7 December
// 2026, after Chinese, count and schedule facts were formed and a Chinese
// question's characters became full-text terms (tuning 34/34 in the top 3,
// 32/32 above the rival; held out 13/17 and 10/15).
var suiteFloors = [2][2]int{{34, 32}, {13, 10}}

// runConversation stores c in a fresh engine, asks its questions and adds
// what it measured to sc.
func runConversation(t *testing.T, c suiteConversation, sc *suiteScore) {
	t.Helper()
	ctx := context.Background()
	svc, closeFn, err := DefaultEngine(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	ns := engram.Namespace{Org: "eval", Project: "suite", User: c.ID}
	for i, s := range c.Sessions {
		var in []engram.EpisodeInput
		for j, tr := range s.Turns {
			at := s.Date.Add(time.Duration(j) * 2 * time.Minute)
			role, speaker := "user", tr[0]
			if speaker == "assistant" {
				role, speaker = "assistant", ""
			}
			in = append(in, engram.EpisodeInput{Role: role, Speaker: speaker, Content: tr[1], OccurredAt: &at})
		}
		sns := ns
		sns.Session = fmt.Sprintf("s%d", i+1)
		if _, err := svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: sns, Episodes: in}); err != nil {
			t.Fatalf("%s: add session %d: %v", c.ID, i+1, err)
		}
	}
	scope := engram.Scope{Org: ns.Org, Project: ns.Project, User: ns.User}
	for _, q := range c.Questions {
		now := q.Date
		res, err := svc.Search(ctx, engram.SearchRequest{Scope: scope, Query: q.Q, Now: &now, K: 10})
		if err != nil {
			t.Fatalf("%s: %q: %v", c.ID, q.Q, err)
		}
		answer, rival := answerRanks(res.Hits, q)
		sc.questions++
		sc.first++
		if answer == 1 {
			sc.firstOfThem++
		}
		if answer > 0 && answer <= 3 {
			sc.top3++
		}
		if len(q.Rival) > 0 {
			sc.changed++
			if answer > 0 && (rival == 0 || answer < rival) {
				sc.ahead++
			}
		}
		if !c.Heldout {
			t.Logf("%s: %q: answer at %d, rival at %d", c.ID, q.Q, answer, rival)
			if os.Getenv("SUITE_SHOW") == c.ID {
				showHits(t, res.Hits)
			}
		}
	}
}

// showHits logs the hits of a question of the tuning part, for a look at
// one conversation: SUITE_SHOW=<id> go test -run TestConversationSuite -v.
func showHits(t *testing.T, hits []engram.Hit) {
	for i, h := range hits {
		when := ""
		if h.Memory.ValidFrom != nil {
			when = h.Memory.ValidFrom.Format(time.DateOnly)
		}
		t.Logf("    %d %.3f %s %s %q", i+1, h.Score, h.Memory.Kind, when, h.Memory.Value)
	}
}

// answerRanks returns the places (1-based, 0 for none) of the first hit
// that holds an answer of q and of the first that holds a rival and no
// answer.
func answerRanks(hits []engram.Hit, q suiteQuestion) (answer, rival int) {
	holds := func(text string, any []string) bool {
		return slices.ContainsFunc(any, func(s string) bool { return strings.Contains(text, strings.ToLower(s)) })
	}
	for i, h := range hits {
		text := strings.ToLower(h.Memory.Value)
		switch {
		case holds(text, q.Answer):
			if answer == 0 {
				answer = i + 1
			}
		case holds(text, q.Rival):
			if rival == 0 {
				rival = i + 1
			}
		}
	}
	return answer, rival
}

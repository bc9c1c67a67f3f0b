package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/sqlite"
)

var agentStart = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// allMoves weighs in every move of the rules, so each path runs.
func allMoves() *engine.AgentConfig {
	c := engine.DefaultAgentConfig()
	c.PartWeight, c.AnchorWeight, c.NeighbourShare, c.CueShare, c.MinGain = 0.9, 0.8, 0.5, 0.5, 0
	return &c
}

func openAgent(t *testing.T, opts engine.Options) *engine.Engine {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	opts.CloseStore, opts.AccessFlush = true, time.Hour
	opts.Logger = slog.New(slog.DiscardHandler)
	e, err := engine.New(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// talk adds turns ("speaker|text") as one session of ns, a minute apart.
func talk(t *testing.T, e *engine.Engine, ns engram.Namespace, turns ...string) {
	t.Helper()
	in := make([]engram.EpisodeInput, len(turns))
	for i, s := range turns {
		sp, text, _ := strings.Cut(s, "|")
		at := agentStart.Add(time.Duration(i) * time.Minute)
		in[i] = engram.EpisodeInput{Role: "user", Speaker: sp, Content: text, OccurredAt: &at}
	}
	if _, err := e.AddEpisodes(context.Background(), engram.AddEpisodesRequest{Namespace: ns, Episodes: in}); err != nil {
		t.Fatal(err)
	}
}

var annaTurns = []string{
	"Anna|I moved to Lisbon last spring for a job at the aquarium.",
	"Ben|That sounds wonderful, do you like the aquarium?",
	"Anna|Yes, I feed the octopus every morning before the visitors come.",
	"Ben|My sister Clara plays the cello in an orchestra in Porto.",
	"Anna|Does Clara ever perform in Lisbon?",
	"Ben|She played a concert at the Gulbenkian last winter.",
	"Anna|I started learning to surf at Carcavelos beach on weekends.",
	"Ben|Surfing in the Atlantic must be cold in March.",
}

func agentic(t *testing.T, e *engine.Engine, req engram.SearchRequest) *engram.SearchResult {
	t.Helper()
	req.Mode = engram.ModeAgentic
	if req.Now == nil {
		now := agentStart.Add(24 * time.Hour)
		req.Now = &now
	}
	res, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("agentic search %q: %v", req.Query, err)
	}
	return res
}

func actions(tr []engram.AgentStep) []string {
	var out []string
	for _, s := range tr {
		out = append(out, s.Action+"/"+s.By)
	}
	return out
}

func hitIDs(hs []engram.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Memory.ID
	}
	return out
}

// TestAgenticRules runs every move of the rule policy: the parts of a
// compound question, the anchors of the best hits, the expansion, and
// the stop once nothing is left.
func TestAgenticRules(t *testing.T) {
	e := openAgent(t, engine.Options{Agent: allMoves()})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Where did Anna move and what does Clara play?", K: 5, Steps: 5})
	got := actions(res.Trace)
	want := []string{"search/rules", "refine/rules", "refine/rules", "expand/rules", "stop/rules"}
	if !slices.Equal(got, want) {
		t.Fatalf("trace %v, want %v", got, want)
	}
	if q := res.Trace[1].Queries; len(q) != 2 || !strings.Contains(q[0], "Anna") || !strings.Contains(q[1], "Clara") {
		t.Errorf("parts %q, want the two clauses", q)
	}
	if !strings.HasPrefix(res.Trace[2].Reason, "the best hits' anchors") || len(res.Trace[2].Queries) != 1 {
		t.Errorf("anchors step %+v", res.Trace[2])
	}
	if r := res.Trace[4].Reason; r != "nothing left to try" {
		t.Errorf("stop reason %q", r)
	}
	var lisbon, cello bool
	for _, h := range res.Hits {
		lisbon = lisbon || strings.Contains(h.Memory.Value, "moved to Lisbon")
		cello = cello || strings.Contains(h.Memory.Value, "cello")
	}
	if !lisbon || !cello {
		t.Errorf("hits miss a part of the question: lisbon %v cello %v", lisbon, cello)
	}
	if len(res.Hits) > 5 {
		t.Errorf("%d hits, want at most k=5", len(res.Hits))
	}
}

// TestAgenticExpandNeighbours checks that an expansion pools the turns
// next to the best hit, and explains them by the neighbour channel.
func TestAgenticExpandNeighbours(t *testing.T) {
	c := engine.DefaultAgentConfig()
	c.NeighbourShare, c.ExpandFrom, c.MinGain = 0.9, 1, 0
	e := openAgent(t, engine.Options{Agent: &c})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "octopus feeding", K: 20, Explain: true})
	if got := actions(res.Trace); !slices.Equal(got, []string{"search/rules", "expand/rules", "stop/rules"}) {
		t.Fatalf("trace %v", got)
	}
	var viaNeighbour int
	for _, h := range res.Hits {
		for _, x := range h.Explain {
			if x.Channel == retrieval.ChannelNeighbor {
				viaNeighbour++
			}
		}
	}
	if viaNeighbour == 0 {
		t.Errorf("no hit reached by a neighbour: %v", hitIDs(res.Hits))
	}
}

// TestAgenticStopsOnGain checks that the rules stop once a step's gain is
// below MinGain, saying so.
func TestAgenticStopsOnGain(t *testing.T) {
	c := *allMoves()
	c.MinGain = 2 // no step can bring more than all of the score
	e := openAgent(t, engine.Options{Agent: &c})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Where did Anna move and what does Clara play?"})
	if len(res.Trace) != 3 || !strings.Contains(res.Trace[2].Reason, "below") {
		t.Fatalf("trace %+v, want search, refine, stop on gain", res.Trace)
	}
}

// TestOneShotUnchanged checks that the default mode answers as before:
// the same hits as mode oneshot, and no trace.
func TestOneShotUnchanged(t *testing.T) {
	e := openAgent(t, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	now := agentStart.Add(24 * time.Hour)
	req := engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Where does Clara play the cello?", Now: &now, Decay: new(bool)}
	a, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Mode = engram.ModeOneShot
	b, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hitIDs(a.Hits), hitIDs(b.Hits)) || a.Trace != nil || b.Trace != nil {
		t.Errorf("default %v, oneshot %v, traces %v %v", hitIDs(a.Hits), hitIDs(b.Hits), a.Trace, b.Trace)
	}
}

// TestAgenticDefaultRules checks that with the measured defaults and no
// chat model an agentic search stops after its first search and ranks as
// the one-shot search does.
func TestAgenticDefaultRules(t *testing.T) {
	e := openAgent(t, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	now := agentStart.Add(24 * time.Hour)
	for _, q := range []string{"Where did Anna move and what does Clara play?", "octopus", "Wohin ist Anna gezogen?"} {
		req := engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: q, Now: &now, Decay: new(bool)}
		one, err := e.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		ag := agentic(t, e, req)
		if got := actions(ag.Trace); !slices.Equal(got, []string{"search/rules", "stop/rules"}) || ag.Trace[1].Reason != "nothing left to try" {
			t.Errorf("%q: trace %+v", q, ag.Trace)
		}
		if !slices.Equal(hitIDs(one.Hits), hitIDs(ag.Hits)) {
			t.Errorf("%q: agentic %v, one-shot %v", q, hitIDs(ag.Hits), hitIDs(one.Hits))
		}
	}
}

// TestAgenticBadInput checks that bad modes and budgets are EINVALID
// errors naming the field.
func TestAgenticBadInput(t *testing.T) {
	e := openAgent(t, engine.Options{})
	sc := engram.Scope{Org: "acme", Project: "app", User: "u1"}
	for _, tc := range []struct {
		req  engram.SearchRequest
		want string
	}{
		{engram.SearchRequest{Mode: "deep"}, "mode"},
		{engram.SearchRequest{Mode: engram.ModeAgentic, Steps: -1}, "steps"},
		{engram.SearchRequest{Mode: engram.ModeAgentic, Steps: engram.MaxSteps + 1}, "steps"},
		{engram.SearchRequest{Mode: engram.ModeAgentic, LLMCalls: 99}, "llm_calls"},
		{engram.SearchRequest{Mode: engram.ModeAgentic, LLMTokens: -5}, "llm_tokens"},
		{engram.SearchRequest{Steps: 2}, "steps applies to mode agentic"},
	} {
		tc.req.Scope, tc.req.Query = sc, "anything"
		_, err := e.Search(context.Background(), tc.req)
		if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), tc.want) {
			t.Errorf("%+v: %v, want EINVALID naming %q", tc.req, err, tc.want)
		}
	}
	_, err := e.Search(engram.WithVault(context.Background(), "test"), engram.SearchRequest{Scope: sc, Query: "x", Mode: engram.ModeAgentic, Vault: true})
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "vault") {
		t.Errorf("agentic vault search: %v", err)
	}
}

// leaky is an Expander that names memories of other users and tenants,
// as a buggy graph could: the search must never load them.
type leaky struct{ ids []string }

func (*leaky) Name() string { return "leaky" }
func (l *leaky) Expand(_ context.Context, _ *retrieval.Gathering, from []*retrieval.Candidate) ([]retrieval.Link, error) {
	var out []retrieval.Link
	for _, id := range l.ids {
		out = append(out, retrieval.Link{ID: id, From: from[0].Memory.ID, Via: "leaky", Share: 1})
	}
	return out, nil
}

// TestAgenticScope checks that no step leaves the caller's scope: another
// tenant and another user of the same tenant hold the same conversation,
// and every move, even an expansion that names the others' memories,
// returns the caller's own memories only.
func TestAgenticScope(t *testing.T) {
	x := &leaky{}
	e := openAgent(t, engine.Options{Agent: allMoves(), Expanders: []retrieval.Expander{x}})
	mine := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	others := []engram.Namespace{
		{Org: "acme", Project: "app", User: "u2", Session: "s1"},
		{Org: "globex", Project: "app", User: "u1", Session: "s1"},
	}
	talk(t, e, mine, annaTurns...)
	for _, ns := range others {
		talk(t, e, ns, annaTurns...)
		page, err := e.ListMemories(context.Background(), engram.ScopeOf(ns), engram.MemoryFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Memories {
			x.ids = append(x.ids, m.ID)
		}
	}
	if len(x.ids) < 2*len(annaTurns) {
		t.Fatalf("only %d memories of the others", len(x.ids))
	}
	for _, q := range []string{"Where did Anna move and what does Clara play?", "octopus", "Wo wohnt Anna und was spielt Clara?"} {
		res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(mine), Query: q, K: 50, Steps: engram.MaxSteps})
		if len(res.Hits) == 0 {
			t.Fatalf("%q: no hits", q)
		}
		for _, h := range res.Hits {
			if h.Memory.Namespace != mine {
				t.Fatalf("%q: hit %s of %+v outside the caller's scope", q, h.Memory.ID, h.Memory.Namespace)
			}
		}
	}
}

// TestAgenticCompoundOtherLanguages checks that German and Spanish
// compound questions are split into their parts and that both parts'
// memories are found.
func TestAgenticCompoundOtherLanguages(t *testing.T) {
	for _, tc := range []struct {
		lang, q   string
		turns     []string
		wantParts int
		want      []string
	}{
		{"de", "Wohin ist Anna gezogen und welches Instrument spielt Clara?", []string{
			"Anna|Ich bin letzten Frühling nach Lissabon gezogen, für eine Stelle im Aquarium.",
			"Ben|Gefällt dir die Arbeit im Aquarium?",
			"Anna|Ja, ich füttere jeden Morgen den Oktopus.",
			"Ben|Meine Schwester Clara spielt Cello in einem Orchester in Porto.",
			"Anna|Ich habe angefangen, am Wochenende in Carcavelos zu surfen.",
		}, 2, []string{"Lissabon", "Cello"}},
		{"es", "¿A dónde se mudó Anna y qué instrumento toca Clara?", []string{
			"Anna|Me mudé a Lisboa la primavera pasada por un trabajo en el acuario.",
			"Ben|¿Te gusta trabajar en el acuario?",
			"Anna|Sí, le doy de comer al pulpo cada mañana.",
			"Ben|Mi hermana Clara toca el violonchelo en una orquesta de Oporto.",
			"Anna|Empecé a hacer surf en Carcavelos los fines de semana.",
		}, 2, []string{"Lisboa", "violonchelo"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := openAgent(t, engine.Options{Agent: allMoves()})
			ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
			talk(t, e, ns, tc.turns...)
			res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: tc.q, K: 3})
			if len(res.Trace) < 2 || res.Trace[1].Action != engram.ActionRefine || len(res.Trace[1].Queries) != tc.wantParts {
				t.Fatalf("trace %+v, want the %d parts refined first", res.Trace, tc.wantParts)
			}
			for _, w := range tc.want {
				found := false
				for _, h := range res.Hits {
					found = found || strings.Contains(h.Memory.Value, w)
				}
				if !found {
					t.Errorf("no hit among the first 3 holds %q", w)
				}
			}
		})
	}
}

// chatEngine returns an engine whose chat model is the scripted fake.
func chatEngine(t *testing.T, chat func(openaitest.ChatRequest) string) (*engine.Engine, *openaitest.Server) {
	t.Helper()
	srv := openaitest.NewServer(t, openaitest.Options{Chat: chat})
	c, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := openAgent(t, engine.Options{LLM: c, Agent: allMoves()})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	return e, srv
}

func chatCalls(srv *openaitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Chat != nil {
			n++
		}
	}
	return n
}

var annaScope = engram.Scope{Org: "acme", Project: "app", User: "u1", Session: "s1"}

// TestAgenticLLMActions scripts a model that refines, expands and stops,
// and checks that each move is taken as the model chose it.
func TestAgenticLLMActions(t *testing.T) {
	e, srv := chatEngine(t, nil)
	srv.QueueChat(
		`{"action":"refine","query":"Clara cello orchestra","reason":"the question names Clara"}`,
		"```json\n{\"action\":\"expand\",\"query\":\"\",\"reason\":\"read around it\"}\n```",
		`{"action":"stop","query":"","reason":"enough"}`,
	)
	res := agentic(t, e, engram.SearchRequest{Scope: annaScope, Query: "What instrument does Ben's sister play?", K: 5})
	if got := actions(res.Trace); !slices.Equal(got, []string{"search/rules", "refine/llm", "expand/llm", "stop/llm"}) {
		t.Fatalf("trace %v", got)
	}
	if q := res.Trace[1].Queries; len(q) != 1 || q[0] != "Clara cello orchestra" {
		t.Errorf("refined query %q", q)
	}
	if res.Trace[3].Reason != "enough" || res.LLMCalls != 3 || chatCalls(srv) != 3 || res.LLMTokens == 0 {
		t.Errorf("stop %+v, calls %d (server %d), tokens %d", res.Trace[3], res.LLMCalls, chatCalls(srv), res.LLMTokens)
	}
	if len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Memory.Value, "cello") {
		t.Errorf("first hit %v, want the cello", res.Hits)
	}
	last := srv.Requests()[len(srv.Requests())-1].Chat
	if user := last.Messages[len(last.Messages)-1].Content; !strings.Contains(user, "Ben's sister") || !strings.Contains(user, "refine Clara cello orchestra") {
		t.Errorf("the model was not shown the question and the steps:\n%s", user)
	}
}

// TestAgenticLLMNeverStops checks that a model that never says STOP is
// bounded by the step budget, and the LLM-call budget by its own.
func TestAgenticLLMNeverStops(t *testing.T) {
	i := 0
	e, srv := chatEngine(t, func(openaitest.ChatRequest) string {
		i++
		return fmt.Sprintf(`{"action":"refine","query":"Anna surfing beach %d","reason":"more"}`, i)
	})
	res := agentic(t, e, engram.SearchRequest{Scope: annaScope, Query: "What does Anna do on weekends?", Steps: 4})
	if n := len(res.Trace); n != 6 || res.Trace[5].Action != engram.ActionStop || !strings.Contains(res.Trace[5].Reason, "step budget") {
		t.Fatalf("trace %+v, want search, 4 refines and a stop on the step budget", res.Trace)
	}
	if chatCalls(srv) != 4 || res.LLMCalls != 4 {
		t.Errorf("%d chat calls (reported %d), want 4", chatCalls(srv), res.LLMCalls)
	}

	srv.Reset()
	res = agentic(t, e, engram.SearchRequest{Scope: annaScope, Query: "What does Anna do on weekends?", Steps: 4, LLMCalls: 1})
	if got := actions(res.Trace); len(got) < 3 || got[1] != "refine/llm" || slices.Contains(got[2:], "refine/llm") || chatCalls(srv) != 1 {
		t.Errorf("with llm_calls 1: trace %v, %d calls", got, chatCalls(srv))
	}

	srv.Reset()
	res = agentic(t, e, engram.SearchRequest{Scope: annaScope, Query: "What does Anna do on weekends?", Steps: 4, LLMTokens: 1})
	if got := actions(res.Trace); !slices.Equal(got, []string{"search/rules", "refine/llm", "stop/rules"}) || !strings.Contains(res.Trace[2].Reason, "token budget") {
		t.Errorf("with llm_tokens 1: trace %+v", res.Trace)
	}
}

// TestAgenticLLMMalformed checks that a malformed reply, an unknown
// action, a refine without a query and a failing server each fall back
// to the rules for that step.
func TestAgenticLLMMalformed(t *testing.T) {
	for _, tc := range []struct{ name, reply, want string }{
		{"prose", "I think you should look further.", "LLM"},
		{"unknown action", `{"action":"dance","query":"","reason":""}`, "unknown action"},
		{"refine without query", `{"action":"refine","query":"  ","reason":""}`, "without a usable query"},
		{"wrong shape", `{"action":["stop"]}`, "no JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := chatEngine(t, nil)
			srv.QueueChat(tc.reply, `{"action":"stop","query":"","reason":"done"}`)
			res := agentic(t, e, engram.SearchRequest{Scope: annaScope, Query: "Where did Anna move to?"})
			if len(res.Trace) < 3 || res.Trace[1].By != "rules" || !strings.Contains(res.Trace[1].Reason, tc.want) {
				t.Fatalf("trace %+v, want the rules after %q", res.Trace, tc.want)
			}
			if res.Trace[len(res.Trace)-1].By != "llm" {
				t.Errorf("the model's later stop was not followed: %+v", res.Trace)
			}
		})
	}
	t.Run("server error", func(t *testing.T) {
		e, srv := chatEngine(t, nil)
		srv.FailNext(10, openaitest.Fault{Status: 500})
		res := agentic(t, e, engram.SearchRequest{Scope: annaScope, Query: "Where did Anna move to?", Steps: 2})
		if len(res.Trace) < 2 || res.Trace[1].By != "rules" || !strings.Contains(res.Trace[1].Reason, "LLM call failed") {
			t.Fatalf("trace %+v", res.Trace)
		}
	})
}

// TestSearchQueryText: a query that is not valid UTF-8 or holds a NUL
// character is refused naming query, in either mode, as every other text
// a request carries is.
func TestSearchQueryText(t *testing.T) {
	e := openAgent(t, engine.Options{})
	sc := engram.Scope{Org: "acme", Project: "app", User: "u1"}
	for _, mode := range []string{engram.ModeOneShot, engram.ModeAgentic} {
		for _, q := range []string{"caf\xe9 au lait", "Anna\x00's dog"} {
			_, err := e.Search(context.Background(), engram.SearchRequest{Scope: sc, Query: q, Mode: mode})
			if engram.ErrorCode(err) != engram.EINVALID || !strings.HasPrefix(engram.ErrorMessage(err), "query") {
				t.Errorf("%s search of %q: %v, want EINVALID naming query", mode, q, err)
			}
		}
	}
}

package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// entityMoves expands through the entity graph only.
func entityMoves(steps int) *engine.AgentConfig {
	c := engine.DefaultAgentConfig()
	c.EntityShare, c.RelationShare, c.EntityLimit, c.ExpandSteps, c.MinGain = 0.9, 0.8, 5, steps, 0
	return &c
}

// viaEntity returns the hits an expansion through the entity graph
// reached.
func viaEntity(hs []engram.Hit) []engram.Hit {
	var out []engram.Hit
	for _, h := range hs {
		for _, x := range h.Explain {
			if x.Channel == retrieval.ChannelEntity {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// TestAgenticExpandEntities checks, in English, German, Spanish and
// Chinese, that an expansion through the graph pools memories that name
// an entity the best hit names (Clara) though they share no word with the
// query, explained by the entity channel.
func TestAgenticExpandEntities(t *testing.T) {
	for _, tc := range []struct {
		name, query, want string
		turns             []string
	}{
		{"en", "cello orchestra", "Gulbenkian", []string{
			"Ben|My sister Clara plays the cello in an orchestra in Porto.",
			"Anna|I started learning to surf at Carcavelos beach on weekends.",
			"Ben|Clara gave a concert at the Gulbenkian last winter.",
			"Anna|The octopus at the aquarium ate two crabs today.",
		}},
		{"de", "Cello Orchester", "Gulbenkian", []string{
			"Ben|Meine Schwester Clara spielt Cello in einem Orchester in Porto.",
			"Anna|Ich lerne am Wochenende surfen am Strand von Carcavelos.",
			"Ben|Clara gab letzten Winter ein Konzert im Gulbenkian.",
			"Anna|Der Oktopus im Aquarium hat heute zwei Krabben gefressen.",
		}},
		{"es", "violonchelo orquesta", "Gulbenkian", []string{
			"Ben|Mi hermana Clara toca el violonchelo en una orquesta de Oporto.",
			"Anna|Empecé a aprender surf en la playa de Carcavelos los fines de semana.",
			"Ben|Clara dio un concierto en el Gulbenkian el invierno pasado.",
			"Anna|El pulpo del acuario se comió dos cangrejos hoy.",
		}},
		{"zh", "大提琴 乐团", "Gulbenkian", []string{
			"Ben|我妹妹 Clara 在波尔图的乐团里拉大提琴。",
			"Anna|我周末在 Carcavelos 海滩学冲浪。",
			"Ben|Clara 去年冬天在 Gulbenkian 开了音乐会。",
			"Anna|水族馆的章鱼今天吃了两只螃蟹。",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openAgent(t, engine.Options{Agent: entityMoves(1)})
			ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
			talk(t, e, ns, tc.turns...)
			res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: tc.query, K: 1, Explain: true})
			if got := actions(res.Trace); len(got) < 2 || got[1] != "expand/rules" {
				t.Fatalf("trace %v, want an expansion after the search", got)
			}
			res = agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: tc.query, K: 10, Explain: true})
			var found bool
			for _, h := range viaEntity(res.Hits) {
				found = found || strings.Contains(h.Memory.Value, tc.want)
			}
			if !found {
				t.Errorf("no hit naming %q reached through the graph: %v", tc.want, hitIDs(res.Hits))
			}
		})
	}
}

// TestAgenticEntitiesStayInScope checks that an expansion through the
// graph reaches no memory of another user or tenant, though theirs name
// the same entities.
func TestAgenticEntitiesStayInScope(t *testing.T) {
	e := openAgent(t, engine.Options{Agent: entityMoves(2)})
	mine := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, mine, annaTurns...)
	for _, ns := range []engram.Namespace{
		{Org: "acme", Project: "app", User: "u2", Session: "s1"},
		{Org: "globex", Project: "app", User: "u1", Session: "s1"},
	} {
		talk(t, e, ns, annaTurns...)
		talk(t, e, ns, "Clara|Clara moved to Madrid and sold the cello.")
	}
	for _, q := range []string{"octopus", "Clara cello", "Wo spielt Clara?"} {
		res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(mine), Query: q, K: 50, Explain: true})
		for _, h := range res.Hits {
			if h.Memory.Namespace != mine {
				t.Fatalf("%q: hit %s of %+v outside the caller's scope", q, h.Memory.ID, h.Memory.Namespace)
			}
		}
	}
}

// TestAgenticEntitiesStayInSession checks that an expansion through the
// graph in a scope narrowed to a session follows only what that session's
// memories say: s2 ties Melanie to Zoltan, s1 names them apart, so a
// search in s1 that finds Melanie reaches neither Zoltan's memory of s1
// nor, in its trace, anything through that tie.
func TestAgenticEntitiesStayInSession(t *testing.T) {
	e := openAgent(t, engine.Options{Agent: entityMoves(2)})
	s1 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	s2 := s1
	s2.Session = "s2"
	mine := addValues(t, e, s1, nil, "Yesterday I met Melanie in Lisbon.", "I had lunch with Zoltan.")
	addValues(t, e, s2, nil, "I met Melanie and Zoltan at the harbour.", "Zoltan and Melanie are cousins.")
	res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(s1), Query: "Lisbon", K: 10, Explain: true})
	if got := actions(res.Trace); len(got) < 2 || got[1] != "expand/rules" {
		t.Fatalf("trace %v, want an expansion after the search", got)
	}
	for _, h := range viaEntity(res.Hits) {
		if h.Memory.ID == mine[1] {
			t.Errorf("s1's search reached Zoltan's memory through a tie only s2 makes: %+v", h.Explain)
		}
	}
	for _, st := range res.Trace {
		if slices.Contains(st.New, mine[1]) {
			t.Errorf("the trace's %s step brought Zoltan's memory in: %+v", st.Action, res.Trace)
		}
	}
}

// TestAgenticSecondExpansion checks that the rules expand a second time
// only from what the first expansion brought into the first places, and
// not at all when ExpandSteps is 1.
func TestAgenticSecondExpansion(t *testing.T) {
	for _, steps := range []int{1, 2} {
		e := openAgent(t, engine.Options{Agent: entityMoves(steps)})
		ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
		talk(t, e, ns, annaTurns...)
		res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Clara cello", K: 5, Steps: 5})
		got := actions(res.Trace)
		expands := 0
		for _, a := range got {
			if a == "expand/rules" {
				expands++
			}
		}
		if expands < 1 || expands > steps {
			t.Errorf("ExpandSteps %d: trace %v", steps, got)
		}
		if steps == 2 && expands == 2 && len(res.Trace[1].New) == 0 {
			t.Errorf("a second expansion after a first that brought nothing: %+v", res.Trace)
		}
		if steps == 2 && len(res.Trace[1].New) > 0 && expands != 2 {
			t.Errorf("no second expansion after a first that brought %v: %v", res.Trace[1].New, got)
		}
	}
}

// TestAgenticDefaultNoEntities checks that the default configuration
// does not expand through the graph.
func TestAgenticDefaultNoEntities(t *testing.T) {
	e := openAgent(t, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1", Session: "s1"}
	talk(t, e, ns, annaTurns...)
	res := agentic(t, e, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Clara cello", K: 10, Explain: true})
	if got := actions(res.Trace); !slices.Equal(got, []string{"search/rules", "stop/rules"}) {
		t.Errorf("trace %v", got)
	}
	if hs := viaEntity(res.Hits); len(hs) > 0 {
		t.Errorf("default reached %d hits through the graph", len(hs))
	}
}

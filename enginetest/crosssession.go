package enginetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// sayAs adds one turn of speaker's at event time at in Alice's session,
// formed by the engine's former.
func sayAs(t *testing.T, e *engine.Engine, session string, at time.Time, speaker, text string) *engram.AddEpisodesResult {
	t.Helper()
	ns := nsA
	ns.Session = session
	return sayNS(t, e, ns, at, speaker, text)
}

// sayNS adds one turn of speaker's at event time at in namespace ns.
func sayNS(t *testing.T, e *engine.Engine, ns engram.Namespace, at time.Time, speaker, text string) *engram.AddEpisodesResult {
	t.Helper()
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
		Episodes: []engram.EpisodeInput{{Role: "user", Speaker: speaker, Content: text, OccurredAt: &at}}})
	if err != nil {
		t.Fatalf("add %q in %+v: %v", text, ns, err)
	}
	return res
}

// The namespaces of testChangesStayWithTheirUser: Alice's own sessions,
// an agent's session of Alice's, another user's, and two sessions
// without a user.
var (
	aliceS2 = engram.Namespace{Org: "acme", Project: "p", User: "alice", Session: "s2"}
	coachC1 = engram.Namespace{Org: "acme", Project: "p", User: "alice", Agent: "coach", Session: "c1"}
	coachC2 = engram.Namespace{Org: "acme", Project: "p", User: "alice", Agent: "coach", Session: "c2"}
	anonX1  = engram.Namespace{Org: "acme", Project: "p", Session: "x1"}
	anonX2  = engram.Namespace{Org: "acme", Project: "p", Session: "x2"}
)

// testChangesStayWithTheirUser: a change said in one session ends the
// facts of another session of the same user and agent only. Bob's new
// job and home, said by another user, in a session of an agent of
// Alice's, or in a session without a user, touch no memory of Alice's
// own (nor of another session without a user); the agent's change does
// end the agent's own facts of an earlier session, and Alice's change in
// her second session ends her first session's home, its new fact stored
// in the second session, leaving the others' homes as they were.
func testChangesStayWithTheirUser(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	day := func(n, minute int) time.Time {
		return t0.Add(time.Duration(n*24)*time.Hour + time.Duration(minute)*time.Minute)
	}
	held := []string{"I work as a teacher at Lincoln High.", "I live in Munich."}
	changed := []string{"I quit teaching and started a new job as a software engineer at Siemens.", "I live in Hamburg now."}
	for _, ns := range []engram.Namespace{nsA, coachC1, anonX1} {
		for j, text := range held {
			sayNS(t, e, ns, day(0, j), "Bob", text)
		}
	}
	alice, anon := versions(t, e, engram.ScopeOf(nsA), ""), versions(t, e, engram.ScopeOf(anonX1), "")
	for _, ns := range []engram.Namespace{nsB, coachC2, anonX2} {
		for j, text := range changed {
			sayNS(t, e, ns, day(30, j), "Bob", text)
		}
	}
	if after := versions(t, e, engram.ScopeOf(nsA), ""); len(alice) == 0 || !maps.Equal(after, alice) {
		t.Errorf("Alice's first session changed by others' turns: versions %v, then %v", alice, after)
	}
	if after := versions(t, e, engram.ScopeOf(anonX1), ""); len(anon) == 0 || !maps.Equal(after, anon) {
		t.Errorf("the first session without a user changed by others' turns: versions %v, then %v", anon, after)
	}
	first := map[string]string{"occupation": "teacher", "workplace": "Lincoln High", "residence": "Munich"}
	later := map[string]string{"occupation": "software engineer", "workplace": "Siemens", "residence": "Hamburg"}
	checkHeld(t, e, scA, "", first, "Alice's")
	checkHeld(t, e, engram.ScopeOf(anonX1), "", first, "the first session without a user")
	checkHeld(t, e, scA, "coach", later, "the coach's")
	checkHeld(t, e, scB, "", later, "the other user's")

	sayNS(t, e, aliceS2, day(60, 0), "Bob", "I live in Berlin now.")
	home := heldFacts(t, e, scA, "", "residence")
	if len(home) != 1 || !strings.Contains(home[0].Value, "Berlin") || home[0].Namespace != aliceS2 {
		t.Errorf("Alice's home after her second session: %q in %+v, want Berlin's fact in %+v", values(home), namespaces(home), aliceS2)
	}
	checkHeld(t, e, scA, "coach", later, "the coach's, after Alice's move")
	checkHeld(t, e, scB, "", later, "the other user's, after Alice's move")
	checkHeld(t, e, engram.ScopeOf(anonX1), "", first, "the first session without a user, after Alice's move")
}

// versions returns the version and status of every memory of agent's in
// s, by value.
func versions(t *testing.T, e *engine.Engine, s engram.Scope, agent string) map[string]string {
	t.Helper()
	p, err := e.ListMemories(ctx, s, engram.MemoryFilter{Limit: engram.MaxLimit,
		Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range p.Memories {
		if m.Namespace.Agent == agent {
			out[m.Value] = fmt.Sprintf("v%d %s", m.Version, m.Status)
		}
	}
	return out
}

// checkHeld fails unless, for each attribute of want, agent's one active
// fact of Bob's in s holds its value.
func checkHeld(t *testing.T, e *engine.Engine, s engram.Scope, agent string, want map[string]string, whose string) {
	t.Helper()
	for attr, v := range want {
		fs := heldFacts(t, e, s, agent, attr)
		if len(fs) != 1 || !strings.Contains(fs[0].Value, v) {
			t.Errorf("%s %s: active %q, want one holding %q", whose, attr, values(fs), v)
		}
	}
}

// heldFacts returns agent's active facts of Bob's attribute attr in s.
func heldFacts(t *testing.T, e *engine.Engine, s engram.Scope, agent, attr string) []engram.Memory {
	t.Helper()
	p, err := e.ListMemories(ctx, s, engram.MemoryFilter{Limit: engram.MaxLimit,
		Metadata: map[string]any{engram.MetaFactSubject: "Bob", engram.MetaFactAttribute: attr}})
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(p.Memories, func(m engram.Memory) bool { return m.Namespace.Agent != agent })
}

func namespaces(ms []engram.Memory) []engram.Namespace {
	out := make([]engram.Namespace, len(ms))
	for i := range ms {
		out[i] = ms[i].Namespace
	}
	return out
}

// testFormerReach: what a former's operations may target. From Alice's
// second session, a SUPERSEDE of her first session's memory is applied
// and the new memory stored in the second session; an UPDATE of another
// user's memory, of an agent's memory of Alice's or of a memory of a
// session without a user fails as not found and stores nothing, and a
// session without a user reaches no other such session.
func testFormerReach(t *testing.T, open Open) {
	var next []engram.MemoryOp
	e := newEngine(t, open, engine.Options{Former: scriptedFormer{func(ms []engram.Memory, eps []engram.Episode) []engram.MemoryOp {
		if next == nil {
			return []engram.MemoryOp{{Op: engram.OpAdd, Memory: engram.Memory{Value: eps[0].Content, Sources: []string{eps[0].ID}}, Reason: "new"}}
		}
		return next
	}}})
	tea := sayNS(t, e, nsA, t0, "Alice", "I like green tea.").Memories[0]
	bobs := sayNS(t, e, nsB, t0, "Bob", "I like coffee.").Memories[0]
	coachs := sayNS(t, e, coachC1, t0, "Alice", "I like mate.").Memories[0]
	anons := sayNS(t, e, anonX1, t0, "Eve", "I like cocoa.").Memories[0]

	later := t0.Add(48 * time.Hour)
	next = []engram.MemoryOp{{Op: engram.OpSupersede, TargetID: tea.ID, Memory: engram.Memory{Value: "I like black tea now.", ValidFrom: &later}, Reason: "changed"}}
	res := sayNS(t, e, aliceS2, later, "Alice", "I like black tea now.")
	if len(res.Memories) != 2 || res.Memories[0].Status != engram.StatusSuperseded || res.Memories[1].Namespace != aliceS2 {
		t.Fatalf("supersede across sessions: %q", values(res.Memories))
	}
	for _, c := range []struct {
		from   engram.Namespace
		target engram.Memory
		whose  string
	}{
		{aliceS2, bobs, "another user's"},
		{aliceS2, coachs, "an agent's"},
		{aliceS2, anons, "a session without a user's"},
		{anonX2, anons, "another session without a user's"},
		{anonX2, res.Memories[1], "a user's, from a session without one,"},
	} {
		before := countEpisodes(t, e, engram.Scope{Org: "acme", Project: "p", User: c.from.User, Session: c.from.Session})
		next = []engram.MemoryOp{{Op: engram.OpAdd, Memory: engram.Memory{Value: "half"}}, {Op: engram.OpUpdate, TargetID: c.target.ID, Memory: engram.Memory{Value: "overwritten"}}}
		at := later.Add(time.Hour)
		_, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: c.from, Episodes: []engram.EpisodeInput{{Content: "x", OccurredAt: &at}}})
		if code(err) != engram.ENOTFOUND {
			t.Errorf("an update of %s memory from %+v: %v, want %s", c.whose, c.from, err, engram.ENOTFOUND)
		}
		if after := countEpisodes(t, e, engram.Scope{Org: "acme", Project: "p", User: c.from.User, Session: c.from.Session}); after != before {
			t.Errorf("an update of %s memory stored %d episodes", c.whose, after-before)
		}
		s := engram.ScopeOf(c.target.Namespace)
		if m, err := e.GetMemory(ctx, s, c.target.ID); err != nil || m.Version != c.target.Version || m.Value != c.target.Value {
			t.Errorf("%s memory after the refused update: %+v, %v", c.whose, m, err)
		}
	}
}

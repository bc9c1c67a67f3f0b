package enginetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/formation"
)

// say adds one turn of Alice's at event time at, formed by the default
// former.
func say(t *testing.T, e *engine.Engine, at time.Time, speaker, text string) *engram.AddEpisodesResult {
	t.Helper()
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA,
		Episodes: []engram.EpisodeInput{{Role: "user", Speaker: speaker, Content: text, OccurredAt: &at}}})
	if err != nil {
		t.Fatalf("add %q: %v", text, err)
	}
	return res
}

// facts lists the fact memories of an attribute in every status.
func facts(t *testing.T, e *engine.Engine, attr string, validAt *time.Time) []engram.Memory {
	t.Helper()
	p, err := e.ListMemories(ctx, scA, engram.MemoryFilter{ValidAt: validAt, Limit: engram.MaxLimit,
		Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded},
		Metadata: map[string]any{engram.MetaFactAttribute: attr}})
	if err != nil {
		t.Fatal(err)
	}
	return p.Memories
}

// lastVersion returns a memory's newest version.
func lastVersion(t *testing.T, e *engine.Engine, id string) engram.Version {
	t.Helper()
	vs, err := e.History(ctx, scA, id)
	if err != nil || len(vs) == 0 {
		t.Fatalf("history of %s: %v (%d versions)", id, err, len(vs))
	}
	return vs[len(vs)-1]
}

// turnsOf returns the memories, in any status, that cite the episode.
func turnsOf(t *testing.T, e *engine.Engine, episode string) []engram.Memory {
	t.Helper()
	p, err := e.ListMemories(ctx, scA, engram.MemoryFilter{Sources: []string{episode},
		Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted}})
	if err != nil {
		t.Fatal(err)
	}
	return p.Memories
}

// testKnowledgeUpdate: a newer statement of where one lives (and what one
// eats) supersedes the older fact at its event time; both turns stay;
// "where does Alice live?" finds the new place first; as-of reads still
// see the old one. In English, German and Spanish.
func testKnowledgeUpdate(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, before, after, question, oldCity, newCity string
	}{
		{"en", "I am vegetarian and I live in Berlin.", "I moved to Munich last month, and I started eating fish again.", "Where does Alice live?", "Berlin", "Munich"},
		{"de", "Ich bin Vegetarierin und ich wohne in Berlin.", "Ich bin letzten Monat nach München gezogen und ich esse wieder Fisch.", "Wo wohnt Alice?", "Berlin", "München"},
		{"es", "Soy vegetariana y vivo en Berlín.", "Me mudé a Múnich el mes pasado y volví a comer pescado.", "¿Dónde vive Alice?", "Berlín", "Múnich"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			say(t, e, t0, "Alice", "Good morning! How was your weekend?")
			first := say(t, e, t0.Add(time.Hour), "Alice", tc.before)
			later := t0.Add(40 * 24 * time.Hour)
			second := say(t, e, later, "Alice", tc.after)
			if second.Decisions[engram.OpSupersede] != 2 {
				t.Errorf("decisions = %v, want residence and diet superseded", second.Decisions)
			}
			fs := facts(t, e, "residence", nil)
			var old, cur *engram.Memory
			for i := range fs {
				switch fs[i].Status {
				case engram.StatusSuperseded:
					old = &fs[i]
				case engram.StatusActive:
					cur = &fs[i]
				}
			}
			if len(fs) != 2 || old == nil || cur == nil {
				t.Fatalf("residence facts = %v, want one superseded, one active", values(fs))
			}
			if !strings.Contains(old.Value, tc.oldCity) || !strings.Contains(cur.Value, tc.newCity) || old.SupersededBy != cur.ID {
				t.Errorf("old %q (superseded by %s), current %q %s", old.Value, old.SupersededBy, cur.Value, cur.ID)
			}
			if old.ValidTo == nil || !old.ValidTo.Equal(later) || cur.ValidFrom == nil || !cur.ValidFrom.Equal(later) {
				t.Errorf("old valid to %v, new valid from %v, want both %v", old.ValidTo, cur.ValidFrom, later)
			}
			if v := lastVersion(t, e, old.ID); v.Op != engram.OpSupersede || v.Actor != formation.ActorRules || !strings.Contains(v.Reason, tc.newCity) {
				t.Errorf("old fact's last version = %s by %q: %q", v.Op, v.Actor, v.Reason)
			}
			for _, ep := range []string{first.Episodes[0].ID, second.Episodes[0].ID} {
				for _, m := range turnsOf(t, e, ep) {
					if m.Kind == engram.KindEpisodic && m.Status != engram.StatusActive {
						t.Errorf("turn memory %q is %s, want active", m.Value, m.Status)
					}
				}
			}
			hits := search(t, e, engram.SearchRequest{Query: tc.question, K: 5}).Hits
			if len(hits) == 0 || !strings.Contains(hits[0].Memory.Value, tc.newCity) {
				t.Errorf("%q ranks %v, want %s first", tc.question, hitValues(hits), tc.newCity)
			}
			asOf := t0.Add(2 * time.Hour)
			if past := facts(t, e, "residence", &asOf); len(past) != 1 || !strings.Contains(past[0].Value, tc.oldCity) {
				t.Errorf("residence as of %v = %v, want the %s fact", asOf, values(past), tc.oldCity)
			}
			// A read as of a time sees what was current then, by default.
			then, err := e.ListMemories(ctx, scA, engram.MemoryFilter{ValidAt: &asOf, Metadata: map[string]any{engram.MetaFactAttribute: "residence"}})
			if err != nil || len(then.Memories) != 1 || then.Memories[0].ID != old.ID {
				t.Errorf("as-of list = %v, %v; want the %s fact", values(then.Memories), err, tc.oldCity)
			}
			past := search(t, e, engram.SearchRequest{Query: tc.question, Filter: engram.MemoryFilter{ValidAt: &asOf}}).Hits
			if !placed(past, old.ID) {
				t.Errorf("as-of search %q = %v, want the %s fact", tc.question, hitValues(past), tc.oldCity)
			}
			if diet := facts(t, e, "diet", nil); len(diet) != 2 {
				t.Errorf("diet facts = %v, want the old superseded by the new", values(diet))
			}
		})
	}
}

func values(ms []engram.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Status) + ": " + m.Value
	}
	return out
}

func hitValues(hs []engram.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Memory.Value
	}
	return out
}

// testNotAFact: what someone else does, a question, a plan of the past
// and a reminder state no fact of the speaker and forget nothing.
func testNotAFact(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	say(t, e, t0, "Alice", "I live in Berlin.")
	for i, text := range []string{
		"My sister lives in Rome.", "Meine Schwester wohnt in Rom.", "Mi hermana vive en Roma.",
		"Do you remember where I live?", "Weißt du noch, wo ich wohne?", "¿Recuerdas dónde vivo?",
		"Don't forget to buy milk!", "Vergiss nicht, Milch zu kaufen!", "No olvides comprar leche.",
		"I used to live in Paris.",
	} {
		res := say(t, e, t0.Add(time.Duration(i+1)*time.Hour), "Alice", text)
		if res.Decisions[engram.OpDelete] != 0 || res.Decisions[engram.OpSupersede] != 0 || res.Decisions[engram.OpConflict] != 0 {
			t.Errorf("%q decided %v, want only the turn added", text, res.Decisions)
		}
		if ms := turnsOf(t, e, res.Episodes[0].ID); len(ms) != 1 || ms[0].Status != engram.StatusActive {
			t.Errorf("%q formed %v, want its turn, active", text, values(ms))
		}
	}
	if fs := facts(t, e, "residence", nil); len(fs) != 1 || !strings.Contains(fs[0].Value, "Berlin") || fs[0].Status != engram.StatusActive {
		t.Errorf("residence facts = %v, want only Berlin, active", values(fs))
	}
}

// testForget: a request to forget soft-deletes the memories holding what
// it names, with the reason in their version, and is not remembered
// itself; what it does not name stays; a request that names nothing
// deletes nothing. In English, German and Spanish.
func testForget(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, fact, other, ask, vague, query string
	}{
		{"en", "I live in Berlin near the old harbour.", "I love hiking in the Alps.", "Please forget that I live in Berlin.", "Forget what I told you about it.", "Berlin harbour"},
		{"de", "Ich wohne in Berlin am alten Hafen.", "Ich wandere gern in den Alpen.", "Vergiss bitte, dass ich in Berlin wohne.", "Vergiss, was ich dir über das gesagt habe.", "Berlin Hafen"},
		{"es", "Vivo en Berlín cerca del puerto viejo.", "Me encanta caminar por los Alpes.", "Por favor, olvida que vivo en Berlín.", "Olvida lo que te dije sobre eso.", "Berlín puerto"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			said := say(t, e, t0, "Alice", tc.fact)
			replied := say(t, e, t0.Add(10*time.Second), "Bot", "Wow, how nice!")
			reply := turnsOf(t, e, replied.Episodes[0].ID)[0]
			if !strings.Contains(reply.Abstraction, "Berl") {
				t.Fatalf("the reply's abstraction %q lacks the turn before as context", reply.Abstraction)
			}
			kept := say(t, e, t0.Add(time.Minute), "Alice", tc.other)
			vague := say(t, e, t0.Add(2*time.Minute), "Alice", tc.vague)
			if vague.Decisions[engram.OpNoop] != 1 || vague.Decisions[engram.OpDelete] != 0 || len(vague.Memories) != 0 {
				t.Errorf("vague request decided %v, stored %d memories; want a NOOP and nothing else", vague.Decisions, len(vague.Memories))
			}
			ask := say(t, e, t0.Add(3*time.Minute), "Alice", tc.ask)
			if ask.Decisions[engram.OpDelete] == 0 {
				t.Errorf("request decided %v, want deletes", ask.Decisions)
			}
			for _, m := range turnsOf(t, e, said.Episodes[0].ID) {
				if m.Status != engram.StatusDeleted {
					t.Errorf("%q is %s, want deleted", m.Value, m.Status)
					continue
				}
				if v := lastVersion(t, e, m.ID); v.Op != engram.OpDelete || v.Actor != formation.ActorRules || !strings.Contains(v.Reason, "forgotten at the user's request") {
					t.Errorf("delete version of %q = %s by %q: %q", m.Value, v.Op, v.Actor, v.Reason)
				}
			}
			if r, err := e.GetMemory(ctx, scA, reply.ID); err != nil || r.Status != engram.StatusActive || strings.Contains(r.Abstraction, "Berl") {
				t.Errorf("the reply after the forgotten turn: %v, abstraction %q; want active, without it", err, r.Abstraction)
			}
			if ms := turnsOf(t, e, kept.Episodes[0].ID); len(ms) != 1 || ms[0].Status != engram.StatusActive {
				t.Errorf("unrelated turn = %v, want active", values(ms))
			}
			if ms := append(turnsOf(t, e, ask.Episodes[0].ID), turnsOf(t, e, vague.Episodes[0].ID)...); len(ms) != 0 {
				t.Errorf("the requests were remembered: %v", values(ms))
			}
			if hits := search(t, e, engram.SearchRequest{Query: tc.query}).Hits; slices.ContainsFunc(hits, func(h engram.Hit) bool { return strings.Contains(h.Memory.Value, "Berlin") }) {
				t.Errorf("search %q still finds %v", tc.query, hitValues(hits))
			}
			if n := countEpisodes(t, e, scA); n != 5 {
				t.Errorf("%d episodes stored, want all 5", n)
			}
		})
	}
}

// testMergeRepeat: a turn that repeats what the same party said before
// merges into that memory (a MERGE version, sources grow); another
// party's same words are their own memory.
func testMergeRepeat(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	for _, text := range []string{"I really love hiking in the Alps with my dog.", "Ich wandere sehr gern mit meinem Hund in den Alpen."} {
		first := say(t, e, t0, "Alice", text)
		again := say(t, e, t0.Add(24*time.Hour), "Alice", text+"!")
		if again.Decisions[engram.OpMerge] != 1 || again.Decisions[engram.OpAdd] != 0 {
			t.Errorf("repeat decided %v, want one MERGE", again.Decisions)
		}
		m := first.Memories[0]
		got, err := e.GetMemory(ctx, scA, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Sources) != 2 || got.Sources[1] != again.Episodes[0].ID || got.Value != text {
			t.Errorf("merged memory: sources %v, value %q", got.Sources, got.Value)
		}
		if v := lastVersion(t, e, m.ID); v.Op != engram.OpMerge || v.Actor != formation.ActorRules || v.Reason == "" {
			t.Errorf("merge version = %s by %q: %q", v.Op, v.Actor, v.Reason)
		}
		other := say(t, e, t0.Add(48*time.Hour), "Bob", text)
		if other.Decisions[engram.OpAdd] != 1 || other.Decisions[engram.OpMerge] != 0 {
			t.Errorf("Bob's same words decided %v, want an ADD", other.Decisions)
		}
	}
}

// testConflict: a fact that contradicts one that is not older (told out
// of order) is a conflict: both stay active, both are listed until one is
// kept; another user sees none of it; bad resolutions are refused.
func testConflict(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	say(t, e, t0.Add(30*24*time.Hour), "Alice", "I work at Siemens now.")
	res := say(t, e, t0, "Alice", "I work at Bosch.")
	if res.Decisions[engram.OpConflict] != 1 {
		t.Fatalf("decisions = %v, want a CONFLICT", res.Decisions)
	}
	cs, err := e.ListConflicts(ctx, scA)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || len(cs[0].Memories) != 2 {
		t.Fatalf("conflicts = %+v, want one of two memories", cs)
	}
	var siemens, bosch string
	for _, m := range cs[0].Memories {
		if m.Status != engram.StatusActive {
			t.Errorf("conflicting %q is %s", m.Value, m.Status)
		}
		if strings.Contains(m.Value, "Siemens") {
			siemens = m.ID
		} else {
			bosch = m.ID
		}
	}
	if other, err := e.ListConflicts(ctx, scB); err != nil || len(other) != 0 {
		t.Errorf("bob's conflicts = %v, %v; want none", other, err)
	}
	for _, bad := range []struct {
		s    engram.Scope
		id   string
		req  engram.ResolveConflictRequest
		code string
	}{
		{scA, cs[0].ID, engram.ResolveConflictRequest{Keep: engram.NewID()}, engram.EINVALID},
		{scA, cs[0].ID, engram.ResolveConflictRequest{Keep: siemens, Action: "merge"}, engram.EINVALID},
		{scA, engram.NewID(), engram.ResolveConflictRequest{Keep: siemens}, engram.ENOTFOUND},
		{scB, cs[0].ID, engram.ResolveConflictRequest{Keep: siemens}, engram.ENOTFOUND},
	} {
		if _, err := e.ResolveConflict(ctx, bad.s, bad.id, bad.req); code(err) != bad.code {
			t.Errorf("resolve %+v: %v, want %s", bad.req, err, bad.code)
		}
	}
	r, err := e.ResolveConflict(ctx, scA, cs[0].ID, engram.ResolveConflictRequest{Keep: siemens, Reason: "Siemens is current"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kept.ID != siemens || r.Other.ID != bosch || r.Other.Status != engram.StatusSuperseded || r.Other.SupersededBy != siemens {
		t.Errorf("resolution = kept %s, other %s %s by %s", r.Kept.ID, r.Other.ID, r.Other.Status, r.Other.SupersededBy)
	}
	if v := lastVersion(t, e, bosch); v.Op != engram.OpSupersede || v.Reason != "Siemens is current" {
		t.Errorf("resolved side's version = %s %q", v.Op, v.Reason)
	}
	if cs, _ := e.ListConflicts(ctx, scA); len(cs) != 0 {
		t.Errorf("conflicts after resolving = %+v", cs)
	}
}

// scriptedFormer answers each batch with the operations script makes of
// the scope's memories (listed newest first) and the episodes, as a
// language model's former would.
type scriptedFormer struct {
	script func(ms []engram.Memory, eps []engram.Episode) []engram.MemoryOp
}

// Needs reads the scope and names the former, as the LLM former does.
func (scriptedFormer) Needs() engram.FormNeeds {
	return engram.FormNeeds{Actor: "former:llm:test", ReadsScope: true}
}

func (f scriptedFormer) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	if req.View == nil {
		return nil, errors.New("formed without the view of the scope it asked for")
	}
	ms, _, err := req.View.ListMemories(ctx, engram.MemoryFilter{Limit: engram.MaxLimit})
	if err != nil {
		return nil, err
	}
	return f.script(ms, req.Episodes), nil
}

// testDecisionModel: the engine applies every operation a former decides
// on, each a version under the former's actor with its reason: MERGE
// (content and sources into the target), NOOP (nothing written, counted),
// DELETE (soft), SUPERSEDE at the new memory's event time, CONFLICT (both
// marked); an unknown operation stores nothing.
func testDecisionModel(t *testing.T, open Open) {
	var next []engram.MemoryOp
	e := newEngine(t, open, engine.Options{Former: scriptedFormer{func(ms []engram.Memory, eps []engram.Episode) []engram.MemoryOp {
		if next == nil {
			return []engram.MemoryOp{{Op: engram.OpAdd, Memory: engram.Memory{Value: eps[0].Content, Sources: []string{eps[0].ID}}, Reason: "new"}}
		}
		ops := next
		for i := range ops {
			ops[i].Memory.Sources = []string{eps[0].ID}
		}
		return ops
	}}})
	tea := say(t, e, t0, "Alice", "I like green tea.").Memories[0]
	coffee := say(t, e, t0.Add(time.Minute), "Alice", "I drink coffee at work.").Memories[0]

	next = []engram.MemoryOp{{Op: engram.OpMerge, TargetID: tea.ID, Memory: engram.Memory{Value: "I like green tea, sencha most."}, Reason: "same taste"}, {Op: engram.OpNoop, Reason: "nothing new"}}
	res := say(t, e, t0.Add(2*time.Minute), "Alice", "Sencha is my favourite green tea.")
	if res.Decisions[engram.OpMerge] != 1 || res.Decisions[engram.OpNoop] != 1 || len(res.Memories) != 1 {
		t.Errorf("merge+noop: decisions %v, %d memories", res.Decisions, len(res.Memories))
	}
	if m := res.Memories[0]; m.ID != tea.ID || m.Value != "I like green tea, sencha most." || len(m.Sources) != 2 {
		t.Errorf("merged = %s %q %v", m.ID, m.Value, m.Sources)
	}
	if v := lastVersion(t, e, tea.ID); v.Op != engram.OpMerge || v.Actor != "former:llm:test" || v.Reason != "same taste" {
		t.Errorf("merge version = %s %q %q", v.Op, v.Actor, v.Reason)
	}

	later := t0.Add(48 * time.Hour)
	next = []engram.MemoryOp{{Op: engram.OpSupersede, TargetID: coffee.ID, Memory: engram.Memory{Value: "I quit coffee.", ValidFrom: &later}, Reason: "quit"}}
	say(t, e, later, "Alice", "I quit coffee.")
	if old, _ := e.GetMemory(ctx, scA, coffee.ID); old.Status != engram.StatusSuperseded || old.ValidTo == nil || !old.ValidTo.Equal(later) {
		t.Errorf("superseded coffee = %s valid to %v, want superseded at %v", old.Status, old.ValidTo, later)
	}

	next = []engram.MemoryOp{{Op: engram.OpConflict, TargetID: tea.ID, Memory: engram.Memory{Value: "I dislike tea."}, Reason: "contradicts"}}
	res = say(t, e, later.Add(time.Minute), "Alice", "I dislike tea.")
	if len(res.Memories) != 2 || res.Memories[0].Metadata[engram.MetaConflict] != res.Memories[1].ID {
		t.Errorf("conflict memories = %v", values(res.Memories))
	}

	next = []engram.MemoryOp{{Op: engram.OpDelete, TargetID: tea.ID, Reason: "asked to forget"}}
	say(t, e, later.Add(2*time.Minute), "Alice", "forget it")
	if v := lastVersion(t, e, tea.ID); v.Op != engram.OpDelete || v.New.Status != engram.StatusDeleted || v.Reason != "asked to forget" {
		t.Errorf("delete version = %s %s %q", v.Op, v.New.Status, v.Reason)
	}

	before := countMemories(t, e, scA, engram.StatusActive, engram.StatusDeleted, engram.StatusSuperseded)
	next = []engram.MemoryOp{{Op: engram.OpAdd, Memory: engram.Memory{Value: "half"}}, {Op: "EXPLODE"}}
	at := later.Add(3 * time.Minute)
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: "x", OccurredAt: &at}}}); err == nil {
		t.Error("an unknown operation was accepted")
	}
	if after := countMemories(t, e, scA, engram.StatusActive, engram.StatusDeleted, engram.StatusSuperseded); after != before {
		t.Errorf("%d memories after a failed batch, want %d", after, before)
	}
}

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

func testAddEpisodesForms(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	res := mustAddEpisodes(t, e, nsA, "I adopted a beagle named Biscuit last week.", "We went hiking in the Alps.")
	if got, want := len(res.Episodes), 2; got != want {
		t.Fatalf("episodes = %d, want %d", got, want)
	}
	if got, want := len(res.Memories), 2; got != want {
		t.Fatalf("memories = %d, want %d", got, want)
	}
	m := res.Memories[0]
	if got, want := m.Kind, engram.KindEpisodic; got != want {
		t.Errorf("kind = %q, want %q", got, want)
	}
	if len(m.Sources) != 1 || m.Sources[0] != res.Episodes[0].ID {
		t.Errorf("sources = %v, want [%s]", m.Sources, res.Episodes[0].ID)
	}
	if m.ValidFrom == nil || !m.ValidFrom.Equal(t0) {
		t.Errorf("valid_from = %v, want %v", m.ValidFrom, t0)
	}
	if m.Version != 1 || m.Status != engram.StatusActive || m.Confidence != 1 {
		t.Errorf("version/status/confidence = %d/%s/%v", m.Version, m.Status, m.Confidence)
	}
	ep, err := e.GetEpisode(ctx, scA, res.Episodes[1].ID)
	if err != nil {
		t.Fatalf("get episode: %v", err)
	}
	if got, want := ep.Content, "We went hiking in the Alps."; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if !ep.OccurredAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("occurred_at = %v", ep.OccurredAt)
	}
	got, err := e.GetMemory(ctx, scA, m.ID)
	if err != nil {
		t.Fatalf("get memory: %v", err)
	}
	if got.Value != m.Value || got.Abstraction != m.Abstraction {
		t.Errorf("stored memory differs: %+v vs %+v", got, m)
	}
	if ids := searchIDs(t, e, scA, "beagle"); len(ids) != 1 || ids[0] != m.ID {
		t.Errorf("search beagle = %v, want [%s]", ids, m.ID)
	}
	// Without formation only episodes are stored.
	f := false
	res2, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Form: &f,
		Episodes: []engram.EpisodeInput{{Content: "no memory from me"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Memories) != 0 || countMemories(t, e, scA) != 2 {
		t.Errorf("form=false still formed memories")
	}
	audit, err := e.Audit(ctx, scA, engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, a := range audit.Entries {
		ops[a.Op]++
		// The client adds episodes; the former decides on memories.
		want := "test"
		if strings.HasPrefix(a.Op, "memory.") {
			want = formation.ActorRules
		}
		if a.Actor != want {
			t.Errorf("audit actor of %s = %q, want %s", a.Op, a.Actor, want)
		}
	}
	if ops["episode.add"] != 2 || ops["memory.add"] != 1 {
		t.Errorf("audit ops = %v", ops)
	}
}

func testAddEpisodesBadInput(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	ok := engram.EpisodeInput{Content: "fine"}
	bad := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	many := make([]engram.EpisodeInput, engram.MaxBatch+1)
	for i := range many {
		many[i] = ok
	}
	for _, tc := range []struct {
		name string
		req  engram.AddEpisodesRequest
		code string
		msg  string
	}{
		{"no org", engram.AddEpisodesRequest{Namespace: engram.Namespace{Project: "p"}, Episodes: []engram.EpisodeInput{ok}}, engram.EINVALID, "org is required"},
		{"no episodes", engram.AddEpisodesRequest{Namespace: nsA}, engram.EINVALID, "no episodes"},
		{"empty content later in batch", engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{ok, ok, {Content: ""}}}, engram.EINVALID, "episodes[2]: episode: content is required"},
		{"too long", engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: strings.Repeat("x", engram.MaxContentBytes+1)}}}, engram.EINVALID, "longer than the limit"},
		{"bad time", engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: "x", OccurredAt: &bad}}}, engram.EINVALID, "outside the years"},
		{"bad id", engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{ID: "nope", Content: "x"}}}, engram.EINVALID, "not a valid id"},
		{"dup id", engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{ID: "01JDQ0000000000000000000AA", Content: "x"}, {ID: "01JDQ0000000000000000000AA", Content: "y"}}}, engram.EINVALID, "repeats"},
		{"slash in user", engram.AddEpisodesRequest{Namespace: engram.Namespace{Org: "o", Project: "p", User: "a/b"}, Episodes: []engram.EpisodeInput{ok}}, engram.EINVALID, "may not contain"},
		{"too many", engram.AddEpisodesRequest{Namespace: nsA, Episodes: many}, engram.ETOOLARGE, "more than the limit"},
		{"bad modality", engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: "x", Modality: "smell"}}}, engram.EINVALID, "modality"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.AddEpisodes(ctx, tc.req)
			if got := code(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if !strings.Contains(engram.ErrorMessage(err), tc.msg) {
				t.Errorf("message %q does not contain %q", engram.ErrorMessage(err), tc.msg)
			}
		})
	}
	if n := countEpisodes(t, e, scA); n != 0 {
		t.Errorf("%d episodes stored after bad requests", n)
	}
	if n := countMemories(t, e, scA); n != 0 {
		t.Errorf("%d memories stored after bad requests", n)
	}
	// A duplicate id across requests is a conflict and the batch lands whole or not at all.
	id := engram.NewID()
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{ID: id, Content: "first"}}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: "new one"}, {ID: id, Content: "again"}}})
	if code(err) != engram.ECONFLICT {
		t.Fatalf("duplicate id: %v, want conflict", err)
	}
	if n := countEpisodes(t, e, scA); n != 1 {
		t.Errorf("episodes = %d after a failed batch, want 1", n)
	}
}

type badFormer struct{}

func (badFormer) Needs() engram.FormNeeds { return engram.FormNeeds{} }

func (badFormer) Form(_ context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	eps := req.Episodes
	// The second op is invalid: the store must not keep the episodes or the first memory.
	return []engram.MemoryOp{
		{Op: engram.OpAdd, Memory: engram.Memory{Value: eps[0].Content}},
		{Op: engram.OpAdd, Memory: engram.Memory{Value: eps[0].Content, Confidence: 7}},
	}, nil
}

type failingFormer struct{}

func (failingFormer) Needs() engram.FormNeeds { return engram.FormNeeds{} }

func (failingFormer) Form(context.Context, engram.FormRequest) ([]engram.MemoryOp, error) {
	return nil, errors.New("model unreachable")
}

func testFormerFailure(t *testing.T, open Open) {
	for _, f := range []engram.Former{badFormer{}, failingFormer{}} {
		e := newEngine(t, open, engine.Options{Former: f})
		if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{{Content: "hello world"}}}); err == nil {
			t.Fatalf("%T: want error", f)
		}
		if n := countEpisodes(t, e, scA); n != 0 {
			t.Errorf("%T: %d episodes kept after failed formation", f, n)
		}
		if n := countMemories(t, e, scA); n != 0 {
			t.Errorf("%T: %d memories kept after failed formation", f, n)
		}
		if ids := searchIDs(t, e, scA, "hello"); len(ids) != 0 {
			t.Errorf("%T: search finds %v after failed formation", f, ids)
		}
	}
}

func testAddMemoriesDirect(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	from := t0
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{
		Kind: engram.KindCore, Abstraction: "diet", Cues: []string{" vegetarian ", "Vegetarian", "", "food"},
		Value: "Alice is vegetarian.", Confidence: 0.9, ValidFrom: &from,
		Metadata: map[string]any{"source": "onboarding", "n": 3},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	if got, want := strings.Join(m.Cues, "|"), "vegetarian|food"; got != want {
		t.Errorf("cues = %q, want %q", got, want)
	}
	if m.Importance != 0.5 || m.Confidence != 0.9 || m.Kind != engram.KindCore {
		t.Errorf("defaults wrong: %+v", m)
	}
	got, err := e.GetMemory(ctx, scA, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata["source"] != "onboarding" {
		t.Errorf("metadata = %v", got.Metadata)
	}
	if n := countEpisodes(t, e, scA); n != 0 {
		t.Errorf("direct memories created %d episodes", n)
	}
	for _, bad := range []engram.Memory{
		{Value: ""}, {Value: "x", Kind: "dream"}, {Value: "x", Status: engram.StatusDeleted},
		{Value: "x", Confidence: 1.5}, {Value: "x", Sources: []string{"not-an-id"}},
	} {
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{Value: "good"}, bad}}); code(err) != engram.EINVALID {
			t.Errorf("bad memory %+v: err = %v, want invalid", bad, err)
		}
	}
	if n := countMemories(t, e, scA); n != 1 {
		t.Errorf("memories = %d after bad batches, want 1", n)
	}
}

// testTurnAtATime adds a conversation one turn per call, as a chat client
// does, and checks that its memories carry the same context, links and
// conversation as those of the same turns added in one call; a turn of
// another session in between is not taken for part of it.
func testTurnAtATime(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	turns := []struct{ who, text string }{
		{"Melanie", "What have you been researching lately?"},
		{"Caroline", "Adoption agencies! It has been a dream of mine."},
		{"Caroline", "Also pottery classes."},
		{"Melanie", "That is wonderful news."},
	}
	input := func(i int) engram.EpisodeInput {
		at := t0.Add(time.Duration(i) * time.Minute)
		return engram.EpisodeInput{Role: "user", Speaker: turns[i].who, Content: turns[i].text, OccurredAt: &at}
	}
	batchNS := engram.Namespace{Org: nsA.Org, Project: nsA.Project, User: "batch", Session: "s1"}
	all := make([]engram.EpisodeInput, len(turns))
	for i := range turns {
		all[i] = input(i)
	}
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: batchNS, Episodes: all}); err != nil {
		t.Fatal(err)
	}
	other := nsA
	other.Session = "s2"
	for i := range turns {
		if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{input(i)}}); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			at := t0.Add(90 * time.Second)
			if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: other, Episodes: []engram.EpisodeInput{
				{Role: "user", Speaker: "Dana", Content: "A line of another chat.", OccurredAt: &at}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	inOrder := func(s engram.Scope) []engram.Memory {
		p, err := e.ListMemories(ctx, s, engram.MemoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		ms := slices.DeleteFunc(p.Memories, func(m engram.Memory) bool { return m.Namespace.Session != "s1" })
		slices.SortFunc(ms, func(a, b engram.Memory) int { return a.ValidFrom.Compare(*b.ValidFrom) })
		return ms
	}
	got, want := inOrder(scA), inOrder(engram.ScopeOf(batchNS))
	if len(got) != len(turns) || len(want) != len(turns) {
		t.Fatalf("%d memories one turn at a time, %d in one call, want %d", len(got), len(want), len(turns))
	}
	pos := func(ms []engram.Memory) map[string]int {
		out := map[string]int{}
		for i, m := range ms {
			out[m.ID] = i
		}
		return out
	}
	gp, wp := pos(got), pos(want)
	for i := range got {
		if got[i].Abstraction != want[i].Abstraction {
			t.Errorf("turn %d abstraction\n one at a time %q\n one call      %q", i, got[i].Abstraction, want[i].Abstraction)
		}
		for _, k := range []string{"prev", "next", "conversation"} {
			g, gok := got[i].Metadata[k].(string)
			w, wok := want[i].Metadata[k].(string)
			if gok != wok || (gok && gp[g] != wp[w]) {
				t.Errorf("turn %d %s: one at a time %v, one call %v", i, k, got[i].Metadata[k], want[i].Metadata[k])
			}
		}
	}
	if strings.Contains(got[2].Abstraction, "another chat") {
		t.Errorf("a turn of another session became context: %q", got[2].Abstraction)
	}
	// The turn before each later one was updated once, with a reason.
	vs, err := e.History(ctx, scA, got[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || got[0].Version != 2 {
		t.Errorf("first turn has %d versions (version %d), want 2", len(vs), got[0].Version)
	}
}

// mergingFormer reads the scope: an episode whose text an active memory
// of the scope already holds updates that memory (its sources grow)
// instead of adding another; anything else is added. It records what it
// saw of the scope.
type mergingFormer struct{ seen *[]string }

func (mergingFormer) Needs() engram.FormNeeds { return engram.FormNeeds{ReadsScope: true} }

func (f mergingFormer) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	r, eps := req.View, req.Episodes
	if r == nil {
		return nil, errors.New("formed without the view of the scope it asked for")
	}
	ms, _, err := r.ListMemories(ctx, engram.MemoryFilter{Limit: engram.MaxLimit})
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		*f.seen = append(*f.seen, m.Value)
	}
	var ops []engram.MemoryOp
	for _, e := range eps {
		m := engram.Memory{Namespace: e.Namespace, Kind: engram.KindSemantic, Value: e.Content, Sources: []string{e.ID}}
		op := engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "new"}
		for _, old := range ms {
			if old.Value == e.Content {
				m.Sources = append(slices.Clone(old.Sources), e.ID)
				op = engram.MemoryOp{Op: engram.OpUpdate, TargetID: old.ID, Memory: m, Reason: "said again"}
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// testConsolidator: a former that asks to read the scope forms with a
// read view of the scope of the episodes' namespace, which holds none of
// another user's memories, and its updates of what the scope holds land
// as versions.
func testConsolidator(t *testing.T, open Open) {
	var seen []string
	e := newEngine(t, open, engine.Options{Former: mergingFormer{&seen}})
	add := func(ns engram.Namespace, text string) *engram.AddEpisodesResult {
		t.Helper()
		res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	add(nsB, "bob's secret is 1234")
	first := add(nsA, "I like tea")
	seen = nil
	again := add(nsA, "I like tea")
	if !slices.Equal(seen, []string{"I like tea"}) {
		t.Errorf("the former saw %q, want only alice's memory", seen)
	}
	if n := countMemories(t, e, scA); n != 1 {
		t.Errorf("%d memories after the same words twice, want 1", n)
	}
	m := again.Memories[0]
	if m.ID != first.Memories[0].ID || m.Version != 2 || len(m.Sources) != 2 {
		t.Errorf("merged memory = %s v%d sources %v, want %s v2 with two sources", m.ID, m.Version, m.Sources, first.Memories[0].ID)
	}
}

// slowFormer reads the scope and, between two reads of its scope, lets
// a write happen (as the seconds of a model call would); it records how
// many memories each read saw.
type slowFormer struct {
	between func()
	counts  *[]int
}

func (slowFormer) Needs() engram.FormNeeds { return engram.FormNeeds{ReadsScope: true} }

func (f slowFormer) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	r := req.View
	if r == nil {
		return nil, errors.New("formed without the view of the scope it asked for")
	}
	for i := range 2 {
		ms, _, err := r.ListMemories(ctx, engram.MemoryFilter{})
		if err != nil {
			return nil, err
		}
		*f.counts = append(*f.counts, len(ms))
		if i == 0 {
			f.between()
		}
	}
	return nil, nil
}

// testConsolidatorHoldsNoSnapshot: a former's reads are not one long read
// transaction. A memory written while the former works (between its two
// reads) is seen by its second read, and the write did not wait for it.
func testConsolidatorHoldsNoSnapshot(t *testing.T, open Open) {
	var counts []int
	var e *engine.Engine
	between := func() {
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA,
			Memories: []engram.Memory{{Value: "written while the former thinks"}}}); err != nil {
			t.Errorf("a write while the former works: %v", err)
		}
	}
	e = newEngine(t, open, engine.Options{Former: slowFormer{between, &counts}})
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA,
		Episodes: []engram.EpisodeInput{{Content: "Ich lese gern."}}}); err != nil {
		t.Fatal(err)
	}
	if len(counts) != 2 || counts[1] != counts[0]+1 {
		t.Errorf("the former's two reads saw %v memories, want the second to see the memory written in between", counts)
	}
}

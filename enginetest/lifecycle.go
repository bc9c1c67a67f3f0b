package enginetest

import (
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// clock is a settable engine clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func mustAdd(t *testing.T, e *engine.Engine, ns engram.Namespace, ms ...engram.Memory) []engram.Memory {
	t.Helper()
	out, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms})
	if err != nil {
		t.Fatalf("add memories: %v", err)
	}
	return out
}

func listIDs(t *testing.T, e *engine.Engine, s engram.Scope, f engram.MemoryFilter) map[string]engram.Status {
	t.Helper()
	f.Limit = engram.MaxLimit
	p, err := e.ListMemories(ctx, s, f)
	if err != nil {
		t.Fatalf("list memories: %v", err)
	}
	out := map[string]engram.Status{}
	for _, m := range p.Memories {
		out[m.ID] = m.Status
	}
	return out
}

func searchFilter(t *testing.T, e *engine.Engine, s engram.Scope, q string, f engram.MemoryFilter) map[string]engram.Status {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 20, Filter: f})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	out := map[string]engram.Status{}
	for _, h := range res.Hits {
		out[h.Memory.ID] = h.Memory.Status
	}
	return out
}

// testTTLReads: a memory whose expires_at has passed leaves every read of
// what is current at once, before any sweep: list, search (full text and
// the temporal channel's reads); get and a list or search asking for
// expired ones show it as expired; an as-of read at a time before it
// lapsed still sees it; export keeps it as stored.
func testTTLReads(t *testing.T, open Open) {
	clk := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Now: clk.now})
	short, long, none := t0.Add(time.Hour), t0.Add(10*time.Hour), engram.Memory{Value: "The parcel code for the locker is 4471."}
	ms := mustAdd(t, e, nsA,
		engram.Memory{Value: "The parking permit for the locker garage is valid today.", ExpiresAt: &short},
		engram.Memory{Value: "The locker in the gym is number 12 this week.", ExpiresAt: &long},
		none)
	lapsing, later, kept := ms[0].ID, ms[1].ID, ms[2].ID
	if got := listIDs(t, e, scA, engram.MemoryFilter{}); len(got) != 3 {
		t.Fatalf("before the TTL, list = %v, want all three", got)
	}

	clk.set(t0.Add(2 * time.Hour))
	if got := listIDs(t, e, scA, engram.MemoryFilter{}); len(got) != 2 || got[lapsing] != "" {
		t.Errorf("after the TTL, list = %v, want %s left out", got, lapsing)
	}
	if got := searchFilter(t, e, scA, "locker", engram.MemoryFilter{}); len(got) != 2 || got[lapsing] != "" {
		t.Errorf("after the TTL, search = %v, want %s left out", got, lapsing)
	}
	if got := countMemories(t, e, scA, engram.StatusExpired); got != 1 {
		t.Errorf("list of expired = %d memories, want 1", got)
	}
	expired := engram.MemoryFilter{Statuses: []engram.Status{engram.StatusExpired}}
	if got := listIDs(t, e, scA, expired); got[lapsing] != engram.StatusExpired || len(got) != 1 {
		t.Errorf("list of expired = %v, want %s as expired", got, lapsing)
	}
	if got := searchFilter(t, e, scA, "locker", expired); got[lapsing] != engram.StatusExpired || len(got) != 1 {
		t.Errorf("search of expired = %v, want %s as expired", got, lapsing)
	}
	both := engram.MemoryFilter{Statuses: []engram.Status{engram.StatusActive, engram.StatusExpired}}
	if got := listIDs(t, e, scA, both); len(got) != 3 || got[lapsing] != engram.StatusExpired || got[later] != engram.StatusActive {
		t.Errorf("list of active and expired = %v", got)
	}
	m, err := e.GetMemory(ctx, scA, lapsing)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != engram.StatusExpired || m.ExpiredAt == nil || !m.ExpiredAt.Equal(short) {
		t.Errorf("get after the TTL: status %s, expired at %v; want expired at %v", m.Status, m.ExpiredAt, short)
	}
	asOf := t0.Add(30 * time.Minute)
	if got := listIDs(t, e, scA, engram.MemoryFilter{ValidAt: &asOf}); got[lapsing] == "" {
		t.Errorf("as-of read before the TTL = %v, want %s in it", got, lapsing)
	}
	var exported *engram.Memory
	err = e.Export(ctx, scA, func(r engram.Record) error {
		if r.Type == engram.RecordMemory && r.Memory.ID == lapsing {
			exported = r.Memory
		}
		return nil
	})
	if err != nil || exported == nil || exported.ExpiresAt == nil || !exported.ExpiresAt.Equal(short) {
		t.Errorf("export of a lapsed memory = %+v, %v; want it with its expires_at", exported, err)
	}
	if got := listIDs(t, e, scA, engram.MemoryFilter{}); got[kept] == "" || got[later] == "" {
		t.Errorf("memories without a passed TTL left the list: %v", got)
	}
}

// testSweep: Sweep marks every lapsed memory of every tenant expired with
// a version by the sweeper, in batches; memories whose TTL has not passed
// stay; a second sweep finds nothing; an as-of read before the TTL still
// sees a swept memory.
func testSweep(t *testing.T, open Open) {
	clk := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Now: clk.now})
	past, future := t0.Add(time.Minute), t0.Add(24*time.Hour)
	other := engram.Namespace{Org: "globex", Project: "q", User: "carol"}
	a := mustAdd(t, e, nsA,
		engram.Memory{Value: "Temporary door code 1234.", ExpiresAt: &past},
		engram.Memory{Value: "Temporary door code 5678.", ExpiresAt: &past},
		engram.Memory{Value: "Door code for tomorrow 9999.", ExpiresAt: &future})
	b := mustAdd(t, e, other, engram.Memory{Value: "Código temporal de la puerta 4321.", ExpiresAt: &past})
	clk.set(t0.Add(time.Hour))

	n, err := e.Sweep(ctx, 2)
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3 marked", n, err)
	}
	for _, c := range []struct {
		s  engram.Scope
		id string
	}{{scA, a[0].ID}, {scA, a[1].ID}, {engram.ScopeOf(other), b[0].ID}} {
		vs, err := e.History(ctx, c.s, c.id)
		if err != nil {
			t.Fatal(err)
		}
		last := vs[len(vs)-1]
		if len(vs) != 2 || last.Op != engram.OpUpdate || last.Actor != engine.ActorSweeper || last.New.Status != engram.StatusExpired ||
			last.Old.Status != engram.StatusActive || last.New.ExpiredAt == nil || !last.New.ExpiredAt.Equal(past) || last.Reason == "" {
			t.Errorf("history of %s = %+v; want a second version by the sweeper marking it expired", c.id, last)
		}
	}
	if m, err := e.GetMemory(ctx, scA, a[2].ID); err != nil || m.Status != engram.StatusActive || m.Version != 1 {
		t.Errorf("memory with a future TTL after the sweep = %+v, %v", m, err)
	}
	if n, err := e.Sweep(ctx, 0); err != nil || n != 0 {
		t.Errorf("second Sweep = %d, %v; want 0", n, err)
	}
	if got := countMemories(t, e, scA, engram.StatusExpired); got != 2 {
		t.Errorf("expired after the sweep = %d, want 2", got)
	}
	asOf := t0.Add(30 * time.Second)
	if got := listIDs(t, e, scA, engram.MemoryFilter{ValidAt: &asOf}); len(got) != 3 {
		t.Errorf("as-of read before the TTL after the sweep = %v, want all three", got)
	}
}

// testSweeper: StartSweeper sweeps in the background until Close.
func testSweeper(t *testing.T, open Open) {
	past := time.Now().Add(-time.Minute)
	e := newEngine(t, open, engine.Options{})
	m := mustAdd(t, e, nsA, engram.Memory{Value: "Gone soon.", ExpiresAt: &past})[0]
	e.StartSweeper(10*time.Millisecond, 10)
	deadline := time.Now().Add(10 * time.Second)
	for {
		vs, err := e.History(ctx, scA, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) == 2 && vs[1].Actor == engine.ActorSweeper {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper did not mark the memory in 10s: %d versions", len(vs))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// testAccessDecay: a memory read often outranks an equal one nobody read;
// the request's decay switch turns that off; the boost fades with the
// half-life; and one tenant's reads never move another tenant's ranking,
// even for memories with the same ids.
func testAccessDecay(t *testing.T, open Open) {
	clk := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Now: clk.now, AccessFlush: time.Hour})
	text := "The spare key is under the blue flower pot."
	ms := mustAdd(t, e, nsA, engram.Memory{Value: text}, engram.Memory{Value: text})
	// Equal scores are ordered by id: the second is last until it is read.
	first, second := ms[0].ID, ms[1].ID
	if first > second {
		first, second = second, first
	}
	other := engram.Namespace{Org: "globex", Project: "q", User: "alice"}
	mustAdd(t, e, other, engram.Memory{ID: first, Value: text}, engram.Memory{ID: second, Value: text})
	scOther := engram.ScopeOf(other)
	top := func(s engram.Scope, decay *bool) string {
		t.Helper()
		res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: "where is the spare key", K: 2, Decay: decay})
		if err != nil || len(res.Hits) != 2 {
			t.Fatalf("search: %v, %v", res, err)
		}
		return res.Hits[0].Memory.ID
	}
	if got := top(scA, nil); got != first {
		t.Fatalf("before any read the top hit is %s, want %s (by id)", got, first)
	}
	if err := e.FlushAccess(ctx); err != nil { // the search's own hits count alike for both
		t.Fatal(err)
	}
	for range 5 {
		if _, err := e.GetMemory(ctx, scA, second); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.GetMemory(ctx, scA, second); m.AccessCount < 6 {
		t.Errorf("access count after 5 gets and a search = %d, want each read counted", m.AccessCount)
	}
	if got := top(scA, nil); got != second {
		t.Errorf("after five reads the top hit is %s, want the read one %s", got, second)
	}
	if got := top(scA, ptr(false)); got != first {
		t.Errorf(`with "decay": false the top hit is %s, want %s (by id)`, got, first)
	}
	if got := top(scOther, nil); got != first {
		t.Errorf("another tenant's top hit is %s, want %s: its ranking moved with tenant A's reads", got, first)
	}
	for _, id := range []string{first, second} {
		if m, err := e.GetMemory(ctx, scOther, id); err != nil || m.AccessCount > 1 {
			t.Errorf("other tenant's %s: access count %d, %v; want at most its own one search", id, m.AccessCount, err)
		}
	}
	boost := func() float64 {
		t.Helper()
		res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "where is the spare key", K: 2, Explain: true, Decay: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Memory.ID == second {
				return h.Factors[retrieval.FactorAccess]
			}
		}
		t.Fatalf("%s not found", second)
		return 0
	}
	now := boost()
	clk.set(t0.Add(retrieval.DefaultConfig().AccessHalfLife))
	oneHalfLife := boost()
	clk.set(t0.Add(20 * retrieval.DefaultConfig().AccessHalfLife))
	if faded := boost(); !(now > oneHalfLife && oneHalfLife > faded && faded < now/1000) {
		t.Errorf("access boost now %g, a half-life later %g, twenty later %g: want it to fade with the half-life", now, oneHalfLife, faded)
	}
}

// testLanguageSet: a memory added without a language gets one from its
// text, in the text's own language, which is kept as written.
func testLanguageSet(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	for _, c := range []struct{ text, want string }{
		{"Ich habe gestern meine Schwester in Hamburg besucht.", "de"},
		{"Mañana vamos a la playa con mis primos.", "es"},
		{"我下个月要搬到上海去工作。", "zh"},
		{"Я вчера ходил в кино с друзьями.", "ru"},
	} {
		m := mustAdd(t, e, nsA, engram.Memory{Value: c.text})[0]
		if m.Language != c.want || m.Value != c.text {
			t.Errorf("added %q: language %q, value %q; want %q and the text unchanged", c.text, m.Language, m.Value, c.want)
		}
	}
	m := mustAdd(t, e, nsA, engram.Memory{Value: "Ich wohne in Berlin.", Language: "de-CH"})[0]
	if m.Language != "de-CH" {
		t.Errorf("a language the client set became %q", m.Language)
	}
	if got := mustAdd(t, e, nsA, engram.Memory{Value: "42"})[0].Language; got != "" {
		t.Errorf("a text of no words got language %q", got)
	}
}

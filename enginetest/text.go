package enginetest

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
)

// RunText runs the tests of full-text search with the engine's in-memory
// index against stores made by open.
func RunText(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"StatsPerTenant", testTextStatsPerTenant},
		{"IndexFresh", testTextIndexFresh},
		{"Multilingual", testTextMultilingual},
		{"IndexFallback", testTextIndexFallback},
		{"IndexStoreOff", testTextIndexStoreOff},
		{"Shared", testTextShared},
		{"Eviction", testTextEviction},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// textScore is one hit of a full-text-only search: its id and the score
// the bm25 channel gave it.
type textScore struct {
	ID    string
	Score float64
}

// bm25Search runs a search with the bm25 channel alone and returns its
// hits with their channel scores.
func bm25Search(t *testing.T, e *engine.Engine, s engram.Scope, q string, f engram.MemoryFilter) []textScore {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 20, Filter: f, Explain: true, Channels: []string{engine.ChannelBM25}})
	if err != nil {
		t.Fatalf("bm25 search %q: %v", q, err)
	}
	out := make([]textScore, len(res.Hits))
	for i, h := range res.Hits {
		if len(h.Explain) != 1 || h.Explain[0].Channel != engine.ChannelBM25 || h.Explain[0].Score <= 0 {
			t.Fatalf("bm25 search %q: hit %s explained as %+v", q, h.Memory.ID, h.Explain)
		}
		out[i] = textScore{h.Memory.ID, h.Explain[0].Score}
	}
	return out
}

func scoreIDs(hs []textScore) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// testTextStatsPerTenant: through the real HTTP server, tenant A's search
// results and their explained scores are bit for bit the same before and
// after another tenant, and another user of A's project, write many
// memories with the same words. With statistics shared across tenants
// (document counts, frequencies, lengths) they move, and a tenant could
// learn what another stored by watching its own scores.
func testTextStatsPerTenant(t *testing.T, open Open) {
	// A fixed clock, so that recency does not move between the searches.
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	e := newEngine(t, open, engine.Options{AccessFlush: time.Hour, Now: func() time.Time { return now }})
	srv := httptest.NewServer(engramhttp.NewServer(e, engramhttp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	c := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Actor: "tester"})

	a := engram.Namespace{Org: "alpha", Project: "p", User: "u"}
	add := func(ns engram.Namespace, values ...string) {
		t.Helper()
		ms := make([]engram.Memory, len(values))
		for i, v := range values {
			ms[i] = engram.Memory{Kind: engram.KindSemantic, Value: v}
		}
		if _, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms}); err != nil {
			t.Fatal(err)
		}
	}
	add(a, "Anna plays the violin in a youth orchestra.", "Anna's violin teacher lives in Vienna.",
		"The orchestra rehearses on Tuesdays.", "She bought a new bow for her violin.", "Vienna is cold in winter.")
	searches := func() string {
		t.Helper()
		var out []any
		for _, req := range []engram.SearchRequest{
			{Scope: engram.ScopeOf(a), Query: "violin orchestra in Vienna", Explain: true},
			{Scope: engram.ScopeOf(a), Query: "violin orchestra in Vienna", Explain: true, Channels: []string{engine.ChannelBM25}},
		} {
			res, err := c.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) < 3 || len(res.Hits[0].Explain) == 0 || res.Hits[0].Explain[0].Score <= 0 {
				t.Fatalf("search %+v found %s; the test would prove nothing", req, mustJSON(t, res))
			}
			out = append(out, res.Hits)
		}
		return mustJSON(t, out)
	}
	before := searches()
	for i := range 20 {
		var vs []string
		for j := range 10 {
			vs = append(vs, fmt.Sprintf("violin violin orchestra %d in Vienna, note %d", i, j))
		}
		add(engram.Namespace{Org: "beta", Project: "p", User: "u"}, vs...)
		if i%4 == 0 {
			add(engram.Namespace{Org: "alpha", Project: "p", User: "other"}, vs...)
		}
	}
	if after := searches(); after != before {
		t.Errorf("A's results changed when others wrote:\nbefore %s\nafter  %s", before, after)
	}
}

// testTextIndexFresh: the full-text search of one engine sees every kind
// of write another engine makes to the same store (add, update,
// supersede, soft and hard delete, scope purge), and both engines score
// alike, statistics included.
func testTextIndexFresh(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	es := enginesOn(t, st, engine.Options{}, engine.Options{})
	a, b := es[0], es[1]
	check := func(step, q string, f engram.MemoryFilter, want ...string) {
		t.Helper()
		got := bm25Search(t, b, scA, q, f)
		if ids := scoreIDs(got); !sameSet(ids, want) {
			t.Errorf("after %s, b's search %q = %v, want %v", step, q, ids, want)
		}
		if mine := bm25Search(t, a, scA, q, f); !slices.Equal(mine, got) {
			t.Errorf("after %s, a's search %q = %v, b's = %v", step, q, mine, got)
		}
	}
	m1 := mustAddMemory(t, a, nsA, "The lighthouse keeper paints seashells.")
	m2 := mustAddMemory(t, a, nsA, "A lighthouse stands on the northern cliff.")
	mustAddMemory(t, a, nsB, "Bob's lighthouse is elsewhere.")
	check("two adds", "lighthouse", engram.MemoryFilter{}, m1.ID, m2.ID) // b loads its index now
	m3 := mustAddMemory(t, a, nsA, "Seashells collected at dawn.")
	check("an add", "seashells", engram.MemoryFilter{}, m1.ID, m3.ID)
	if _, err := a.UpdateMemory(ctx, scA, m1.ID, engram.MemoryPatch{Value: ptr("The keeper paints driftwood.")}); err != nil {
		t.Fatal(err)
	}
	check("an update", "seashells", engram.MemoryFilter{}, m3.ID)
	check("an update", "driftwood", engram.MemoryFilter{}, m1.ID)
	sup, err := a.SupersedeMemory(ctx, scA, m2.ID, engram.SupersedeRequest{New: engram.Memory{Value: "The lighthouse was moved inland."}})
	if err != nil {
		t.Fatal(err)
	}
	check("a supersede", "lighthouse", engram.MemoryFilter{}, sup.New.ID)
	check("a supersede", "lighthouse", engram.MemoryFilter{Statuses: []engram.Status{engram.StatusSuperseded}}, m2.ID)
	if err := a.DeleteMemory(ctx, scA, m3.ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("a soft delete", "seashells", engram.MemoryFilter{})
	check("a soft delete", "seashells", engram.MemoryFilter{Statuses: []engram.Status{engram.StatusDeleted}}, m3.ID)
	if err := a.DeleteMemory(ctx, scA, m3.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	check("a hard delete", "seashells", engram.MemoryFilter{Statuses: []engram.Status{engram.StatusDeleted}})
	if _, err := a.DeleteScope(ctx, scA); err != nil {
		t.Fatal(err)
	}
	check("a scope purge", "driftwood lighthouse", engram.MemoryFilter{Statuses: allStatuses})
	if got := bm25Search(t, b, scB, "lighthouse", engram.MemoryFilter{}); len(got) != 1 {
		t.Errorf("after A's purge, B's search = %v, want B's one memory", got)
	}
}

var allStatuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// testTextMultilingual: German, Spanish and Chinese questions find their
// memories through the full-text channel.
func testTextMultilingual(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	add := func(value, lang string) string {
		t.Helper()
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{Kind: engram.KindSemantic, Value: value, Language: lang}}})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0].ID
	}
	de := add("Meine Schwester wohnt seit März in München.", "de")
	es := add("Mi hermano trabaja en un hospital de Córdoba.", "es")
	zh := add("我的妹妹在上海的一家银行工作。", "zh")
	add("The weather was nice on the weekend.", "en")
	add("We talked about music and films.", "en")
	for _, c := range []struct{ q, want string }{
		{"Wo wohnt meine Schwester?", de},
		{"¿En qué hospital trabaja mi hermano?", es},
		{"cordoba", es},
		{"我妹妹在哪里工作？", zh},
		{"上海", zh},
	} {
		res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: c.q, K: 3, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Memory.ID != c.want ||
			!slices.ContainsFunc(res.Hits[0].Explain, func(h engram.ChannelHit) bool { return h.Channel == engine.ChannelBM25 }) {
			t.Errorf("search %q = %s, want %s first, found by bm25", c.q, mustJSON(t, res.Hits), c.want)
		}
	}
}

// testTextIndexFallback: a namespace with more memories than
// Options.TextIndexLimit is searched with the store's index, exactly as an
// engine that never uses the in-memory one searches it.
func testTextIndexFallback(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	es := enginesOn(t, st, engine.Options{TextIndexLimit: 3}, engine.Options{TextIndexLimit: -1})
	small, store := es[0], es[1]
	mustAddMemory(t, small, nsA, "red apples and green pears")
	mustAddMemory(t, small, nsA, "apples in the kitchen")
	if got := bm25Search(t, small, scA, "red apples", engram.MemoryFilter{}); len(got) != 2 {
		t.Fatalf("below its limit, search = %v, want both memories", got)
	}
	mustAddMemory(t, small, nsA, "pears are sweet")
	mustAddMemory(t, small, nsA, "a red car")
	got := bm25Search(t, small, scA, "red apples", engram.MemoryFilter{})
	want := bm25Search(t, store, scA, "red apples", engram.MemoryFilter{})
	if len(got) != 3 || !slices.Equal(got, want) {
		t.Errorf("over its limit, search = %v; want the store's %v", got, want)
	}
}

// testTextIndexStoreOff: when the store's full-text index is turned off
// (engram.Store's SetFullTextIndexed), a namespace over Options.TextIndexLimit is
// searched with the in-memory index after all, scores and all as an
// engine without the limit finds them: at once in an engine that had
// given it to the store, as it grows, and after a restart.
func testTextIndexStoreOff(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	es := enginesOn(t, st, engine.Options{TextIndexLimit: 3}, engine.Options{})
	small, free := es[0], es[1]
	for _, v := range []string{"red apples and green pears", "apples in the kitchen", "pears are sweet", "a red car"} {
		mustAddMemory(t, small, nsA, v)
	}
	same := func(e *engine.Engine, when string, n int) {
		t.Helper()
		got := bm25Search(t, e, scA, "red apples", engram.MemoryFilter{})
		want := bm25Search(t, free, scA, "red apples", engram.MemoryFilter{})
		if len(got) != n || !slices.Equal(got, want) {
			t.Errorf("%s: search = %v; want the in-memory index's %v", when, got, want)
		}
	}
	bm25Search(t, small, scA, "red apples", engram.MemoryFilter{}) // over the limit: the store's index serves
	if err := st.SetFullTextIndexed(ctx, false); err != nil {
		t.Fatal(err)
	}
	same(small, "store index turned off", 3)
	mustAddMemory(t, small, nsA, "apples on the red table")
	same(small, "grown further", 4)

	same(enginesOn(t, st, engine.Options{TextIndexLimit: 3})[0], "after a restart", 4)
}

// enginesOn opens an engine over st for each of opts, closed when the
// test ends.
func enginesOn(t *testing.T, st engram.Store, opts ...engine.Options) []*engine.Engine {
	t.Helper()
	es := make([]*engine.Engine, len(opts))
	for i, o := range opts {
		e, err := engine.New(ctx, st, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es[i] = e
	}
	return es
}

// testTextShared: with IncludeShared a user's full-text search also finds
// the project's shared memories (user, agent and session empty), and
// without it, or from another project, it does not.
func testTextShared(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	shared := mustAddMemory(t, e, engram.Namespace{Org: nsA.Org, Project: nsA.Project}, "The office kettle is broken.")
	mustAddMemory(t, e, engram.Namespace{Org: nsA.Org, Project: nsA.Project, Agent: "bot"}, "The agent's kettle notes.")
	mustAddMemory(t, e, engram.Namespace{Org: nsA.Org, Project: "other"}, "Another project's kettle.")
	own := mustAddMemory(t, e, nsA, "Alice bought a new kettle.")
	if got := scoreIDs(bm25Search(t, e, scA, "kettle", engram.MemoryFilter{})); !sameSet(got, []string{own.ID}) {
		t.Errorf("without IncludeShared = %v, want only %s", got, own.ID)
	}
	withShared := scA
	withShared.IncludeShared = true
	if got := scoreIDs(bm25Search(t, e, withShared, "kettle", engram.MemoryFilter{})); !sameSet(got, []string{own.ID, shared.ID}) {
		t.Errorf("with IncludeShared = %v, want %s and %s", got, own.ID, shared.ID)
	}
}

// testTextEviction: an engine whose text indexes are bounded to one byte,
// so that every search drops the others' and loads its own again, finds
// exactly what an unbounded engine on the same store finds, scores
// included, while tenants and users that share words write in turn; and a
// search never finds another tenant's or user's memories, not even by
// words only they wrote.
func testTextEviction(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	es := enginesOn(t, st, engine.Options{TextIndexBytes: 1}, engine.Options{TextIndexBytes: -1})
	tiny, free := es[0], es[1]
	nss := []engram.Namespace{
		{Org: "alpha", Project: "p", User: "u"}, {Org: "alpha", Project: "p", User: "v"},
		{Org: "beta", Project: "p", User: "u"}, {Org: "alpha", Project: "q", User: "u"},
	}
	texts := []string{"The garden %s has roses and a pond.", "Der Garten %s hat Rosen.", "El jardín %s tiene rosas.", "花园%s里有玫瑰。"}
	own := make([]map[string]bool, len(nss))
	for round := range 4 {
		for i, ns := range nss {
			writer := []*engine.Engine{tiny, free}[(round+i)%2]
			m := mustAddMemory(t, writer, ns, fmt.Sprintf(texts[round], fmt.Sprintf("secret%d", i)))
			if own[i] == nil {
				own[i] = map[string]bool{}
			}
			own[i][m.ID] = true
		}
		for i, ns := range nss {
			sc := engram.ScopeOf(ns)
			for j := range nss {
				q := fmt.Sprintf("garden Garten jardín 花园 roses secret%d", j)
				got := bm25Search(t, tiny, sc, q, engram.MemoryFilter{})
				if want := bm25Search(t, free, sc, q, engram.MemoryFilter{}); !slices.Equal(got, want) {
					t.Errorf("round %d, %v searching %q: bounded = %v, unbounded = %v", round, ns, q, got, want)
				}
				if len(got) != round+1 {
					t.Errorf("round %d, %v searching %q: %d hits, want its %d memories", round, ns, q, len(got), round+1)
				}
				for _, h := range got {
					if !own[i][h.ID] {
						t.Errorf("round %d, %v searching %q found %s, not its own", round, ns, q, h.ID)
					}
				}
			}
		}
	}
}

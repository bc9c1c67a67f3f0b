package enginetest

import (
	"context"
	"fmt"
	"github.com/engramhq/engram/retrieval"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// BagEmbedder is a deterministic test embedder: a hashed bag of lower-cased
// words, L2-normalised, so texts sharing words have a positive cosine.
type BagEmbedder struct {
	ID    string // Name(); default "bag"
	D     int    // Dim(); default 64
	Calls atomic.Int64
	Texts atomic.Int64
}

// Name implements engram.Embedder.
func (b *BagEmbedder) Name() string {
	if b.ID == "" {
		return "bag"
	}
	return b.ID
}

// Dim implements engram.Embedder.
func (b *BagEmbedder) Dim() int {
	if b.D == 0 {
		return 64
	}
	return b.D
}

// Embed implements engram.Embedder.
func (b *BagEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	b.Calls.Add(1)
	b.Texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, b.Dim())
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
		}) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[int(h.Sum32())%len(v)]++
		}
		v[len(v)-1] += 0.01 // no zero vector for an empty text
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		n := float32(1 / math.Sqrt(ss))
		for j := range v {
			v[j] *= n
		}
		out[i] = v
	}
	return out, nil
}

func denseIDs(t *testing.T, e *engine.Engine, s engram.Scope, q string) []string {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 5, Channels: []string{engine.ChannelDense}, Explain: true})
	if err != nil {
		t.Fatalf("dense search %q: %v", q, err)
	}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		if len(h.Explain) != 1 || h.Explain[0].Channel != engine.ChannelDense {
			t.Errorf("dense-only hit explained as %+v", h.Explain)
		}
		// Only hits that share a word: the bag embedder gives unrelated texts a
		// cosine near 0.
		if h.Explain[0].Score > 0.2 {
			ids = append(ids, h.Memory.ID)
		}
	}
	return ids
}

func testDenseLifecycle(t *testing.T, open Open) {
	emb := &BagEmbedder{}
	e := newEngine(t, open, engine.Options{Embedder: emb})
	m := mustAddMemory(t, e, nsA, "Alice keeps a beagle called Biscuit.")
	if ids := denseIDs(t, e, scA, "beagle"); len(ids) != 1 || ids[0] != m.ID {
		t.Fatalf("dense beagle = %v, want [%s]", ids, m.ID)
	}
	if _, err := e.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Value: ptr("Alice keeps a parrot called Kiwi.")}); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, e, scA, "beagle biscuit"); len(ids) != 0 {
		t.Errorf("dense still finds the old text after update: %v", ids)
	}
	if ids := denseIDs(t, e, scA, "parrot kiwi"); len(ids) != 1 {
		t.Errorf("dense misses the updated text: %v", ids)
	}
	if err := e.DeleteMemory(ctx, scA, m.ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, e, scA, "parrot kiwi"); len(ids) != 0 {
		t.Errorf("dense finds a soft-deleted memory: %v", ids)
	}
	if _, err := e.RestoreMemory(ctx, scA, m.ID, ""); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, e, scA, "parrot kiwi"); len(ids) != 1 {
		t.Errorf("dense misses a restored memory: %v", ids)
	}
	r, err := e.SupersedeMemory(ctx, scA, m.ID, engram.SupersedeRequest{New: engram.Memory{Value: "Alice now keeps a cat named Miso."}})
	if err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, e, scA, "parrot kiwi"); len(ids) != 0 {
		t.Errorf("dense finds a superseded memory: %v", ids)
	}
	if ids := denseIDs(t, e, scA, "cat miso"); len(ids) != 1 || ids[0] != r.New.ID {
		t.Errorf("dense misses the superseding memory: %v", ids)
	}
	if err := e.DeleteMemory(ctx, scA, r.New.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, e, scA, "cat miso"); len(ids) != 0 {
		t.Errorf("dense finds a hard-deleted memory: %v", ids)
	}
	// Another user, another tenant: nothing, even by dense similarity.
	mustAddMemory(t, e, nsA, "Alice's secret recipe uses saffron.")
	for _, s := range []engram.Scope{scB, {Org: "other", Project: "p", User: "alice"}, {Org: "acme", Project: "p", User: "alice", Session: "zz"}} {
		if ids := denseIDs(t, e, s, "saffron recipe"); len(ids) != 0 {
			t.Errorf("scope %+v: dense leaks %v", s, ids)
		}
	}
	// Filters apply to dense hits too.
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "saffron", Channels: []string{engine.ChannelDense},
		Filter: engram.MemoryFilter{Kinds: []engram.Kind{engram.KindProcedural}}})
	if err != nil || len(res.Hits) != 0 {
		t.Errorf("kind filter ignored by dense: %d hits, %v", len(res.Hits), err)
	}
}

func testDenseFusionAndReload(t *testing.T, open Open) {
	emb := &BagEmbedder{}
	st := open(t)
	e, err := engine.New(ctx, st, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	res := mustAddEpisodes(t, e, nsA, "We adopted a beagle puppy.", "The weather was lovely in Lisbon.")
	shared := mustAddMemory(t, e, engram.Namespace{Org: "acme", Project: "p"}, "Company beagle policy: dogs welcome on Fridays.")
	got, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "beagle", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hits) == 0 || got.Hits[0].Memory.ID != res.Memories[0].ID {
		t.Fatalf("fused search top hit = %+v", got.Hits)
	}
	channels := map[string]bool{}
	for _, c := range got.Hits[0].Explain {
		channels[c.Channel] = true
	}
	if !channels[engine.ChannelBM25] || !channels[engine.ChannelDense] {
		t.Errorf("top hit found by %v, want bm25 and dense", channels)
	}
	withShared := scA
	withShared.IncludeShared = true
	if ids := denseIDs(t, e, withShared, "beagle policy fridays"); !contains(ids, shared.ID) {
		t.Errorf("include_shared dense = %v, want the shared memory", ids)
	}
	if ids := denseIDs(t, e, scA, "beagle policy fridays"); contains(ids, shared.ID) {
		t.Errorf("shared memory found without include_shared")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// A new engine on the same store rebuilds its index from stored vectors:
	// nothing is embedded again except the query.
	emb2 := &BagEmbedder{}
	e2, err := engine.New(ctx, st, engine.Options{Embedder: emb2})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	defer st.Close()
	if ids := denseIDs(t, e2, scA, "lisbon weather"); len(ids) != 1 || ids[0] != res.Memories[1].ID {
		t.Errorf("after reopen dense = %v", ids)
	}
	if n := emb2.Texts.Load(); n != 1 {
		t.Errorf("reopen embedded %d texts, want only the query", n)
	}
	// Another embedder is refused with a sentence naming both.
	_, err = engine.New(ctx, st, engine.Options{Embedder: &BagEmbedder{ID: "other", D: 32}})
	if code(err) != engram.EMISMATCH || !strings.Contains(engram.ErrorMessage(err), "bag (64 dimensions)") || !strings.Contains(engram.ErrorMessage(err), "reembed") {
		t.Errorf("other embedder: %v", err)
	}
	if _, err := engine.New(ctx, st, engine.Options{}); code(err) != engram.EMISMATCH {
		t.Errorf("no embedder on a store with vectors: %v", err)
	}
}

// The dense channel embeds the query in several phrasings and, for a
// comparison, each occasion it names on its own, and ranks a memory by its
// best cosine to any of them: the two occasions, each close to one part
// only, rank above lines that echo the question's wording.
func testDenseViewsAndParts(t *testing.T, open Open) {
	emb := &BagEmbedder{}
	st := open(t)
	defer st.Close()
	e, err := engine.New(ctx, st, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tomatoes := mustAddMemory(t, e, nsA, "The tomatoes!")
	marigolds := mustAddMemory(t, e, nsA, "The marigolds!")
	for _, v := range []string{
		"Which seeds were started first this year? Seeds were started early.",
		"Were the seeds started first or last? Which were started first?",
		"Seeds were started, first ones first, which is how seeds were started.",
	} {
		mustAddMemory(t, e, nsA, v)
	}
	emb.Texts.Store(0)
	q := "Which seeds were started first, the tomatoes or the marigolds?"
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: q, K: 5, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	// Views: the stripped question and the question as typed; parts: the
	// two occasions.
	if n := emb.Texts.Load(); n != 4 {
		t.Errorf("the comparison embedded %d texts, want 4 (two views, two parts)", n)
	}
	dense := map[string]int{}
	for _, h := range res.Hits {
		for _, c := range h.Explain {
			if c.Channel == engine.ChannelDense {
				dense[h.Memory.ID] = c.Rank
			}
		}
	}
	for _, m := range []engram.Memory{tomatoes, marigolds} {
		if r := dense[m.ID]; r == 0 || r > 2 {
			t.Errorf("dense rank of %q = %d, want 1 or 2 (ranks %v)", m.Value, r, dense)
		}
	}
}

func testChannels(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	mustAddMemory(t, e, nsA, "plain text")
	for _, ch := range [][]string{{"dense"}, {"bm25", "nope"}} {
		_, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "plain", Channels: ch})
		if code(err) != engram.EINVALID {
			t.Errorf("channels %v without embedder: %v, want invalid", ch, err)
		}
	}
	if res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "plain", Channels: []string{"bm25"}}); err != nil || len(res.Hits) != 1 {
		t.Errorf("bm25 channel: %v %v", res, err)
	}
}

// testDenseAcrossEngines runs two engines over one store, as two servers
// over one database: what one writes, the other's dense index reflects at
// once, without either reloading.
func testDenseAcrossEngines(t *testing.T, open Open) {
	st := open(t)
	t.Cleanup(func() { st.Close() })
	a, err := engine.New(ctx, st, engine.Options{Embedder: &BagEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := engine.New(ctx, st, engine.Options{Embedder: &BagEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mustAddMemory(t, a, nsA, "warm up the index")
	denseIDs(t, b, scA, "warm") // b loads its index now
	m := mustAddMemory(t, a, nsA, "Alice collects vintage typewriters.")
	if ids := denseIDs(t, b, scA, "vintage typewriters"); len(ids) != 1 || ids[0] != m.ID {
		t.Fatalf("b does not see a's new memory: %v", ids)
	}
	if _, err := a.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Value: ptr("Alice collects antique clocks.")}); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, b, scA, "vintage typewriters"); len(ids) != 0 {
		t.Errorf("b still finds the old text: %v", ids)
	}
	if ids := denseIDs(t, b, scA, "antique clocks"); len(ids) != 1 {
		t.Errorf("b misses the update: %v", ids)
	}
	if err := a.DeleteMemory(ctx, scA, m.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, b, scA, "antique clocks"); len(ids) != 0 {
		t.Errorf("b finds a memory a deleted: %v", ids)
	}
	if _, err := a.DeleteScope(ctx, scA); err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, b, scA, "warm up the index"); len(ids) != 0 {
		t.Errorf("b finds memories of a purged scope: %v", ids)
	}
}

// englishBag is a BagEmbedder that declares it covers English only.
type englishBag struct{ BagEmbedder }

func (*englishBag) Languages() []string { return []string{"en"} }

// testDenseFilterAndLanguage: the dense channel keeps to the caller's ids
// filter, and its verdict on a memory in a language its embedder does not
// cover weighs less than on one it covers.
func testDenseFilterAndLanguage(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: &englishBag{}})
	add := func(value, lang string) string {
		t.Helper()
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{Kind: engram.KindSemantic, Value: value, Language: lang}}})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0].ID
	}
	add("kiwi mango papaya", "en")
	b := add("kiwi mango papaya guava", "en")
	res := search(t, e, engram.SearchRequest{Query: "kiwi mango papaya", Channels: []string{engine.ChannelDense}, Filter: engram.MemoryFilter{IDs: []string{b}}})
	if got := hitIDs(res); len(got) != 1 || got[0] != b {
		t.Errorf("dense with an ids filter of %s = %v", b, got)
	}

	// The same text in two languages: the channels agree on both, but the
	// dense verdict on the one its embedder does not cover weighs less.
	for i := range 12 {
		add(fmt.Sprintf("plum number %d", i), "en")
	}
	foreign := add("zebu yak ox", "de")
	covered := add("zebu yak ox", "en")
	res = search(t, e, engram.SearchRequest{Query: "zebu yak", K: 3, Explain: true})
	fused := map[string]float64{}
	for _, h := range res.Hits {
		fused[h.Memory.ID] = h.Factors[retrieval.FactorFused]
	}
	if !(fused[covered] > fused[foreign]) || hitIDs(res)[0] != covered {
		t.Errorf("fused %v, hits %v: want %s (en) above %s (de)", fused, hitIDs(res), covered, foreign)
	}
}

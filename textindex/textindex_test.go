package textindex_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/textindex"
)

type attr struct{ group int }

func TestTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Café au LAIT", "cafe au lait"},
		{"Straße, Grüße!", "straße gruße"},
		{"año niño", "ano nino"},
		{"我住在東京都", "我住 住在 在東 東京 京都"},
		{"がっこう", "がっ っこ こう"},
		{"alice@example.com v1.2", "alice example com v1 2"},
	} {
		if got := strings.Join(textindex.Tokens(c.in), " "); got != c.want {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func ids(hs []textindex.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestSearchRanks checks what BM25 rewards: more of the query's terms, a
// rarer term, a term in the abstraction over the value, a shorter text.
func TestSearchRanks(t *testing.T) {
	x := textindex.New[attr]()
	x.Add("a", "the cat sat on the mat", "", nil, attr{})
	x.Add("b", "the dog sat on the log", "", nil, attr{})
	x.Add("c", "the cat chased the dog around the garden for a long while", "", nil, attr{})
	x.Add("d", "a note", "cat", nil, attr{})
	for i := range 20 {
		x.Add(fmt.Sprintf("e%d", i), "nothing related", "", nil, attr{})
	}
	got := ids(textindex.Search([]*textindex.Index[attr]{x}, "cat dog", 10, nil))
	// c has both words and d has cat as its short abstraction: they lead;
	// b and a are as long as each other, and dog is the rarer word.
	if len(got) != 4 || !slices.Contains(got[:2], "c") || !slices.Contains(got[:2], "d") || got[2] != "b" {
		t.Errorf("Search(cat dog) = %v, want c and d, then b, then a", got)
	}
	if got := textindex.Search([]*textindex.Index[attr]{x}, "zebra", 10, nil); len(got) != 0 {
		t.Errorf("Search(zebra) = %v, want nothing", got)
	}
	keep := func(_ string, a *attr) bool { return a.group == 0 }
	x.Add("c", "the cat chased the dog around the garden for a long while", "", nil, attr{group: 1})
	if got := ids(textindex.Search([]*textindex.Index[attr]{x}, "cat dog", 10, keep)); slices.Contains(got, "c") {
		t.Errorf("Search with keep = %v, want c left out", got)
	}
}

// TestRemoveRestoresStatistics checks that a removed or replaced document
// leaves no trace in the scores of the others.
func TestRemoveRestoresStatistics(t *testing.T) {
	build := func(extra bool) []textindex.Hit {
		x := textindex.New[attr]()
		x.Add("a", "apples and pears", "", nil, attr{})
		x.Add("b", "apples only", "", []string{"fruit"}, attr{})
		if extra {
			for i := range 3000 { // enough to make the index compact
				x.Add(fmt.Sprintf("x%d", i), "apples apples pears everywhere", "", nil, attr{})
			}
			x.Add("b", "something else", "", nil, attr{})
			x.Add("b", "apples only", "", []string{"fruit"}, attr{})
			for i := range 3000 {
				x.Remove(fmt.Sprintf("x%d", i))
			}
		}
		return textindex.Search([]*textindex.Index[attr]{x}, "apples pears fruit", 10, nil)
	}
	if got, want := build(true), build(false); !slices.Equal(got, want) {
		t.Errorf("after adding and removing = %v, want %v", got, want)
	}
}

// TestPruningMatchesExhaustive is a property test: on random corpora in
// several languages (English, German, Spanish, Chinese words, whose CJK
// runs are indexed as bigrams and searched as phrases of them), with and
// without a filter, over one index or two, block-max WAND and WAND return
// exactly the top k that scoring every posting returns.
func TestPruningMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []string{"the", "and", "coffee", "morning", "und", "der", "Straße", "München", "Grüße",
		"el", "niño", "año", "Córdoba", "我们", "上海", "银行", "工作", "咖啡", "早上好"}
	for round := range 200 {
		vocab := 5 + rng.IntN(60)
		word := func() string {
			// Zipf-like: low numbers are common words.
			n := int(float64(vocab) * rng.Float64() * rng.Float64())
			if n < len(pool) && rng.IntN(2) == 0 {
				return pool[n]
			}
			return fmt.Sprintf("w%d", n)
		}
		text := func(n int) string {
			ws := make([]string, n)
			for i := range ws {
				ws[i] = word()
			}
			if rng.IntN(3) == 0 { // a CJK run of two words: bigrams across them
				ws = append(ws, pool[13+rng.IntN(6)]+pool[13+rng.IntN(6)])
			}
			return strings.Join(ws, " ")
		}
		parts := []*textindex.Index[attr]{textindex.New[attr]()}
		if rng.IntN(3) == 0 {
			parts = append(parts, textindex.New[attr]())
		}
		docs := 1 + rng.IntN(400)
		if round%10 == 0 {
			docs = 800 + rng.IntN(1200) // long lists: many blocks to skip
		}
		for range docs {
			p := parts[rng.IntN(len(parts))]
			id := fmt.Sprintf("m%04d", rng.IntN(docs*2)) // some ids repeat: replacements
			var cues []string
			if rng.IntN(4) == 0 {
				cues = []string{word()}
			}
			p.Add(id, text(1+rng.IntN(30)), text(rng.IntN(4)), cues, attr{group: rng.IntN(3)})
			if rng.IntN(10) == 0 {
				p.Remove(fmt.Sprintf("m%04d", rng.IntN(docs*2)))
			}
		}
		var keep func(string, *attr) bool
		if rng.IntN(2) == 0 {
			keep = func(_ string, a *attr) bool { return a.group != 1 }
		}
		q := text(1 + rng.IntN(6))
		k := 1 + rng.IntN(20)
		want := textindex.SearchAll(parts, q, k, keep)
		if got := textindex.Search(parts, q, k, keep); !slices.Equal(got, want) {
			t.Fatalf("round %d: query %q k %d: block-max WAND = %v\nexhaustive = %v", round, q, k, got, want)
		}
		if got := textindex.SearchWAND(parts, q, k, keep); !slices.Equal(got, want) {
			t.Fatalf("round %d: query %q k %d: WAND = %v\nexhaustive = %v", round, q, k, got, want)
		}
	}
}

// TestMultilingual checks that German, Spanish and Chinese words find their
// documents, accents folded and CJK words found by their bigrams.
func TestMultilingual(t *testing.T) {
	x := textindex.New[attr]()
	x.Add("de", "Ich wohne seit März in München und fahre gern Fahrrad.", "", nil, attr{})
	x.Add("es", "Mi hermana vive en Córdoba y trabaja en un hospital.", "", nil, attr{})
	x.Add("zh", "我上个月搬到了上海，在一家银行工作。", "", nil, attr{})
	x.Add("en", "The weather is nice today.", "", nil, attr{})
	for _, c := range []struct{ q, want string }{
		{"muenchen münchen", "de"},
		{"Fahrrad", "de"},
		{"cordoba hospital", "es"},
		{"Córdoba", "es"},
		{"上海", "zh"},
		{"银行", "zh"},
	} {
		got := ids(textindex.Search([]*textindex.Index[attr]{x}, c.q, 3, nil))
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, got, c.want)
		}
	}
}

// TestBytesPerMemory measures the heap an index of short conversational
// memories takes, and fails if it grows past the budget the engine states
// (see engine.Options.TextIndexLimit).
func TestBytesPerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates an index of 20k memories")
	}
	const n = 20000
	texts := corpus(n, 7)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := textindex.New[attr]()
	for i, s := range texts {
		x.Add(fmt.Sprintf("%026d", i), s, "", nil, attr{})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	per := heap / n
	t.Logf("%.0f bytes per memory (%d memories of about 20 words); Bytes estimates %d", per, x.Len(), x.Bytes()/n)
	if per > 1024 {
		t.Errorf("%.0f bytes per memory, over the budget of 1 KiB", per)
	}
	// The engine's memory bound trusts the estimate: it must not be far
	// off the heap the index takes.
	if est := float64(x.Bytes()); est < heap/2 || est > heap*1.5 {
		t.Errorf("Bytes() = %.0f, heap taken %.0f: off by more than the bound allows", est, heap)
	}
	runtime.KeepAlive(x)
}

// corpus returns n texts of about 20 words over a vocabulary with a Zipf
// distribution, like conversation turns.
func corpus(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	z := rand.NewZipf(rng, 1.1, 1, 50000)
	out := make([]string, n)
	for i := range out {
		ws := make([]string, 12+rng.IntN(16))
		for j := range ws {
			ws[j] = fmt.Sprintf("w%d", z.Uint64())
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

// benchQueries are the query mix of BenchmarkSearch over corpus's
// vocabulary, where w1 is the most common word: common words alone, a
// common word with rarer ones, rare words alone.
var benchQueries = map[string]string{
	"common":     "w1 w2 w3",
	"commonrare": "w1 w300 w2000",
	"rare":       "w3000 w12000",
}

// BenchmarkSearch measures a search for 50 hits at 10k and 100k memories
// for each query of benchQueries: block-max WAND (Search) side by side
// with WAND on whole lists' bounds and with scoring every posting.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		x := textindex.New[attr]()
		for i, s := range corpus(n, 3) {
			x.Add(fmt.Sprintf("%026d", i), s, "", nil, attr{})
		}
		parts := []*textindex.Index[attr]{x}
		for _, qn := range []string{"common", "commonrare", "rare"} {
			for _, m := range []struct {
				name string
				fn   func([]*textindex.Index[attr], string, int, func(string, *attr) bool) []textindex.Hit
			}{{"bmw", textindex.Search[attr]}, {"wand", textindex.SearchWAND[attr]}, {"exhaustive", textindex.SearchAll[attr]}} {
				b.Run(fmt.Sprintf("%d/%s/%s", n, qn, m.name), func(b *testing.B) {
					for b.Loop() {
						m.fn(parts, benchQueries[qn], 50, nil)
					}
				})
			}
		}
	}
}

// BenchmarkSearchMix runs a mix of 300 queries of two to five words drawn
// from corpus's vocabulary (most with a common word, some with rare words
// only) at 10k and 100k memories, each query with block-max WAND and WAND
// one after the other, either first in turn, and reports per strategy the
// p50 and p95 of a query's CPU time (the thread's, on Linux: other
// processes on a loaded machine inflate wall time by more than the
// difference measured), the documents scored per query, and the ratios of
// block-max WAND's figures to WAND's.
func BenchmarkSearchMix(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		x := textindex.New[attr]()
		for i, s := range corpus(n, 3) {
			x.Add(fmt.Sprintf("%026d", i), s, "", nil, attr{})
		}
		parts := []*textindex.Index[attr]{x}
		qs := queryMix(300, 5)
		runtime.GC() // the garbage of building is not the searches'
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			defer lockThread()()
			times := map[string][]time.Duration{}
			scored := map[string]int{}
			for b.Loop() {
				for i, q := range qs {
					for _, s := range []string{textindex.Strategies[i%2], textindex.Strategies[1-i%2]} {
						start := threadCPU()
						_, c := textindex.SearchCounting(s, parts, q, 50)
						times[s] = append(times[s], threadCPU()-start)
						scored[s] += c
					}
				}
			}
			queries := float64(len(times["bmw"]))
			var p50, p95, sc [2]float64
			for i, s := range textindex.Strategies[:2] {
				slices.Sort(times[s])
				p50[i] = float64(times[s][len(times[s])/2].Microseconds())
				p95[i] = float64(times[s][len(times[s])*95/100].Microseconds())
				sc[i] = float64(scored[s]) / queries
				b.ReportMetric(p50[i], s+"-p50-"+cpuClock+"-us")
				b.ReportMetric(p95[i], s+"-p95-"+cpuClock+"-us")
				b.ReportMetric(sc[i], s+"-scored/q")
			}
			b.ReportMetric(p50[0]/p50[1], "p50-ratio")
			b.ReportMetric(p95[0]/p95[1], "p95-ratio")
			b.ReportMetric(sc[0]/sc[1], "scored-ratio")
		})
	}
}

// queryMix returns n queries over corpus's vocabulary: four in five with
// one of its 20 most common words, all with words of a Zipf draw.
func queryMix(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	z := rand.NewZipf(rng, 1.05, 10, 50000)
	out := make([]string, n)
	for i := range out {
		ws := make([]string, 2+rng.IntN(4))
		for j := range ws {
			ws[j] = fmt.Sprintf("w%d", 50+z.Uint64())
		}
		if rng.IntN(5) != 0 {
			ws[0] = fmt.Sprintf("w%d", rng.IntN(20))
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

package textindex_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

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

// TestWANDMatchesExhaustive is a property test: on random corpora, with
// and without a filter, over one index or two, WAND returns exactly the
// top k that scoring every posting returns.
func TestWANDMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		vocab := 5 + rng.IntN(60)
		word := func() string {
			// Zipf-like: low numbers are common words.
			return fmt.Sprintf("w%d", int(float64(vocab)*rng.Float64()*rng.Float64()))
		}
		text := func(n int) string {
			ws := make([]string, n)
			for i := range ws {
				ws[i] = word()
			}
			return strings.Join(ws, " ")
		}
		parts := []*textindex.Index[attr]{textindex.New[attr]()}
		if rng.IntN(3) == 0 {
			parts = append(parts, textindex.New[attr]())
		}
		docs := 1 + rng.IntN(400)
		for i := range docs {
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
			_ = i
		}
		var keep func(string, *attr) bool
		if rng.IntN(2) == 0 {
			keep = func(_ string, a *attr) bool { return a.group != 1 }
		}
		q := text(1 + rng.IntN(6))
		k := 1 + rng.IntN(20)
		got := textindex.Search(parts, q, k, keep)
		want := textindex.SearchAll(parts, q, k, keep)
		if !slices.Equal(got, want) {
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
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.0f bytes per memory (%d memories of about 20 words)", per, x.Len())
	if per > 1024 {
		t.Errorf("%.0f bytes per memory, over the budget of 1 KiB", per)
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

// BenchmarkSearch measures a search at 10k and 100k memories with a query
// of one common and two rarer words, WAND against scoring every posting.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		x := textindex.New[attr]()
		for i, s := range corpus(n, 3) {
			x.Add(fmt.Sprintf("%026d", i), s, "", nil, attr{})
		}
		parts := []*textindex.Index[attr]{x}
		q := "w1 w300 w2000"
		for _, m := range []struct {
			name string
			fn   func([]*textindex.Index[attr], string, int, func(string, *attr) bool) []textindex.Hit
		}{{"wand", textindex.Search[attr]}, {"exhaustive", textindex.SearchAll[attr]}} {
			b.Run(fmt.Sprintf("%s/%d", m.name, n), func(b *testing.B) {
				for b.Loop() {
					m.fn(parts, q, 50, nil)
				}
			})
		}
	}
}

package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Words of the generated memories: names, places and things that give
// queries something specific to find, and a synthetic vocabulary drawn
// with a Zipf law so that, as in real text, a few words are in most
// memories and most words in few.
var (
	people = strings.Fields(`Ana Bruno Chiara Dev Elif Femi Greta Hugo Ines Jun Kofi Lea Mads Nia
		Oskar Pia Quim Rosa Sven Tariq Ulla Vik Wanda Xiu Yosef Zain Adele Boris Cleo Dario Esme Farah`)
	places = strings.Fields(`Porto Lyon Graz Bergen Turku Gdansk Brno Cork Malaga Bari Ghent Aarhus
		Tartu Split Cluj Plovdiv Izmir Tunis Accra Durban Pune Hanoi Cebu Busan Sapporo Perth Hobart`)
	things = strings.Fields(`invoice passport bicycle piano recipe lease contract visa ticket laptop
		camera garden kitchen dentist surgery marathon concert wedding interview mortgage salary
		vaccine allergy peanuts gluten coffee tea sushi ramen pasta curry tacos kayak tent guitar`)
	syllables = strings.Fields(`ka lo mi ne su ta ri po de ga vu be zo fi ha ju ke la mo nu pe ro si te wa ye xo da go hu`)
)

// vocabSize is the number of synthetic words: three syllables each.
var vocabSize = len(syllables) * len(syllables) * len(syllables)

// word returns synthetic word i.
func word(i int) string {
	n := len(syllables)
	return syllables[i%n] + syllables[(i/n)%n] + syllables[(i/n/n)%n]
}

// gen makes memories and queries from a seeded generator, so every run
// over the same flags writes and asks the same texts.
type gen struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

func newGen(seed uint64) *gen {
	r := rand.New(rand.NewPCG(seed, 0x67726f77))
	return &gen{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(vocabSize-1))}
}

func (g *gen) pick(ws []string) string { return ws[g.r.IntN(len(ws))] }

// words returns n words of the synthetic vocabulary.
func (g *gen) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = word(int(g.zipf.Uint64()))
	}
	return strings.Join(ws, " ")
}

// at is when every generated memory was written: a fixed time, so runs
// compare.
var at = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// memory returns a new active memory of ns with a sentence of 12 to 20
// words as its value and a short abstraction.
func (g *gen) memory(ns engram.Namespace) *engram.Memory {
	who, where, what := g.pick(people), g.pick(places), g.pick(things)
	v := fmt.Sprintf("%s took the %s to %s, %s.", who, what, where, g.words(8+g.r.IntN(9)))
	return &engram.Memory{
		ID: engram.NewID(), Namespace: ns, Kind: engram.KindSemantic, Value: v,
		Abstraction: who + " and the " + what + " in " + where,
		Cues:        []string{who, where}, Confidence: 0.8, Importance: 0.5,
		Status: engram.StatusActive, CreatedAt: at, UpdatedAt: at, Version: 1,
	}
}

// query returns a search of three to six words.
func (g *gen) query() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("what did %s do with the %s", g.pick(people), g.pick(things))
	case 1:
		return fmt.Sprintf("%s %s in %s", g.words(1), g.pick(things), g.pick(places))
	default:
		return g.words(2) + " " + g.pick(people)
	}
}

// hashEmbedder makes a text's vector as the normalised sum of one
// pseudo-random vector per word (seeded by the word's hash): texts that
// share words are near each other, as with a real model, at a cost of
// about a microsecond per word and with no table in memory (which would
// count in the heap the benchmark measures). Vectors of texts given to
// Precompute are kept, so that timed searches do not embed their query.
type hashEmbedder struct {
	dim int
	pre map[string][]float32
}

func (h *hashEmbedder) Name() string { return "growth-hash" }
func (h *hashEmbedder) Dim() int     { return h.dim }

// Embed never fails.
func (h *hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if v := h.pre[t]; v != nil {
			out[i] = v
			continue
		}
		out[i] = h.vector(t)
	}
	return out, nil
}

// Precompute embeds texts now and keeps their vectors.
func (h *hashEmbedder) Precompute(texts []string) {
	if h.pre == nil {
		h.pre = map[string][]float32{}
	}
	for _, t := range texts {
		h.pre[t] = h.vector(t)
	}
}

func (h *hashEmbedder) vector(text string) []float32 {
	v := make([]float32, h.dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == '?' || r == '\''
	}) {
		f := fnv.New64a()
		f.Write([]byte(w))
		x := f.Sum64() | 1
		for j := range v {
			// xorshift64: uniform in [-1, 1), enough for random directions.
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[j] += float32(int64(x)>>11) / (1 << 52)
		}
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		v[0], ss = 1, 1
	}
	inv := float32(1 / math.Sqrt(ss))
	for j := range v {
		v[j] *= inv
	}
	return v
}

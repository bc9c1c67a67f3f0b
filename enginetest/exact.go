package enginetest

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// NoiseEmbedder is a test embedder that knows no word: each text gets a
// pseudo-random unit vector drawn from its hash, so the dense channel's
// ranking is noise, as a model's is for a code or a name it never saw.
type NoiseEmbedder struct{}

// Name implements engram.Embedder.
func (NoiseEmbedder) Name() string { return "noise" }

// Dim implements engram.Embedder.
func (NoiseEmbedder) Dim() int { return 32 }

// Embed implements engram.Embedder.
func (n NoiseEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		r := rand.New(rand.NewPCG(h.Sum64(), 1))
		v := make([]float32, n.Dim())
		var ss float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(ss))
		}
		out[i] = v
	}
	return out, nil
}

// rareTokens are words said once among many turns, each in the sentence
// that says it, in several languages: an order code, a German compound
// name, a Chinese name, a Spanish double surname.
var rareTokens = []struct{ token, turn string }{
	{"QX-7731-ZB", "My order code for the broken blender is QX-7731-ZB, I need it for the return."},
	{"Sonnenscheinberger", "Meine neue Zahnärztin heißt Frau Doktor Sonnenscheinberger, sehr nett."},
	{"欧阳娜娜", "我的新同事叫欧阳娜娜，她是从成都来的。"},
	{"Quiroga-Bustamante", "Mi vecino nuevo se llama Ezequiel Quiroga-Bustamante y toca la trompeta."},
}

// fillerTurns are everyday turns in the same languages, with near misses
// of the rare words: other codes, other names sharing a part.
var fillerTurns = []string{
	"I went running along the river this morning before work.",
	"My order from the bookshop arrived, the code was QX-4410-ZB.",
	"We should plan the trip to the coast for the long weekend.",
	"The blender makes a strange noise when I turn it on.",
	"Heute war das Wetter schön, wir sind im Park spazieren gegangen.",
	"Familie Sonnenschein wohnt jetzt im zweiten Stock.",
	"Ich habe morgen einen Termin beim Friseur um zehn Uhr.",
	"我们周末去爬山了，风景很好。",
	"欧阳修的诗我很喜欢。",
	"今天晚上我做了红烧肉。",
	"Mañana tengo que llevar el coche al taller.",
	"La familia Bustamante se mudó al barrio la semana pasada.",
	"My sister called to say the kids loved the museum.",
	"I need to renew my passport before the summer holidays.",
	"Der Zug nach Hamburg hatte wieder zwanzig Minuten Verspätung.",
	"周三我要去医院复查。",
	"El concierto de jazz del viernes fue increíble.",
	"I finally fixed the leaking tap in the kitchen.",
}

// chat adds turns as one session per day from day, speakers alternating,
// through the library.
func chat(t *testing.T, e *engine.Engine, day time.Time, turns []string) {
	t.Helper()
	for len(turns) > 0 {
		n := min(6, len(turns))
		in := make([]engram.EpisodeInput, n)
		for i, s := range turns[:n] {
			at := day.Add(time.Duration(i) * time.Minute)
			in[i] = engram.EpisodeInput{Role: "user", Speaker: []string{"Alice", "Bob"}[i%2], Content: s, OccurredAt: &at}
		}
		if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: in}); err != nil {
			t.Fatalf("add session of %s: %v", day.Format(time.DateOnly), err)
		}
		turns, day = turns[n:], day.Add(24*time.Hour)
	}
}

// testExactMatchFirst: a rare word said once among many turns (an order
// code, a German compound name, a Chinese name, a Spanish surname) is
// found at place 1 by a search for it, through the library and over
// HTTP, on a fresh server and after many other writes, even though the
// dense channel ranks noise: the full-text channel's only or best find
// gets credit whatever its spread.
func testExactMatchFirst(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: NoiseEmbedder{}})
	// Four days of sessions, a rare word said once on each.
	var turns []string
	for i, rt := range rareTokens {
		for j, s := range fillerTurns {
			turns = append(turns, fmt.Sprintf("%s (%d)", s, i*len(fillerTurns)+j))
			if j == 2*i+3 {
				turns = append(turns, rt.turn)
			}
		}
	}
	chat(t, e, t0, turns)
	// Memories added directly, one marker each: no neighbour repeats a
	// marker as context, so the full text finds one memory alone.
	r := rand.New(rand.NewPCG(7, 7))
	markers := make([]string, 40)
	ms := make([]engram.Memory, len(markers))
	for i := range markers {
		markers[i] = fmt.Sprintf("%c%c-%04d", 'A'+r.IntN(26), 'A'+r.IntN(26), r.IntN(10000))
		ms[i] = engram.Memory{Value: fmt.Sprintf("Write %d of the check, marker %s.", i, markers[i])}
	}
	if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: ms}); err != nil {
		t.Fatal(err)
	}
	client, _ := overHTTP(t, e)
	check := func(when string) {
		for _, via := range []struct {
			name string
			r    reader
		}{{"library", e}, {"http", client}} {
			for _, rt := range rareTokens {
				wantFirst(t, via.r, when+", "+via.name, rt.token, rt.turn)
			}
			for i, m := range markers {
				wantFirst(t, via.r, when+", "+via.name, m, ms[i].Value)
			}
		}
	}
	check("fresh")
	// Many other writes: sessions of everyday turns, the near misses
	// among them, numbered so each is a turn of its own.
	var more []string
	for i := range 120 {
		more = append(more, fmt.Sprintf("%s (%d)", fillerTurns[i%len(fillerTurns)], i))
	}
	chat(t, e, t0.Add(30*24*time.Hour), more)
	check("after 120 more turns")
}

// wantFirst searches for q and wants the memory whose value is want at
// place 1.
func wantFirst(t *testing.T, r reader, when, q, want string) {
	t.Helper()
	res, err := r.Search(ctx, engram.SearchRequest{Scope: scA, Query: q, K: 10})
	if err != nil {
		t.Fatalf("%s: search %q: %v", when, q, err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Memory.Value != want {
		t.Errorf("%s: %q ranks %v first, want %q", when, q, topValue(res.Hits), want)
	}
}

func topValue(hits []engram.Hit) string {
	if len(hits) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%q", strings.TrimSpace(hits[0].Memory.Value))
}

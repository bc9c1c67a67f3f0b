package enginetest

import (
	"context"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
)

// meaningEmbedder embeds by meaning where the bag embedder embeds by
// words: a text that names a pet in one of five languages (a dog, a
// puppy, Haustier, perrito, chiot, 小狗, 宠物…) shares one dimension with
// every other such text whatever its words, the rest are hashed words of
// little weight. Calls with a text containing on wait while it is held.
// It counts how often each text was embedded.
type meaningEmbedder struct {
	mu    sync.Mutex
	held  chan struct{}
	on    string
	count map[string]int
	wait  int // calls held now
}

// petWords name a pet, lower case, in English, German, Spanish, French
// and Chinese.
var petWords = []string{"dog", "puppy", "pet", "hund", "welpe", "haustier", "perr", "mascota", "chien", "chiot", "animaux de compagnie", "狗", "宠物"}

func (m *meaningEmbedder) Name() string { return "meaning" }
func (m *meaningEmbedder) Dim() int     { return 32 }

func (m *meaningEmbedder) holdOn(on string) {
	m.mu.Lock()
	m.held, m.on = make(chan struct{}), on
	m.mu.Unlock()
}

func (m *meaningEmbedder) release() {
	m.mu.Lock()
	if m.held != nil {
		close(m.held)
		m.held = nil
	}
	m.mu.Unlock()
}

func (m *meaningEmbedder) waiting() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wait
}

// twice lists the texts embedded more than once.
func (m *meaningEmbedder) twice() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for t, n := range m.count {
		if n > 1 {
			out = append(out, t)
		}
	}
	return out
}

func (m *meaningEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m.mu.Lock()
	held := m.held
	if held != nil && !slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, m.on) }) {
		held = nil
	}
	if held != nil {
		m.wait++
	}
	m.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-ctx.Done():
		}
		m.mu.Lock()
		m.wait--
		m.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	if m.count == nil {
		m.count = map[string]int{}
	}
	for _, t := range texts {
		m.count[t]++
	}
	m.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = meaningVector(t, m.Dim())
	}
	return out, nil
}

func meaningVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	lower := strings.ToLower(text)
	if slices.ContainsFunc(petWords, func(w string) bool { return strings.Contains(lower, w) }) {
		v[0] = 3
	}
	for _, w := range strings.Fields(lower) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[1+int(h.Sum32())%(dim-1)] += 0.3
	}
	v[dim-1] += 0.01
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	n := float32(1 / math.Sqrt(ss))
	for j := range v {
		v[j] *= n
	}
	return v
}

// testReadYourWritesByMeaning: a person talks over two sessions a week
// apart; in the second she says she adopted a dog, and a question about
// pets that shares no word with it, asked the moment the add answered,
// finds the turn, through the library and over HTTP, while the turn's
// embed job waits (the only worker is held by another tenant's job, which
// the search neither waits on nor sees). Full text alone does not find
// it. Once the jobs ran, the turn has its vectors, the turn before has
// gained it as context (the job's held update), and no text was embedded
// twice: the job found the search's vectors in the embedding cache. In
// English, German, Spanish, French and Chinese, with the scope's vector
// index loaded before the add or by the search.
func testReadYourWritesByMeaning(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, work, trip, opener, pet, question string
	}{
		{"en", "I started a new project at work on Monday.", "We are planning a trip to the coast in August.", "Guess what happened on Saturday!", "We adopted a puppy called Rufus.", "any pets at home?"},
		{"de", "Am Montag habe ich ein neues Projekt bei der Arbeit begonnen.", "Wir planen im August eine Reise an die Küste.", "Rate mal, was am Samstag passiert ist!", "Wir haben einen Welpen namens Rufus adoptiert.", "Welche Haustiere gibt es?"},
		{"es", "El lunes empecé un proyecto nuevo en el trabajo.", "Planeamos un viaje a la costa en agosto.", "¡Adivina lo que pasó el sábado!", "Adoptamos un perrito llamado Rufus.", "¿Qué mascotas hay en casa?"},
		{"fr", "Lundi j'ai commencé un nouveau projet au travail.", "Nous préparons un voyage sur la côte en août.", "Devine ce qui s'est passé samedi !", "Nous avons adopté un chiot nommé Rufus.", "Quels animaux de compagnie ?"},
		{"zh", "周一我开始了一个新的工作项目。", "我们计划八月去海边旅行。", "猜猜星期六发生了什么！", "我们领养了一只小狗，叫Rufus。", "家里有宠物吗？"},
	} {
		// The vector index of the scope is loaded by the search after the
		// add (cold), or before it and caught up by it (warm).
		warm := tc.lang == "en" || tc.lang == "es" || tc.lang == "zh"
		for _, via := range []string{"library", "http"} {
			t.Run(tc.lang+"/"+via, func(t *testing.T) {
				st := open(t)
				t.Cleanup(func() { st.Close() })
				emb := &meaningEmbedder{}
				cache, err := embedcache.New(emb, embedcache.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cache.Close() })
				e := laterEngine(t, st, cache)
				t.Cleanup(func() { e.Close() })
				t.Cleanup(emb.release)
				var svc engram.Service = e
				if via == "http" {
					svc, _ = overHTTP(t, e)
				}
				s1, s2 := nsA, nsA
				s1.Session, s2.Session = "week-1", "week-2"
				for i, text := range []string{tc.work, tc.trip} {
					waitJobDone(t, e, aliceSays(t, svc, s1, t0.Add(time.Duration(i)*time.Minute), text).EmbedJob)
				}
				later := t0.Add(7 * 24 * time.Hour)
				opener := aliceSays(t, svc, s2, later, tc.opener)
				waitJobDone(t, e, opener.EmbedJob)
				if warm {
					if _, err := svc.Search(ctx, engram.SearchRequest{Scope: scA, Query: tc.opener}); err != nil {
						t.Fatal(err)
					}
				}

				// Another tenant's embed job holds the only worker.
				emb.holdOn("Zeppelin")
				other := engram.Namespace{Org: "globex", Project: "p", User: "carol", Session: "s1"}
				held := aliceSays(t, e, other, later, "Der Zeppelin landet morgen früh.")
				waitUntil(t, "the other tenant's job in the embedder", 30*time.Second, func() bool { return emb.waiting() == 1 })

				pet := aliceSays(t, svc, s2, later.Add(time.Minute), tc.pet)
				ids := make([]string, len(pet.Memories))
				for i, m := range pet.Memories {
					ids[i] = m.ID
				}
				res, err := svc.Search(ctx, engram.SearchRequest{Scope: scA, Query: tc.question, K: 3})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(res.Hits, func(h engram.Hit) bool { return slices.Contains(ids, h.Memory.ID) }) {
					t.Errorf("%q right after the add ranks %v, want the turn %q in the top 3", tc.question, hitValues(res.Hits), tc.pet)
				}
				if j := jobState(t, e, s2, pet.EmbedJob.ID); j.State == engram.JobDone {
					t.Fatalf("the turn's embed job ran before the search: the test proves nothing")
				}
				if found := textIn(t, svc, scA, tc.question); slices.ContainsFunc(found, func(id string) bool { return slices.Contains(ids, id) }) {
					t.Errorf("full text finds the turn for %q: the question shares a word with it", tc.question)
				}

				emb.release()
				waitJobDone(t, e, pet.EmbedJob)
				waitJobDone(t, e, held.EmbedJob)
				if v := vectorOf(t, st, cache, &pet.Memories[0], engram.FieldValue); v == nil {
					t.Errorf("the turn has no stored vector after its embed job")
				}
				if m, err := e.GetMemory(ctx, scA, opener.Memories[0].ID); err != nil || !slices.Contains(ids, stringOf(m.Metadata[engram.MetaNext])) {
					t.Errorf("the turn before after the job: %v, %v; want it linked to the new turn (the held update)", m, err)
				}
				if twice := emb.twice(); len(twice) > 0 {
					t.Errorf("texts embedded twice: %q", twice)
				}
			})
		}
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

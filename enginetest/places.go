package enginetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/formation"
)

// placed reports whether the memory id is among hits: a hit itself, or
// collapsed into one that shares its source turn (engram.Hit.Collapsed).
func placed(hits []engram.Hit, id string) bool {
	return slices.ContainsFunc(hits, func(h engram.Hit) bool { return h.Memory.ID == id || slices.Contains(h.Collapsed, id) })
}

// turnsConversation is a conversation over three sessions, days apart,
// in one language: news told in the first, where the speaker lives in the
// second, small talk in the third; the questions ask for the news and the
// residence.
type turnsConversation struct {
	lang     string
	sessions [3][]string // "speaker|text"
	news     string      // the turn the first question is about
	newsQ    string
	home     string // the turn stating where Alice lives
	homeQ    string
}

var turnsConversations = []turnsConversation{
	{lang: "en", sessions: [3][]string{
		{"Bob|Hi Alice, how was your week?", "Alice|My daughter Emma just had a baby boy, my first grandchild!", "Bob|Congratulations! What is his name?", "Alice|They named him Noah, he is tiny and loud."},
		{"Bob|Did you settle in after the move?", "Alice|I live in Munich now, close to the big park.", "Bob|Munich is lovely in spring.", "Alice|Yes, and the bakery downstairs is great."},
		{"Bob|Any plans for the weekend?", "Alice|Just gardening and a long walk.", "Bob|Sounds relaxing.", "Alice|It will be, the tomatoes need me."},
	}, news: "My daughter Emma just had a baby boy, my first grandchild!", newsQ: "When did Alice get her first grandchild?",
		home: "I live in Munich now, close to the big park.", homeQ: "Where does Alice live?"},
	{lang: "de", sessions: [3][]string{
		{"Bob|Hallo Alice, wie war deine Woche?", "Alice|Meine Tochter Emma hat einen Sohn bekommen, ich bin jetzt Oma!", "Bob|Herzlichen Glückwunsch! Wie heißt der Kleine?", "Alice|Er heißt Noah und ist sehr laut."},
		{"Bob|Hast du dich nach dem Umzug eingelebt?", "Alice|Ich wohne jetzt in München, nahe am großen Park.", "Bob|München ist im Frühling schön.", "Alice|Ja, und die Bäckerei unten ist toll."},
		{"Bob|Was machst du am Wochenende?", "Alice|Nur Gartenarbeit und einen langen Spaziergang.", "Bob|Klingt erholsam.", "Alice|Die Tomaten brauchen mich."},
	}, news: "Meine Tochter Emma hat einen Sohn bekommen, ich bin jetzt Oma!", newsQ: "Wann ist Alice Oma geworden?",
		home: "Ich wohne jetzt in München, nahe am großen Park.", homeQ: "Wo wohnt Alice?"},
	{lang: "es", sessions: [3][]string{
		{"Bob|Hola Alice, ¿qué tal la semana?", "Alice|¡Mi hija Emma acaba de tener un bebé, ya soy abuela!", "Bob|¡Felicidades! ¿Cómo se llama?", "Alice|Se llama Noah y llora mucho."},
		{"Bob|¿Ya te instalaste después de la mudanza?", "Alice|Ahora vivo en Múnich, cerca del parque grande.", "Bob|Múnich es precioso en primavera.", "Alice|Sí, y la panadería de abajo es genial."},
		{"Bob|¿Planes para el fin de semana?", "Alice|Solo jardinería y un paseo largo.", "Bob|Suena tranquilo.", "Alice|Los tomates me necesitan."},
	}, news: "¡Mi hija Emma acaba de tener un bebé, ya soy abuela!", newsQ: "¿Cuándo fue abuela Alice?",
		home: "Ahora vivo en Múnich, cerca del parque grande.", homeQ: "¿Dónde vive Alice?"},
	{lang: "zh", sessions: [3][]string{
		{"Bob|Alice，这周过得怎么样？", "Alice|我女儿刚生了一个男孩，我当奶奶了！", "Bob|恭喜恭喜！孩子叫什么名字？", "Alice|叫小宝，声音特别大。"},
		{"Bob|搬家以后习惯了吗？", "Alice|我现在住在上海，离公园很近。", "Bob|上海的春天很美。", "Alice|楼下的面包店也很好吃。"},
		{"Bob|周末有什么计划？", "Alice|种种花，散散步。", "Bob|听起来很放松。", "Alice|番茄需要我照顾。"},
	}, news: "我女儿刚生了一个男孩，我当奶奶了！", newsQ: "Alice什么时候当奶奶了？",
		home: "我现在住在上海，离公园很近。", homeQ: "Alice住在哪里？"},
}

// testOneTurnOnePlace: with a former that also forms memories of runs of
// two turns (each citing both), and facts formed from turns, the hits of
// a search never share a source turn, in the top k and in a context
// within a budget; the others are listed on the hit they collapsed into
// and read back by id, each citing a turn of it; the turn a question is
// about holds one place among the first three and its words appear at
// most once in the context (a fact formed from it may stand for it). Conversations over several sessions in English,
// German, Spanish and Chinese, through the library and over HTTP.
func testOneTurnOnePlace(t *testing.T, open Open) {
	former := formation.Rules{Former: formation.Default(), MergeAt: formation.DefaultMergeAt}
	former.Scene = 2
	for _, conv := range turnsConversations {
		t.Run(conv.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}, Former: former})
			episode := map[string]string{} // turn text -> its episode's id
			for i, s := range conv.sessions {
				res := addConversation(t, e, nsA, t0.Add(time.Duration(i)*10*24*time.Hour), s...)
				for _, ep := range res.Episodes {
					episode[ep.Content] = ep.ID
				}
			}
			client, _ := overHTTP(t, e)
			for _, via := range []struct {
				name string
				r    reader
			}{{"library", e}, {"http", client}} {
				for _, q := range []struct{ question, turn string }{{conv.newsQ, conv.news}, {conv.homeQ, conv.home}} {
					for _, req := range []engram.SearchRequest{
						{Scope: scA, Query: q.question, K: 5},
						{Scope: scA, Query: q.question, Budget: 400},
					} {
						res, err := via.r.Search(ctx, req)
						if err != nil {
							t.Fatalf("%s: search %q: %v", via.name, q.question, err)
						}
						checkOnePlace(t, via.r, via.name+" "+q.question, res, q.turn, episode[q.turn])
					}
				}
			}
		})
	}
}

// checkOnePlace checks one search result: no two hits cite a common
// episode; every collapsed id reads back as a memory citing an episode of
// its hit; the turn (its episode ep) holds a place among the first three,
// by its own memory, a run of turns over it or a fact formed from it; with
// a context, the turn's text is in it at most once.
func checkOnePlace(t *testing.T, r reader, what string, res *engram.SearchResult, turn, ep string) {
	t.Helper()
	owner := map[string]int{}
	at := -1
	for i, h := range res.Hits {
		for _, s := range h.Memory.Sources {
			if j, ok := owner[s]; ok {
				t.Errorf("%s: hits %d %q and %d %q share the turn %s", what, j, res.Hits[j].Memory.Value, i, h.Memory.Value, s)
			}
			owner[s] = i
		}
		if at < 0 && slices.Contains(h.Memory.Sources, ep) {
			at = i
		}
		if len(h.Collapsed) == 0 {
			continue
		}
		page, err := r.ListMemories(ctx, scA, engram.MemoryFilter{IDs: h.Collapsed, Limit: engram.MaxLimit})
		if err != nil || len(page.Memories) != len(h.Collapsed) {
			t.Fatalf("%s: read collapsed %v: %d memories, %v", what, h.Collapsed, len(page.Memories), err)
		}
		for _, m := range page.Memories {
			if !slices.ContainsFunc(m.Sources, func(s string) bool { return slices.Contains(h.Memory.Sources, s) }) {
				t.Errorf("%s: %q collapsed into %q, which cites none of its turns", what, m.Value, h.Memory.Value)
			}
		}
	}
	if at < 0 || at > 2 {
		t.Errorf("%s: the turn %q at place %d of %v, want one of the first three", what, turn, at+1, hitValues(res.Hits))
	}
	if strings.Count(res.Context, turn) > 1 {
		t.Errorf("%s: context has %q %d times:\n%s", what, turn, strings.Count(res.Context, turn), res.Context)
	}
}

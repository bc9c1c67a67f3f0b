package http_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/enginetest"
	engramhttp "github.com/engramhq/engram/http"
)

// englishBag is the test embedder declaring that it covers English only,
// as USE-lite does: the engine weighs its dense channel down for the
// languages below.
type englishBag struct{ enginetest.BagEmbedder }

func (*englishBag) Languages() []string { return []string{"en"} }

// langTurn is one turn of a conversation in a language test.
type langTurn struct {
	role, speaker, content string
}

// langCase is two conversations in one language: a recent one whose first
// turn the questions are about (the target) and an earlier one whose first
// turn has the same shape but another subject and date (the distractor).
// question asks about the target's content, periodQuestion names the
// period of the target's relative date.
type langCase struct {
	tag                        string
	recent, earlier            []langTurn
	targetFrom, distractorFrom string // the turns' event_from: their relative dates resolved
	question, periodQuestion   string
}

// The recent conversation happens on Wednesday 15 May 2024, the earlier
// one on Thursday 2 May; the questions are asked on Monday 20 May, so
// "last week" is 13 to 19 May: it holds the target's "yesterday" (14 May)
// but not the distractor's date ("last Saturday", 27 April, or "the day
// before yesterday", 30 April).
var (
	langRecent  = time.Date(2024, 5, 15, 18, 0, 0, 0, time.UTC)
	langEarlier = time.Date(2024, 5, 2, 18, 0, 0, 0, time.UTC)
	langAsked   = time.Date(2024, 5, 20, 12, 0, 0, 0, time.UTC)
)

var langCases = []langCase{
	{
		tag: "de",
		recent: []langTurn{
			{"user", "Lena", "Gestern war ich mit Anna im Zoo, die Elefanten waren toll."},
			{"assistant", "", "Das klingt schön! Was hat Anna am besten gefallen?"},
			{"user", "Lena", "Die Pinguine, die wurden gerade gefüttert."},
		},
		earlier: []langTurn{
			{"user", "Lena", "Letzten Samstag war ich mit Paul im Aquarium."},
			{"assistant", "", "Habt ihr Haie gesehen?"},
		},
		targetFrom: "2024-05-14", distractorFrom: "2024-04-27",
		question:       "Wann war ich im Zoo?",
		periodQuestion: "Was habe ich letzte Woche gemacht?",
	},
	{
		tag: "es",
		recent: []langTurn{
			{"user", "Sofía", "Ayer fui al mercado con Lucía y compramos fresas."},
			{"assistant", "", "¡Qué bien! ¿Estaban buenas las fresas?"},
			{"user", "Sofía", "Sí, muy dulces, y muy baratas."},
		},
		earlier: []langTurn{
			{"user", "Sofía", "El sábado pasado fui al cine con Marta."},
			{"assistant", "", "¿Qué película visteis?"},
		},
		targetFrom: "2024-05-14", distractorFrom: "2024-04-27",
		question:       "¿Con quién fui al mercado?",
		periodQuestion: "¿Qué hice la semana pasada?",
	},
	{
		tag: "fr",
		recent: []langTurn{
			{"user", "Camille", "Hier je suis allé au cinéma avec Julien, on a vu un film d'horreur."},
			{"assistant", "", "Et alors, il vous a fait peur ?"},
			{"user", "Camille", "Un peu, surtout la fin."},
		},
		earlier: []langTurn{
			{"user", "Camille", "Samedi dernier, je suis allé au musée avec Claire."},
			{"assistant", "", "Quelle exposition avez-vous vue ?"},
		},
		targetFrom: "2024-05-14", distractorFrom: "2024-04-27",
		question:       "Avec qui suis-je allé au cinéma ?",
		periodQuestion: "Qu'est-ce que j'ai fait la semaine dernière ?",
	},
	{
		tag: "zh",
		recent: []langTurn{
			{"user", "小李", "我昨天和小王去了长城，风景很美。"},
			{"assistant", "", "听起来很棒！你们爬了多久？"},
			{"user", "小李", "爬了三个小时，很累。"},
		},
		earlier: []langTurn{
			{"user", "小李", "前天我和小张去了故宫。"},
			{"assistant", "", "故宫人多吗？"},
		},
		targetFrom: "2024-05-14", distractorFrom: "2024-04-30",
		question:       "我什么时候去的长城？",
		periodQuestion: "我上周做了什么？",
	},
	{
		tag: "ja",
		recent: []langTurn{
			{"user", "Yuki", "昨日は友達と京都に行きました。お寺がきれいでした。"},
			{"assistant", "", "いいですね！どのお寺に行きましたか？"},
			{"user", "Yuki", "清水寺です。とても混んでいました。"},
		},
		earlier: []langTurn{
			{"user", "Yuki", "先週の土曜日は家族と大阪に行きました。"},
			{"assistant", "", "大阪で何を食べましたか？"},
		},
		targetFrom: "2024-05-14", distractorFrom: "2024-04-27",
		question: "いつ京都に行きましたか？",
		// Not "先週何をしましたか": its "何を" (what) is in the distractor's
		// neighbouring turn ("大阪で何を食べましたか"), and only statistics
		// shared with the other languages' namespaces outweighed it.
		periodQuestion: "先週はどうでしたか？",
	},
}

// TestEngine_Languages adds a conversation in each of German, Spanish,
// French, Chinese and Japanese through POST /v1/episodes and asks about it
// through POST /v1/search, on an engine without an embedder, with an
// embedder that covers every language and with one that declares English
// only: each formed memory carries its language, the relative dates are
// resolved against the turn's time, and the turn a question is about
// ranks first, above a turn of the same shape about something else.
func TestEngine_Languages(t *testing.T) {
	for _, v := range []struct {
		name string
		emb  engram.Embedder
	}{
		{"no embedder", nil},
		{"bag embedder", &enginetest.BagEmbedder{}},
		{"english-only embedder", &englishBag{}},
	} {
		t.Run(v.name, func(t *testing.T) {
			env := newEngineEnvWith(t, engine.Options{Embedder: v.emb}, engramhttp.ServerOptions{})
			for _, tc := range langCases {
				t.Run(tc.tag, func(t *testing.T) { checkLanguage(t, env, tc) })
			}
		})
	}
}

// checkLanguage runs one language case in a namespace of its own.
func checkLanguage(t *testing.T, env *engineEnv, tc langCase) {
	ns := engram.Namespace{Org: "acme", Project: "i18n", User: tc.tag}
	distractor := turnMemory(t, postTurns(t, env, ns, langEarlier, tc.earlier), tc.earlier[0].content)
	target := turnMemory(t, postTurns(t, env, ns, langRecent, tc.recent), tc.recent[0].content)
	for _, m := range []*engram.Memory{target, distractor} {
		if m.Language != tc.tag {
			t.Errorf("memory %q has language %q, want %q", m.Value, m.Language, tc.tag)
		}
	}
	if got := target.Metadata[engram.MetaEventFrom]; got != tc.targetFrom {
		t.Errorf("target %q: event_from = %v, want %s", target.Value, got, tc.targetFrom)
	}
	if got := distractor.Metadata[engram.MetaEventFrom]; got != tc.distractorFrom {
		t.Errorf("distractor %q: event_from = %v, want %s", distractor.Value, got, tc.distractorFrom)
	}
	hits := searchHTTP(t, env, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: tc.question, K: 5, Now: &langAsked})
	if len(hits) == 0 || hits[0].Memory.ID != target.ID {
		t.Errorf("%q: first hit is not %q; hits:\n%s", tc.question, target.Value, hitList(hits))
	}
	// The other turns said in the period share no word with the question
	// and come in no particular order, and a question about a period that
	// has ended spreads its first places over conversations: the
	// distractor, of another period, must score below the target if it
	// is found at all.
	hits = searchHTTP(t, env, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: tc.periodQuestion, K: 5, Now: &langAsked})
	ti, di := rankOf(hits, target.ID), rankOf(hits, distractor.ID)
	if ti < 0 || di >= 0 && hits[di].Score >= hits[ti].Score {
		t.Errorf("%q: %q is not found above %q; hits:\n%s", tc.periodQuestion, target.Value, distractor.Value, hitList(hits))
	}
}

// postTurns posts a conversation starting at start, a turn a minute,
// through POST /v1/episodes and returns what was stored and formed.
func postTurns(t *testing.T, env *engineEnv, ns engram.Namespace, start time.Time, turns []langTurn) *engram.AddEpisodesResult {
	t.Helper()
	eps := make([]engram.EpisodeInput, len(turns))
	for i, tu := range turns {
		at := start.Add(time.Duration(i) * time.Minute)
		eps[i] = engram.EpisodeInput{Role: tu.role, Speaker: tu.speaker, Content: tu.content, OccurredAt: &at}
	}
	r := do(t, "POST", env.srv.URL+"/v1/episodes", mustJSON(t, engram.AddEpisodesRequest{Namespace: ns, Episodes: eps}))
	if r.Status != 201 {
		t.Fatalf("POST /v1/episodes = %d %s", r.Status, r.Body)
	}
	var res engram.AddEpisodesResult
	if err := json.Unmarshal(r.Body, &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

// rankOf returns the index of the hit on memory id, or -1.
func rankOf(hits []engram.Hit, id string) int {
	for i, h := range hits {
		if h.Memory.ID == id {
			return i
		}
	}
	return -1
}

// turnMemory returns the memory formed from the one turn whose content is
// content, failing the test when there is none.
func turnMemory(t *testing.T, res *engram.AddEpisodesResult, content string) *engram.Memory {
	t.Helper()
	for i := range res.Memories {
		if m := &res.Memories[i]; m.Value == content && len(m.Sources) == 1 {
			return m
		}
	}
	t.Fatalf("no memory formed from %q among %s", content, mustJSON(t, res.Memories))
	return nil
}

// searchHTTP posts req to /v1/search and returns the hits.
func searchHTTP(t *testing.T, env *engineEnv, req engram.SearchRequest) []engram.Hit {
	t.Helper()
	r := do(t, "POST", env.srv.URL+"/v1/search", mustJSON(t, req))
	if r.Status != 200 {
		t.Fatalf("POST /v1/search %q = %d %s", req.Query, r.Status, r.Body)
	}
	var res engram.SearchResult
	if err := json.Unmarshal(r.Body, &res); err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

func hitList(hits []engram.Hit) string {
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "  %d. %.3f %s\n", i+1, h.Score, h.Memory.Value)
	}
	return b.String()
}

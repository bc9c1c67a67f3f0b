package enginetest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// RunSearch runs the behaviour tests of the retrieval pipeline behind
// Search (formation through the public API, speaker and time awareness,
// CJK, budgets, explanations, neighbour expansion) against stores made by
// open.
func RunSearch(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"SpeakerAttribution", testSearchSpeaker},
		{"RelativeDates", testSearchDates},
		{"ContextOfAnExchange", testSearchContext},
		{"CJK", testSearchCJK},
		{"Budget", testSearchBudget},
		{"Explain", testSearchExplain},
		{"ChannelsArePlain", testSearchPlainChannels},
		{"ConfidenceRecencyImportance", testSearchMIRaS},
		{"AgreeingChannelsWin", testSearchAgreeingChannels},
		{"TemporalChannel", testSearchTemporal},
		{"TemporalChannelWords", testSearchTemporalWords},
		{"TemporalRetold", testSearchTemporalRetold},
		{"ExactMatchFirst", testExactMatchFirst},
		{"OneTurnOnePlace", testOneTurnOnePlace},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// turn is "speaker|text".
func addConversation(t *testing.T, e *engine.Engine, ns engram.Namespace, start time.Time, turns ...string) *engram.AddEpisodesResult {
	t.Helper()
	in := make([]engram.EpisodeInput, len(turns))
	for i, s := range turns {
		sp, text, _ := strings.Cut(s, "|")
		at := start.Add(time.Duration(i) * time.Minute)
		in[i] = engram.EpisodeInput{Role: "user", Speaker: sp, Content: text, OccurredAt: &at}
	}
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: in})
	if err != nil {
		t.Fatalf("add conversation: %v", err)
	}
	return res
}

func search(t *testing.T, e *engine.Engine, req engram.SearchRequest) *engram.SearchResult {
	t.Helper()
	if req.Scope.Org == "" {
		req.Scope = scA
	}
	res, err := e.Search(ctx, req)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	return res
}

// memoryOf returns the id of the memory formed from the i-th episode.
func memoryOf(t *testing.T, res *engram.AddEpisodesResult, i int) string {
	t.Helper()
	for _, m := range res.Memories {
		if len(m.Sources) == 1 && m.Sources[0] == res.Episodes[i].ID {
			return m.ID
		}
	}
	t.Fatalf("no memory formed from episode %d", i)
	return ""
}

func hitIDs(res *engram.SearchResult) []string {
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.Memory.ID
	}
	return out
}

func testSearchSpeaker(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}})
	res := addConversation(t, e, nsA, t0,
		"Melanie|I have been researching pottery studios all week.",
		"Caroline|Nice! I have been researching adoption agencies.",
	)
	got := search(t, e, engram.SearchRequest{Query: "What did Caroline research?", Explain: true})
	if len(got.Hits) == 0 || got.Hits[0].Memory.ID != memoryOf(t, res, 1) {
		t.Fatalf("top hit for Caroline = %v, want her own line %s", hitIDs(got), memoryOf(t, res, 1))
	}
	if f := got.Hits[0].Factors[retrieval.FactorSpeaker]; f <= 0 {
		t.Errorf("top hit factors %v lack the speaker boost", got.Hits[0].Factors)
	}
	got = search(t, e, engram.SearchRequest{Query: "What did Melanie research?"})
	if got.Hits[0].Memory.ID != memoryOf(t, res, 0) {
		t.Errorf("top hit for Melanie = %v, want %s", hitIDs(got), memoryOf(t, res, 0))
	}
	// The formed memory carries the attribution in its indexed fields.
	m, err := e.GetMemory(ctx, scA, memoryOf(t, res, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Abstraction, "Caroline: Nice! I have been researching adoption agencies.") || !slices.Contains(m.Cues, "Caroline") {
		t.Errorf("formed memory abstraction %q, cues %q", m.Abstraction, m.Cues)
	}
	if m.Value != "Nice! I have been researching adoption agencies." {
		t.Errorf("value %q is not the episode verbatim", m.Value)
	}
}

func testSearchDates(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}})
	session := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	res := addConversation(t, e, nsA, session,
		"Caroline|I went to a support group yesterday.",
		"Melanie|I went to a support group once too.",
	)
	m, err := e.GetMemory(ctx, scA, memoryOf(t, res, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Metadata[engram.MetaEventFrom], "2023-05-07"; got != want {
		t.Errorf("event_from = %v, want %v", got, want)
	}
	if !strings.Contains(m.Abstraction, "yesterday [7 May 2023]") || !slices.Contains(m.Cues, "7 May 2023") {
		t.Errorf("abstraction %q, cues %q lack the resolved date", m.Abstraction, m.Cues)
	}
	// The absolute date is in the text index...
	got := search(t, e, engram.SearchRequest{Query: "7 May 2023", Channels: []string{engine.ChannelBM25}})
	if len(got.Hits) == 0 || got.Hits[0].Memory.ID != m.ID {
		t.Errorf("bm25 search for the date = %v, want %s", hitIDs(got), m.ID)
	}
	// ...and a question naming the day prefers what happened on it.
	got = search(t, e, engram.SearchRequest{Query: "Who went to a support group on 7 May 2023?", Explain: true})
	if len(got.Hits) == 0 || got.Hits[0].Memory.ID != m.ID || got.Hits[0].Factors[retrieval.FactorPeriod] <= 0 {
		t.Errorf("period search = %v (factors %v), want %s first", hitIDs(got), got.Hits[0].Factors, m.ID)
	}
	// Relative expressions in the query resolve against Now.
	now := session.AddDate(0, 0, 7)
	got = search(t, e, engram.SearchRequest{Query: "Who went to a support group last week?", Now: &now, Explain: true})
	if got.Hits[0].Memory.ID != m.ID || got.Hits[0].Factors[retrieval.FactorPeriod] <= 0 {
		t.Errorf("last-week search = %v (factors %v), want %s first", hitIDs(got), got.Hits[0].Factors, m.ID)
	}
}

func testSearchContext(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	res := addConversation(t, e, nsA, t0,
		"Melanie|What are you studying these days?",
		"Caroline|Counseling! I want to help trans youth.",
		"Melanie|That is lovely.",
	)
	// "studying" is only in the question; the answer is found by it.
	got := search(t, e, engram.SearchRequest{Query: "What is Caroline studying?"})
	if !slices.Contains(hitIDs(got)[:min(2, len(got.Hits))], memoryOf(t, res, 1)) {
		t.Errorf("hits %v lack the answer %s in the top 2", hitIDs(got), memoryOf(t, res, 1))
	}
}

func testSearchCJK(t *testing.T, open Open) {
	// The bag embedder cannot split CJK text into words, so the text
	// index alone must find it.
	e := newEngine(t, open, engine.Options{})
	// Separate conversations: no line is indexed with another's words.
	var ids []string
	for i, turn := range []string{"李雷|我昨天在东京都买了一本书。", "韩梅梅|昨日、京都で抹茶を飲みました。", "Ann|We had pizza in Rome.", "민수|어제 서울에서 친구를 만났어요."} {
		res := addConversation(t, e, nsA, t0.Add(time.Duration(i)*24*time.Hour), turn)
		ids = append(ids, memoryOf(t, res, 0))
	}
	for _, tt := range []struct {
		q    string
		want int
	}{
		{"东京", 0},
		{"东京都的书", 0},
		{"抹茶", 1},
		{"서울", 3},
	} {
		got := search(t, e, engram.SearchRequest{Query: tt.q})
		if len(got.Hits) == 0 || got.Hits[0].Memory.ID != ids[tt.want] {
			t.Errorf("search %q = %v, want %s first", tt.q, hitIDs(got), ids[tt.want])
		}
	}
	m, err := e.GetMemory(ctx, scA, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.Language != "zh" || m.Value != "我昨天在东京都买了一本书。" {
		t.Errorf("CJK memory language %q, value %q", m.Language, m.Value)
	}
}

func testSearchBudget(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	var turns []string
	for i := range 30 {
		turns = append(turns, "Ann|I went hiking in the hills again, trip number "+strconv.Itoa(i)+" "+strings.Repeat("x", i%5+1))
	}
	addConversation(t, e, nsA, t0, turns...)
	got := search(t, e, engram.SearchRequest{Query: "hiking", Budget: 120})
	if got.Tokens <= 0 || got.Tokens > 120 {
		t.Fatalf("context tokens = %d, want within (0, 120]", got.Tokens)
	}
	lines := strings.Split(got.Context, "\n")
	if len(lines) != len(got.Hits) || len(got.Hits) == 0 {
		t.Fatalf("%d context lines for %d hits", len(lines), len(got.Hits))
	}
	sum := 0
	for i, h := range got.Hits {
		if h.Tokens <= 0 {
			t.Errorf("hit %d has no token count", i)
		}
		sum += h.Tokens + 1
		if want := retrieval.Render(&h.Memory); lines[i] != want {
			t.Errorf("context line %d = %q, want %q", i, lines[i], want)
		}
		if len(h.Memory.Sources) == 0 {
			t.Errorf("hit %d cites no episode", i)
		}
	}
	if sum != got.Tokens {
		t.Errorf("hit tokens sum to %d, context has %d", sum, got.Tokens)
	}
	if !strings.HasPrefix(lines[0], "[2024-05-08 ") || !strings.Contains(lines[0], "] Ann: I went hiking") {
		t.Errorf("context line %q lacks the time and speaker", lines[0])
	}
	// Without K a budget considers more than the default 10 hits.
	big := search(t, e, engram.SearchRequest{Query: "hiking", Budget: 4000})
	if len(big.Hits) != 30 {
		t.Errorf("budget 4000 assembled %d hits, want all 30", len(big.Hits))
	}
	// No budget, no context.
	if plain := search(t, e, engram.SearchRequest{Query: "hiking"}); plain.Context != "" || plain.Tokens != 0 || plain.Hits[0].Tokens != 0 {
		t.Errorf("search without a budget returned a context")
	}
	for _, b := range []int{-1, engram.MaxBudget + 1} {
		_, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "hiking", Budget: b})
		if code(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "budget") {
			t.Errorf("budget %d: err = %v, want EINVALID naming the budget", b, err)
		}
	}
}

func testSearchExplain(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}})
	addConversation(t, e, nsA, t0, "Ann|We adopted a beagle named Biscuit.", "Bob|Biscuit is a lovely name.")
	got := search(t, e, engram.SearchRequest{Query: "beagle Biscuit", Explain: true})
	if len(got.Hits) == 0 {
		t.Fatal("no hits")
	}
	h := got.Hits[0]
	if len(h.Explain) == 0 || h.Factors[retrieval.FactorFused] <= 0 || h.Factors[retrieval.FactorFinal] != h.Score {
		t.Errorf("explained hit: explain %+v, factors %v, score %v", h.Explain, h.Factors, h.Score)
	}
	for _, c := range h.Explain {
		if c.Rank < 1 || (c.Channel != engine.ChannelBM25 && c.Channel != engine.ChannelDense) {
			t.Errorf("channel hit %+v", c)
		}
	}
	quiet := search(t, e, engram.SearchRequest{Query: "beagle Biscuit"})
	if quiet.Hits[0].Explain != nil || quiet.Hits[0].Factors != nil {
		t.Errorf("explanation without Explain")
	}
}

func testSearchPlainChannels(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}})
	addConversation(t, e, nsA, t0, "Caroline|I love painting.", "Melanie|Painting is fun.")
	got := search(t, e, engram.SearchRequest{Query: "What does Caroline paint?", Channels: []string{engine.ChannelBM25}, Explain: true})
	for _, h := range got.Hits {
		if _, ok := h.Factors[retrieval.FactorSpeaker]; ok {
			t.Errorf("a channel-restricted search applied the speaker boost: %v", h.Factors)
		}
		if len(h.Explain) != 1 || h.Explain[0].Channel != engine.ChannelBM25 {
			t.Errorf("bm25-only hit explained as %+v", h.Explain)
		}
	}
}

// testSearchMIRaS: of memories that match a query equally, the one held
// with more confidence, the more important one and the more recent one
// rank first.
func testSearchMIRaS(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	old, recent := t0.Add(-400*24*time.Hour), t0.Add(-24*time.Hour)
	add := func(value string, conf, imp float64, from time.Time) string {
		t.Helper()
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{
			Kind: engram.KindSemantic, Value: value, Confidence: conf, Importance: imp, ValidFrom: &from,
		}}})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0].ID
	}
	for _, tc := range []struct {
		name        string
		first, then [3]any // value, confidence, importance
		firstAt     time.Time
		thenAt      time.Time
	}{
		{"confidence", [3]any{"Ann's locker code is 4512", 0.9, 0.5}, [3]any{"Ann's locker code is 4521", 0.3, 0.5}, recent, recent},
		{"importance", [3]any{"Ann's gate code is 7788", 1.0, 0.9}, [3]any{"Ann's gate code is 7878", 1.0, 0.2}, recent, recent},
		{"recency", [3]any{"Ann's bike lock code is 1199", 1.0, 0.5}, [3]any{"Ann's bike lock code is 9911", 1.0, 0.5}, recent, old},
	} {
		// Both match the query's words alike, a near-tie that only the
		// MIRaS signals break (they never overturn a clear verdict: see
		// testSearchAgreeingChannels).
		weak := add(tc.then[0].(string), tc.then[1].(float64), tc.then[2].(float64), tc.thenAt)
		strong := add(tc.first[0].(string), tc.first[1].(float64), tc.first[2].(float64), tc.firstAt)
		words := strings.Fields(tc.first[0].(string))
		q := strings.Join(words[:len(words)-1], " ") // the shared words
		got := search(t, e, engram.SearchRequest{Query: q, K: 10, Now: &t0})
		ids := hitIDs(got)
		if i, j := slices.Index(ids, strong), slices.Index(ids, weak); i < 0 || j < 0 || i > j {
			t.Errorf("%s: hits %v, want %s before %s", tc.name, ids, strong, weak)
		}
	}
}

// testSearchTemporal: a question naming a period finds what happened in it
// though no word of the question matches, and only in the caller's scope.
func testSearchTemporal(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	sat := time.Date(2023, 5, 6, 10, 0, 0, 0, time.UTC)
	addConversation(t, e, nsA, sat.AddDate(0, 0, -16), "Caroline|We baked bread at home.")
	hike := addConversation(t, e, nsA, sat, "Caroline|We hiked the ridge trail with the dogs.")
	other := addConversation(t, e, nsB, sat, "Bob|We hiked the ridge trail with the dogs.")
	now := time.Date(2023, 5, 10, 9, 0, 0, 0, time.UTC)
	got := search(t, e, engram.SearchRequest{Query: "What happened last weekend?", Now: &now, Explain: true})
	if len(got.Hits) != 1 || got.Hits[0].Memory.ID != memoryOf(t, hike, 0) {
		t.Fatalf("last weekend = %v, want only %s", hitIDs(got), memoryOf(t, hike, 0))
	}
	if ch := got.Hits[0].Explain; len(ch) == 0 || ch[0].Channel != retrieval.ChannelTemporal {
		t.Errorf("explain %+v, want the temporal channel", ch)
	}
	if slices.Contains(hitIDs(got), memoryOf(t, other, 0)) {
		t.Errorf("another user's memory of the same weekend was found")
	}
	// A filter that leaves nothing of the period adds nothing.
	before := time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC)
	got = search(t, e, engram.SearchRequest{Query: "What happened last weekend?", Now: &now, Filter: engram.MemoryFilter{ValidBefore: &before}})
	if len(got.Hits) != 0 {
		t.Errorf("filtered to before the period = %v, want none", hitIDs(got))
	}
}

// testSearchTemporalWords: within the period a question names, its words
// pick the memory, even when that memory ranks too low in the whole store
// for the full-text channel's pool.
func testSearchTemporalWords(t *testing.T, open Open) {
	cfg := retrieval.DefaultConfig()
	cfg.Pool = retrieval.MinZPool
	e := newEngine(t, open, engine.Options{Retrieval: &cfg})
	sat := time.Date(2023, 5, 6, 10, 0, 0, 0, time.UTC)
	for i := range cfg.Pool + 2 {
		addConversation(t, e, nsA, sat.AddDate(0, 0, -30-i), "Caroline|We joined the class, joined that class again, the class we joined.")
	}
	// The one of the period is stored first, so listing the period newest
	// first would put it last.
	pottery := addConversation(t, e, nsA, sat, "Caroline|I joined a pottery class.")
	addConversation(t, e, nsA, sat.Add(2*time.Hour), "Caroline|We hiked the ridge trail.")
	addConversation(t, e, nsA, sat.Add(4*time.Hour), "Caroline|We cooked a big dinner.")
	now := time.Date(2023, 5, 10, 9, 0, 0, 0, time.UTC)
	got := search(t, e, engram.SearchRequest{Query: "Which class did I join last weekend?", K: 1, Now: &now, Explain: true})
	if len(got.Hits) == 0 || got.Hits[0].Memory.ID != memoryOf(t, pottery, 0) {
		t.Fatalf("hits %v, want %s first", hitIDs(got), memoryOf(t, pottery, 0))
	}
}

// testSearchAgreeingChannels: a fact both channels rank first stays first
// whatever the MIRaS signals of the rest say, at every pool size: fresh,
// important, confident memories that do not answer never overturn it (the
// rank fusion of a small pool once let the recency of memories stored
// today decide).
func testSearchAgreeingChannels(t *testing.T, open Open) {
	since := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	facts := []struct{ value, query string }{
		{"Alice lives in Porto.", "Which city does Alice live in?"},
		{"Alice works at Initech as a designer.", "Where does Alice work?"},
		{"Alice drives a red Volvo.", "What car does Alice drive?"},
	}
	for _, size := range []int{3, 10, 30, 100, 1000} {
		for _, emb := range []engram.Embedder{nil, &BagEmbedder{}} {
			e := newEngine(t, open, engine.Options{Embedder: emb})
			ids := make([]string, len(facts))
			for i, f := range facts {
				// The answers are old, unimportant and not quite sure; the
				// rest are new, important and sure.
				ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{{
					Kind: engram.KindSemantic, Value: f.value, ValidFrom: &since, Importance: 0.2, Confidence: 0.7,
				}}})
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = ms[0].ID
			}
			addFillers(t, e, size-len(facts))
			for i, f := range facts {
				got := search(t, e, engram.SearchRequest{Query: f.query, K: 3, Explain: true})
				if len(got.Hits) == 0 || got.Hits[0].Memory.ID != ids[i] {
					t.Errorf("pool %d, embedder %v: %q ranks %v first, want %q", size, emb != nil, f.query, firstValue(got), f.value)
				}
			}
		}
	}
}

// addFillers stores n fresh, important memories about Alice that answer
// none of testSearchAgreeingChannels' questions.
func addFillers(t *testing.T, e *engine.Engine, n int) {
	t.Helper()
	doings := []string{"baked rye bread", "read a novel about sailors", "painted the fence green", "fed the neighbour's cat",
		"played chess with Tom", "planted tomatoes", "repaired a bicycle chain", "sang in the choir", "watched a documentary on owls",
		"wrote a letter to her aunt", "knitted a blue scarf", "visited the museum of clocks"}
	for lo := 0; lo < n; lo += engram.MaxBatch {
		var ms []engram.Memory
		for i := lo; i < min(n, lo+engram.MaxBatch); i++ {
			v := fmt.Sprintf("Alice %s on afternoon %d.", doings[i%len(doings)], i)
			ms = append(ms, engram.Memory{Kind: engram.KindSemantic, Value: v, Importance: 0.9, Confidence: 1})
		}
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: ms}); err != nil {
			t.Fatal(err)
		}
	}
}

func firstValue(res *engram.SearchResult) string {
	if len(res.Hits) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%q", res.Hits[0].Memory.Value)
}

// testSearchTemporalRetold: a turn said in the days after a period about
// something in it ("yesterday ...") belongs to the period, and the words of
// the period in the question do not make a memory that merely says them
// outrank it.
func testSearchTemporalRetold(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	mon := time.Date(2024, 5, 13, 18, 0, 0, 0, time.UTC) // the day after the week of 6 May
	addConversation(t, e, nsA, mon.AddDate(0, 0, -11), "Alice|Last Saturday I went to the museum with Paul, last week was busy.")
	zoo := addConversation(t, e, nsA, mon, "Alice|Yesterday I went to the zoo with Anna.")
	now := time.Date(2024, 5, 15, 9, 0, 0, 0, time.UTC)
	got := search(t, e, engram.SearchRequest{Query: "What did I do last week?", Now: &now, Explain: true})
	if len(got.Hits) == 0 || got.Hits[0].Memory.ID != memoryOf(t, zoo, 0) {
		t.Fatalf("last week = %v, want %s first", hitIDs(got), memoryOf(t, zoo, 0))
	}
}

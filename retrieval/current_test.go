package retrieval

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func TestTense(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ q, want string }{
		{"Where does Bob live now?", TenseNow},
		{"Where does Bob work?", TenseNow},
		{"Is Maya still vegetarian?", TenseNow},
		{"Where did Bob live before he moved?", TensePast},
		{"What did Bob use to drink?", TensePast},
		{"How many dogs did Maya have at first?", TensePast},
		{"Where did Melanie go?", TenseOpen},
		{"What has Melanie painted?", TenseOpen},
		{"What did Maya eat last week?", TenseOpen},
		{"Wo wohnt Klaus jetzt?", TenseNow},
		{"Wo arbeitet Klaus?", TenseNow},
		{"Wo hat Klaus früher gewohnt?", TensePast},
		{"¿Dónde vive Carmen ahora?", TenseNow},
		{"¿Dónde vivía Carmen antes?", TensePast},
		{"Où habite Julie maintenant ?", TenseNow},
		{"Où Julie habitait-elle auparavant ?", TensePast},
		{"Wei现在住在哪里？", TenseNow},
		{"Wei以前住在哪里？", TensePast},
	} {
		if got := Analyze(tt.q, now).Tense; got != tt.want {
			t.Errorf("Analyze(%q).Tense = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// The words that only say now leave the full-text terms, in every
// language; a query of nothing else keeps them.
func TestTermsWithoutNow(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ q, gone string }{
		{"Wo wohnt Klaus jetzt?", "jetzt"},
		{"¿Dónde vive Carmen ahora?", "ahora"},
		{"Où habite Julie maintenant ?", "maintenant"},
		{"Where does Bob currently work?", "currently"},
	} {
		if terms := Analyze(tt.q, now).Terms; slices.Contains(terms, tt.gone) {
			t.Errorf("Analyze(%q).Terms = %q, want no %q", tt.q, terms, tt.gone)
		}
	}
	if terms := Analyze("jetzt", now).Terms; !slices.Contains(terms, "jetzt") {
		t.Errorf(`Analyze("jetzt").Terms = %q, want it kept`, terms)
	}
}

var day0 = time.Date(2024, 1, 8, 9, 0, 0, 0, time.UTC)

// mem is a memory said days after day0 from episode source; a fact when
// attr is not "".
func mem(id, value string, days int, source, subject, attr string) *Candidate {
	at := day0.AddDate(0, 0, days)
	m := &engram.Memory{ID: id, Value: value, ValidFrom: &at, Sources: []string{source}, Language: "en",
		Metadata: map[string]any{engram.MetaSpeaker: "Bob"}}
	if attr != "" {
		m.Kind = engram.KindSemantic
		m.Metadata[engram.MetaFactSubject] = subject
		m.Metadata[engram.MetaFactAttribute] = attr
	}
	return &Candidate{Memory: m, Factors: map[string]float64{}}
}

// ranked gives cs falling scores in their order.
func ranked(cs ...*Candidate) []*Candidate {
	for i, c := range cs {
		c.Score = 1 - float64(i)/10
	}
	return cs
}

func ids(cs []*Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Memory.ID
	}
	return out
}

func TestCurrentOrdersFactStates(t *testing.T) {
	build := func() []*Candidate {
		return ranked(
			mem("oldturn", "I live in Berlin and I teach maths.", 0, "e1", "", ""),
			mem("oldfact", "Bob lives in Berlin", 0, "e1", "Bob", "residence"),
			mem("drink", "Bob favourite drink: coffee", 0, "e2", "Bob", "favourite drink"),
			mem("newfact", "Bob wohnt in München", 60, "e3", "Bob", "residence"),
			mem("newturn", "Ich bin nach München gezogen.", 60, "e3", "", ""),
		)
	}
	cfg := DefaultConfig()
	for _, tt := range []struct {
		q    string
		want []string
	}{
		// The group (both residence facts, the turns they came from)
		// takes its places latest first; the drink keeps its place.
		{"Where does Bob live now?", []string{"newfact", "newturn", "drink", "oldturn", "oldfact"}},
		{"Where did Bob live before?", []string{"oldturn", "oldfact", "drink", "newfact", "newturn"}},
		{"Where did Bob go?", []string{"oldturn", "oldfact", "drink", "newfact", "newturn"}},
		// A question about another attribute leaves the residence's
		// order alone, and puts that attribute's fact first among Bob's.
		{"What is Bob's favourite drink?", []string{"oldturn", "drink", "oldfact", "newfact", "newturn"}},
	} {
		cs := build()
		Current(Analyze(tt.q, day0.AddDate(0, 6, 0)), cs, cfg)
		if got := ids(cs); !slices.Equal(got, tt.want) {
			t.Errorf("%q: order %v, want %v", tt.q, got, tt.want)
		}
		for i := 1; i < len(cs); i++ {
			if cs[i].Score > cs[i-1].Score {
				t.Errorf("%q: scores rise at %d: %v then %v", tt.q, i, cs[i-1].Score, cs[i].Score)
			}
		}
	}
	cs := build()
	Current(Analyze("Where does Bob live now?", day0), cs, Config{})
	if got := ids(cs); got[0] != "oldturn" {
		t.Errorf("Current 0 reordered: %v", got)
	}
	cs = build()
	Current(Analyze("Where does Bob live now?", day0), cs, cfg)
	if _, ok := cs[0].Factors[FactorCurrent]; !ok {
		t.Errorf("a moved hit records no %s factor: %v", FactorCurrent, cs[0].Factors)
	}
}

// Two memories of the same form said years apart, neither a fact: the
// newer first for the present, the older for the past; a turn and the
// window that repeats it (one source) are one statement, not two states.
func TestCurrentSameForm(t *testing.T) {
	build := func() []*Candidate {
		return ranked(
			mem("old", "The weekly planning meeting with the design team is on Mondays at 10:00.", 0, "e1", "", ""),
			mem("other", "The design team moved to the third floor.", 10, "e2", "", ""),
			mem("new", "The weekly planning meeting with the design team is on Thursdays at 15:00.", 800, "e3", "", ""),
		)
	}
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"When is the weekly planning meeting?", []string{"new", "other", "old"}},
		{"When was the planning meeting at first?", []string{"old", "other", "new"}},
	} {
		cs := build()
		Current(Analyze(tt.q, day0.AddDate(3, 0, 0)), cs, DefaultConfig())
		if got := ids(cs); !slices.Equal(got, tt.want) {
			t.Errorf("%q: order %v, want %v", tt.q, got, tt.want)
		}
	}
	cs := ranked(
		mem("turn", "I moved the weekly planning meeting to Mondays at ten.", 0, "e1", "", ""),
		mem("window", "I moved the weekly planning meeting to Mondays at ten. Sounds good.", 1, "e1", "", ""),
	)
	Current(Analyze("When is the weekly planning meeting?", day0.AddDate(1, 0, 0)), cs, DefaultConfig())
	if got := ids(cs); got[0] != "turn" {
		t.Errorf("one statement in two memories reordered: %v", got)
	}
}

// An as-of question about where someone lived puts her residence before
// her other facts, whatever the channels made of them.
func TestCurrentAskedFactFirst(t *testing.T) {
	cs := ranked(
		mem("car", "Alice hat autos: zwei", 0, "e3", "Alice", "count of autos"),
		mem("work", "Alice arbeitet bei Siemens", 0, "e2", "Alice", "workplace"),
		mem("home", "Alice wohnt in Berlin", 0, "e1", "Alice", "residence"),
	)
	asOf := day0.AddDate(0, 0, 10)
	cfg := DefaultConfig()
	cfg.AsOf = &asOf
	Current(Analyze("Wo wohnte Alice?", asOf), cs, cfg)
	if got := ids(cs); got[0] != "home" {
		t.Errorf("order %v, want the residence first", got)
	}
}

// A turn whose fact a newer one superseded (so no fact of it is among
// the candidates) moves below the newer fact for the present.
func TestCurrentStaleTurn(t *testing.T) {
	changed := day0.AddDate(0, 0, 60)
	build := func() []*Candidate {
		old := mem("oldturn", "Berlin has been my home for years.", 0, "e1", "", "")
		old.Memory.Metadata[engram.MetaStaleTerms] = []string{"live", "lives"}
		old.Memory.Metadata[engram.MetaStaleSince] = map[string]any{"live": changed.Format(time.RFC3339), "lives": changed.Format(time.RFC3339)}
		return ranked(old, mem("weather", "The weather is grey.", 1, "e2", "", ""), mem("newfact", "Bob lives in Munich", 60, "e3", "Bob", "residence"))
	}
	cs := build()
	Current(Analyze("Where does Bob live now?", day0.AddDate(0, 6, 0)), cs, DefaultConfig())
	if got := ids(cs); !slices.Equal(got, []string{"newfact", "weather", "oldturn"}) {
		t.Errorf("now: order %v, want the new fact first", got)
	}
}

// TestTenseUndecided checks that a question too short for its language
// to be decided reads the markers of every language: "avant" still asks
// about the past, "jetzt" about the present.
func TestTenseUndecided(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ q, want string }{
		{"Où habitait Bob avant ?", TensePast},
		{"Wo wohnte Bob vorher?", TensePast},
		{"Où travaille Bob ?", TenseNow},
		{"Wo arbeitet Bob jetzt?", TenseNow},
	} {
		q := Analyze(tt.q, now)
		if q.Lang != "" {
			t.Errorf("Analyze(%q).Lang = %q: the case no longer tests an undecided language", tt.q, q.Lang)
		}
		if q.Tense != tt.want {
			t.Errorf("Analyze(%q).Tense = %q, want %q", tt.q, q.Tense, tt.want)
		}
	}
}

// TestStaleForms checks that a turn whose fact was replaced is asked
// about by any form of its attribute's words, in the question's language
// or, when that is undecided, the turn's ("wohnte", "habitait", "vivía"),
// and that a question about the past does not rank it lower.
func TestStaleForms(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	turn := func(tag string, terms ...string) *engram.Memory {
		return &engram.Memory{Language: tag, Confidence: 1, Importance: 0.5, Metadata: map[string]any{engram.MetaStaleTerms: terms}}
	}
	for _, tt := range []struct {
		q     string
		m     *engram.Memory
		asks  bool
		stale bool // ranked lower
	}{
		{"Wo wohnte Bob?", turn("de", "wohnt", "wohnen"), true, true},
		{"Wo wohnte Bob früher?", turn("de", "wohnt", "wohnen"), true, false},
		{"Wo hat Bob gewohnt?", turn("de", "wohnt", "wohnen"), true, true},
		{"Où habitait Bob ?", turn("fr", "habite", "vit"), true, true},
		{"Où habitait Bob avant ?", turn("fr", "habite", "vit"), true, false},
		{"Où Bob habitait-il ?", turn("fr", "habite", "vit"), true, true},
		{"¿Dónde vivía Bob?", turn("es", "vive", "vivir"), true, true},
		{"Où habitait Bob ?", turn("", "habite", "vit"), true, true},
		{"Where did Bob work?", turn("en", "live", "lives"), false, false},
		{"Wo arbeitet Bob?", turn("de", "wohnt", "wohnen"), false, false},
	} {
		q := Analyze(tt.q, now)
		if got := asksStale(q, tt.m, nil); got != tt.asks {
			t.Errorf("asksStale(%q, %v) = %v, want %v", tt.q, tt.m.Metadata[engram.MetaStaleTerms], got, tt.asks)
		}
		c := &Candidate{Memory: tt.m, Fused: 1, Factors: map[string]float64{}}
		boost(q, nil, c, DefaultConfig())
		if _, got := c.Factors[FactorStale]; got != tt.stale {
			t.Errorf("%q ranks %v lower: %v, want %v", tt.q, tt.m.Metadata[engram.MetaStaleTerms], got, tt.stale)
		}
	}
}

// A Chinese question has no spaces between its words: the words of an
// attribute are found within it, so the newer workplace and drink rank
// above the turn of the older one for the present, and the old turn keeps
// its place for a question about the past.
func TestCurrentChinese(t *testing.T) {
	changed := day0.AddDate(0, 0, 60)
	build := func(attr, turn, fact string, terms []string) []*Candidate {
		old := mem("oldturn", turn, 0, "e1", "", "")
		old.Memory.Language = "zh"
		old.Memory.Metadata[engram.MetaSpeaker] = "Wei"
		old.Memory.Metadata[engram.MetaStaleTerms] = terms
		since := map[string]any{}
		for _, w := range terms {
			since[w] = changed.Format(time.RFC3339)
		}
		old.Memory.Metadata[engram.MetaStaleSince] = since
		other := mem("weather", "今天天气很好，我们去公园散步吧。", 1, "e2", "", "")
		other.Memory.Language = "zh"
		f := mem("newfact", fact, 60, "e3", "Wei", attr)
		f.Memory.Language = "zh"
		f.Memory.Metadata[engram.MetaFactTerms] = terms
		return ranked(old, other, f)
	}
	for _, tt := range []struct {
		attr, turn, fact, now, past string
		terms                       []string
	}{
		{"workplace", "我在华为工作，做手机芯片测试。", "Wei 工作单位是 腾讯", "Wei在哪里工作？", "Wei以前在哪里工作？", []string{"工作", "上班"}},
		{"drink", "我每天早上喝咖啡，不然没精神。", "Wei 喝 绿茶", "Wei喝什么？", "Wei以前喝什么？", []string{"喝"}},
		{"residence", "我住在北京，在海淀区。", "Wei 住在 上海", "Wei现在住在哪里？", "Wei以前住在哪里？", []string{"住", "住在"}},
	} {
		cs := build(tt.attr, tt.turn, tt.fact, tt.terms)
		Current(Analyze(tt.now, day0.AddDate(0, 6, 0)), cs, DefaultConfig())
		if got := ids(cs); !slices.Equal(got, []string{"newfact", "weather", "oldturn"}) {
			t.Errorf("%q: order %v, want the new fact first", tt.now, got)
		}
		cs = build(tt.attr, tt.turn, tt.fact, tt.terms)
		Current(Analyze(tt.past, day0.AddDate(0, 6, 0)), cs, DefaultConfig())
		if got := ids(cs); got[0] != "oldturn" {
			t.Errorf("%q: order %v, want the old turn first", tt.past, got)
		}
	}
}

package retrieval_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

var now = time.Date(2023, 5, 30, 12, 0, 0, 0, time.UTC) // a Tuesday

func TestAnalyzeViews(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"What kind of art does Caroline make?", []string{
			"art does Caroline make", "art does make",
			"What kind of art does Caroline make?", "What kind of art does make?"}},
		{"What is Melanie's favourite book?", []string{
			"Melanie's favourite book", "favourite book",
			"What is Melanie's favourite book?", "What is favourite book?"}},
		// No names: the stripped question and the question as typed.
		{"What did I bake for my friend?", []string{"I bake for my friend", "What did I bake for my friend?"}},
		// A query that is only a name keeps it.
		{"Caroline", []string{"Caroline"}},
		// Only whole words go: "Al" leaves "Also" alone.
		{"Also, what did Al cook?", []string{"Also, what did Al cook", "Also, what did cook", "Also, what did Al cook?", "Also, what did cook?"}},
	}
	for _, tt := range tests {
		if got := retrieval.Analyze(tt.in, now).Views; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Analyze(%q).Views = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAnalyzeParts(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Which seeds were started first, the tomatoes or the marigolds?", []string{"the tomatoes", "the marigolds"}},
		{"Which pet did Jolene adopt first - Susie or Seraphim?", []string{"Susie", "Seraphim"}},
		{"Which event happened first: the concert or the wedding?", []string{"the concert", "the wedding"}},
		{"Which came first — the move or the new job?", []string{"the move", "the new job"}},
		{"How many days passed between the day I planted my herbs and the day I harvested them?",
			[]string{"the day I planted my herbs", "the day I harvested them"}},
		// Not a comparison, or no alternatives to split.
		{"Would you like tea, coffee or juice?", nil},
		{"Did I buy the necklace or the album first?", nil},
		{"What did Caroline paint?", nil},
	}
	for _, tt := range tests {
		if got := retrieval.Analyze(tt.in, now).Parts; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Analyze(%q).Parts = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAnalyzeDenseText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"When did Caroline go to the LGBTQ support group?", "Caroline go to the LGBTQ support group"},
		{"What did Caroline research?", "Caroline research"},
		{"What kind of art does Caroline make?", "art does Caroline make"},
		{"How many times has Melanie gone to the beach?", "times has Melanie gone to the beach"},
		{"Caroline's favourite book", "Caroline's favourite book"},
		{"What?", "What"},
		{"東京で何を買いましたか？", "東京で何を買いましたか？"},
	}
	for _, tt := range tests {
		if got := retrieval.Analyze(tt.in, now).Dense; got != tt.want {
			t.Errorf("Analyze(%q).Dense = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAnalyzeTermsAndNames(t *testing.T) {
	q := retrieval.Analyze("What kind of books did Melanie read in New York?", now)
	if want := []string{"books", "melanie", "read", "new", "york"}; !reflect.DeepEqual(q.Terms, want) {
		t.Errorf("terms = %q, want %q", q.Terms, want)
	}
	if want := []string{"Melanie", "New York"}; !reflect.DeepEqual(q.Names, want) {
		t.Errorf("names = %q, want %q", q.Names, want)
	}
}

func TestAnalyzeTime(t *testing.T) {
	tests := []struct {
		q        string
		temporal bool
		periods  []string // labels
		months   []time.Month
	}{
		{"When did Caroline go hiking?", true, nil, nil},
		{"What did Caroline paint?", false, nil, nil},
		{"Which event happened first, the wedding or the move?", true, nil, nil},
		{"What did John do on 8 May, 2022?", true, []string{"8 May 2022"}, nil},
		{"Which shoes did I clean last month?", true, []string{"April 2023"}, nil},
		{"Where did Melanie camp in June?", true, nil, []time.Month{time.June}},
		{"How many days ago did I watch the Super Bowl?", true, nil, nil},
	}
	for _, tt := range tests {
		q := retrieval.Analyze(tt.q, now)
		if q.Temporal != tt.temporal {
			t.Errorf("Analyze(%q).Temporal = %v, want %v", tt.q, q.Temporal, tt.temporal)
		}
		var labels []string
		for _, p := range q.Periods {
			labels = append(labels, p.Label())
		}
		if !slices.Equal(labels, tt.periods) {
			t.Errorf("Analyze(%q) periods = %q, want %q", tt.q, labels, tt.periods)
		}
		if !slices.Equal(q.Months, tt.months) {
			t.Errorf("Analyze(%q) months = %v, want %v", tt.q, q.Months, tt.months)
		}
	}
}

func TestAnalyzeWhom(t *testing.T) {
	tests := []struct {
		q               string
		assistant, user bool
	}{
		{"What degree did I graduate with?", false, true},
		{"Can you remind me what you recommended for the Jamaican dish?", true, false},
		{"I'm looking back at our previous chat about the shift rotation.", false, true},
		{"In our last chat I mentioned a show. Do you remember which show I used as an example?", false, true},
		{"What did Caroline research?", false, false},
	}
	for _, tt := range tests {
		q := retrieval.Analyze(tt.q, now)
		if q.AsksAssistant != tt.assistant || q.AsksUser != tt.user {
			t.Errorf("Analyze(%q) assistant/user = %v/%v, want %v/%v", tt.q, q.AsksAssistant, q.AsksUser, tt.assistant, tt.user)
		}
	}
}

func TestLexical(t *testing.T) {
	q := retrieval.Analyze("What did Caroline research in Paris?", now)
	if got, want := q.Lexical(false, nil), "caroline research paris"; got != want {
		t.Errorf("Lexical = %q, want %q", got, want)
	}
	speakers := retrieval.Speakers{}
	speakers.Add(&engram.Memory{Metadata: map[string]any{"speaker": "Caroline Smith"}})
	got := q.Lexical(true, speakers.Named)
	for _, w := range []string{"research", "researching", "researched", "paris"} {
		if !slices.Contains(strings.Fields(got), w) {
			t.Errorf("Lexical with inflections = %q, lacks %q", got, w)
		}
	}
	if strings.Contains(got, "caroline") {
		t.Errorf("Lexical = %q keeps the speaker's name", got)
	}
	// CJK runs become their bigrams and their characters, each a term of
	// its own.
	cjk := retrieval.Analyze("东京都的书", now)
	if got, want := cjk.Lexical(true, nil), "东京 京都 都的 的书 东 京 都 的 书"; got != want {
		t.Errorf("CJK Lexical = %q, want %q", got, want)
	}
	// A query of nothing but names keeps its text.
	only := retrieval.Analyze("Caroline?", now)
	if got := only.Lexical(false, speakers.Named); got != "Caroline?" {
		t.Errorf("Lexical of a lone name = %q", got)
	}
}

func TestInflections(t *testing.T) {
	tests := []struct {
		w    string
		want []string // must be among the forms
		not  []string
	}{
		{"research", []string{"researching", "researched", "researches"}, nil},
		{"researching", []string{"research", "researched"}, nil},
		{"painted", []string{"paint", "painting", "paints"}, nil},
		{"baking", []string{"bake", "baked", "bakes"}, nil},
		{"studied", []string{"study", "studies", "studying"}, nil},
		{"planning", []string{"plan", "planned"}, nil},
		{"dogs", []string{"dog"}, nil},
		{"classes", []string{"class"}, nil},
		{"bus", nil, []string{"bu"}},
	}
	for _, tt := range tests {
		got := retrieval.Inflections(tt.w)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("Inflections(%q) = %q, lacks %q", tt.w, got, w)
			}
		}
		for _, w := range append(tt.not, tt.w) {
			if slices.Contains(got, w) {
				t.Errorf("Inflections(%q) = %q, holds %q", tt.w, got, w)
			}
		}
	}
	for _, w := range []string{"cat", "2023", "東京", "Café"} {
		if got := retrieval.Inflections(w); len(got) != 0 {
			t.Errorf("Inflections(%q) = %q, want none", w, got)
		}
	}
}

// TestAnalyzeLanguages reads a question in each language: its language,
// names, dense text, periods (against now, a Tuesday) and question kind.
func TestAnalyzeLanguages(t *testing.T) {
	tests := []struct {
		in, lang string
		names    []string
		dense    string
		periods  []string // from..to of each, dates
		months   []time.Month
		temporal bool
		answer   string
		asksUser bool
	}{
		{"Wann war ich letzte Woche mit meinem Hund im Park?", "de", nil, "ich letzte Woche mit meinem Hund im Park",
			[]string{"2023-05-22..2023-05-29"}, nil, true, "", true},
		{"Wo war ich gestern mit Anna?", "de", []string{"Anna"}, "ich gestern mit Anna",
			[]string{"2023-05-29..2023-05-30"}, nil, true, retrieval.AnswerPlace, true},
		{"¿Dónde estuve con Juan la semana pasada?", "es", []string{"Juan"}, "estuve con Juan la semana pasada",
			[]string{"2023-05-22..2023-05-29"}, nil, true, retrieval.AnswerPlace, false},
		{"¿Cuántos libros leí en mayo?", "es", nil, "libros leí en mayo", nil, []time.Month{time.May}, true, retrieval.AnswerCount, false},
		{"Quand est-ce que je suis allé au parc avec Marie ?", "fr", []string{"Marie"}, "je suis allé au parc avec Marie",
			nil, nil, true, "", true},
		{"Qu'est-ce que j'ai fait il y a deux semaines ?", "fr", nil, "j'ai fait il y a deux semaines",
			[]string{"2023-05-15..2023-05-22"}, nil, true, "", true},
		{"我上周六和谁去了公园？", "zh", nil, "我上周六和谁去了公园？", []string{"2023-05-27..2023-05-28"}, nil, true, retrieval.AnswerPerson, true},
		{"先週、どこに行きましたか？", "ja", nil, "先週、どこに行きましたか？", []string{"2023-05-22..2023-05-29"}, nil, true, retrieval.AnswerPlace, false},
	}
	for _, tt := range tests {
		q := retrieval.Analyze(tt.in, now)
		if q.Lang != tt.lang {
			t.Errorf("Analyze(%q).Lang = %q, want %q", tt.in, q.Lang, tt.lang)
		}
		if !slices.Equal(q.Names, tt.names) {
			t.Errorf("Analyze(%q).Names = %q, want %q", tt.in, q.Names, tt.names)
		}
		if q.Dense != tt.dense {
			t.Errorf("Analyze(%q).Dense = %q, want %q", tt.in, q.Dense, tt.dense)
		}
		var periods []string
		for _, p := range q.Periods {
			periods = append(periods, p.From.Format(time.DateOnly)+".."+p.To.Format(time.DateOnly))
		}
		if !slices.Equal(periods, tt.periods) {
			t.Errorf("Analyze(%q).Periods = %q, want %q", tt.in, periods, tt.periods)
		}
		if !slices.Equal(q.Months, tt.months) {
			t.Errorf("Analyze(%q).Months = %v, want %v", tt.in, q.Months, tt.months)
		}
		if q.Temporal != tt.temporal || q.Answer != tt.answer || q.AsksUser != tt.asksUser {
			t.Errorf("Analyze(%q): temporal %v, answer %q, asks user %v; want %v, %q, %v",
				tt.in, q.Temporal, q.Answer, q.AsksUser, tt.temporal, tt.answer, tt.asksUser)
		}
		if q.AsksAssistant || len(q.Parts) > 0 {
			t.Errorf("Analyze(%q): English patterns fired: asks assistant %v, parts %q", tt.in, q.AsksAssistant, q.Parts)
		}
	}
}

func TestLexicalStems(t *testing.T) {
	tests := []struct {
		in   string
		want []string // terms the lexical text must hold
		not  []string
	}{
		{"Wann war ich mit meinen Hunden im Park?", []string{"hunden", "hund", "park"}, []string{"wann", "ich", "im"}},
		{"¿Cuándo fui al parque con mis perros?", []string{"parque", "perros", "perr"}, []string{"cuándo", "con"}},
		{"Quand suis-je allé au parc avec mes chiens ?", []string{"parc", "chiens", "chien"}, []string{"quand", "avec"}},
		{"When did I paint the fences?", []string{"fences", "fence", "paint", "painted"}, nil},
	}
	for _, tt := range tests {
		got := strings.Fields(retrieval.Analyze(tt.in, now).Lexical(true, nil))
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("Lexical(%q) = %q, lacks %q", tt.in, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got, w) {
				t.Errorf("Lexical(%q) = %q, holds %q", tt.in, got, w)
			}
		}
	}
}

func TestAnalyzeDropsRelativeWords(t *testing.T) {
	now := time.Date(2024, 5, 15, 9, 0, 0, 0, time.UTC)
	for q, want := range map[string]string{
		"What did I do last week?":                  "",
		"Which museum did I visit two weeks ago?":   "museum visit",
		"Was habe ich letzte Woche gekocht?":        "gekocht",
		"What did I cook in May 2023?":              "cook may 2023", // absolute dates stay: they match the labels formation writes
		"What happened last week in the last game?": "happened game",
		"先週何をしましたか？":                                "何をしましたか", // cut out of a CJK run
		"我上周去了长城":                                   "我 去了长城",
	} {
		if got := strings.Join(retrieval.Analyze(q, now).Terms, " "); got != want {
			t.Errorf("Analyze(%q).Terms = %q, want %q", q, got, want)
		}
	}
}

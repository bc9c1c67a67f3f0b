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
	// CJK runs become their bigrams, each a term of its own.
	cjk := retrieval.Analyze("东京都的书", now)
	if got, want := cjk.Lexical(true, nil), "东京 京都 都的 的书"; got != want {
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

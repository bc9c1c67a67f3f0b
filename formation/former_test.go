package formation_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/formation"
)

// ref is the time the test turns were said.
var ref = time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)

var ns = engram.Namespace{Org: "o", Project: "p", User: "u"}

// episodes returns a conversation of turns a second apart from ref, each
// "speaker|text".
func episodes(turns ...string) []engram.Episode {
	out := make([]engram.Episode, len(turns))
	for i, t := range turns {
		sp, text, _ := strings.Cut(t, "|")
		out[i] = engram.Episode{ID: engram.NewID(), Namespace: ns, Role: "user", Speaker: sp, Content: text,
			OccurredAt: ref.Add(time.Duration(i) * time.Second)}
	}
	return out
}

func form(t *testing.T, f formation.Former, eps []engram.Episode) []engram.Memory {
	t.Helper()
	ops, err := f.Form(context.Background(), engram.FormRequest{Episodes: eps})
	if err != nil {
		t.Fatal(err)
	}
	var out []engram.Memory
	for _, op := range ops {
		if op.Op != engram.OpAdd {
			t.Fatalf("op %s, want ADD", op.Op)
		}
		m := op.Memory
		if err := m.Validate(); err != nil {
			t.Fatalf("formed memory does not validate: %v", err)
		}
		out = append(out, m)
	}
	return out
}

func TestFormerTurn(t *testing.T) {
	eps := episodes("Caroline|I went to a LGBTQ support group yesterday and it was so powerful.")
	ms := form(t, formation.Former{}, eps)
	if len(ms) != 1 {
		t.Fatalf("%d memories, want 1", len(ms))
	}
	m := ms[0]
	if got, want := m.Value, eps[0].Content; got != want {
		t.Errorf("value = %q, want the episode verbatim %q", got, want)
	}
	// Speaker attribution and the resolved date, in the indexed abstraction.
	if got, want := m.Abstraction, "Caroline: I went to a LGBTQ support group yesterday [7 May 2023] and it was so powerful."; got != want {
		t.Errorf("abstraction = %q, want %q", got, want)
	}
	if got, want := m.Cues, []string{"Caroline", "LGBTQ", "7 May 2023"}; !reflect.DeepEqual(got, want) {
		t.Errorf("cues = %q, want %q", got, want)
	}
	if got, want := m.Metadata[engram.MetaEventFrom], "2023-05-07"; got != want {
		t.Errorf("event_from = %v, want %v", got, want)
	}
	if got, want := m.Metadata[engram.MetaEventTo], "2023-05-08"; got != want {
		t.Errorf("event_to = %v, want %v", got, want)
	}
	if got := m.Metadata[engram.MetaSpeaker]; got != "Caroline" {
		t.Errorf("speaker = %v", got)
	}
	if m.ValidFrom == nil || !m.ValidFrom.Equal(eps[0].OccurredAt) {
		t.Errorf("valid_from = %v, want the episode's time", m.ValidFrom)
	}
	if !slices.Equal(m.Sources, []string{eps[0].ID}) {
		t.Errorf("sources = %v", m.Sources)
	}
	if m.Kind != engram.KindEpisodic {
		t.Errorf("kind = %s", m.Kind)
	}
}

func TestFormerWithoutSpeakerOrDates(t *testing.T) {
	eps := []engram.Episode{{ID: engram.NewID(), Namespace: ns, Role: "assistant", Content: "Sure, here are three ideas.", OccurredAt: ref}}
	m := form(t, formation.Former{}, eps)[0]
	if got, want := m.Abstraction, "Sure, here are three ideas."; got != want {
		t.Errorf("abstraction = %q, want %q", got, want)
	}
	if _, ok := m.Metadata[engram.MetaEventFrom]; ok {
		t.Errorf("event time set for a text without dates")
	}
	if got := m.Metadata[engram.MetaRole]; got != "assistant" {
		t.Errorf("role = %v", got)
	}
	if len(m.Cues) != 0 {
		t.Errorf("cues = %q, want none", m.Cues)
	}
}

func TestFormerContextAndLinks(t *testing.T) {
	eps := episodes(
		"Melanie|What have you been researching lately?",
		"Caroline|Adoption agencies! It's been a dream.",
		"Melanie|That's wonderful.",
	)
	// Turns far apart in time belong to different conversations.
	eps = append(eps, engram.Episode{ID: engram.NewID(), Namespace: ns, Speaker: "Caroline", Content: "Hi again!", OccurredAt: ref.Add(48 * time.Hour)})
	ms := form(t, formation.Former{Context: 100, After: 100, Link: true}, eps)
	if len(ms) != 4 {
		t.Fatalf("%d memories", len(ms))
	}
	if got := ms[1].Abstraction; !strings.Contains(got, "Melanie: What have you been researching lately?") {
		t.Errorf("answer's abstraction %q lacks the question before it", got)
	}
	if got := ms[0].Abstraction; !strings.Contains(got, "Caroline: Adoption agencies!") {
		t.Errorf("question's abstraction %q lacks the answer after it", got)
	}
	if got := ms[3].Abstraction; got != "Caroline: Hi again!" {
		t.Errorf("a new conversation's first turn got context: %q", got)
	}
	for i, m := range ms {
		if m.ID == "" {
			t.Fatalf("memory %d has no id with Link set", i)
		}
	}
	if got := ms[1].Metadata[engram.MetaPrev]; got != ms[0].ID {
		t.Errorf("prev of turn 1 = %v, want %s", got, ms[0].ID)
	}
	if got := ms[1].Metadata[engram.MetaNext]; got != ms[2].ID {
		t.Errorf("next of turn 1 = %v, want %s", got, ms[2].ID)
	}
	if _, ok := ms[2].Metadata[engram.MetaNext]; ok {
		t.Errorf("link across a conversation break")
	}
	if _, ok := ms[3].Metadata[engram.MetaPrev]; ok {
		t.Errorf("link across a conversation break")
	}
	// The first three turns are one conversation, named by its first
	// memory; the turn two days later starts another.
	for i, want := range []string{ms[0].ID, ms[0].ID, ms[0].ID, ms[3].ID} {
		if got := ms[i].Metadata[engram.MetaConversation]; got != want {
			t.Errorf("conversation of turn %d = %v, want %s", i, got, want)
		}
	}
}

func TestFormerLinksFollowEventTime(t *testing.T) {
	eps := episodes("A|first", "B|second", "A|third")
	eps[0], eps[2] = eps[2], eps[0] // the batch out of order
	ms := form(t, formation.Former{Link: true}, eps)
	// ms[0] is "third", ms[1] "second", ms[2] "first".
	if got := ms[1].Metadata[engram.MetaPrev]; got != ms[2].ID {
		t.Errorf("prev of second = %v, want first's %s", got, ms[2].ID)
	}
	if got := ms[1].Metadata[engram.MetaNext]; got != ms[0].ID {
		t.Errorf("next of second = %v, want third's %s", got, ms[0].ID)
	}
}

func TestFormerScenes(t *testing.T) {
	eps := episodes("A|one", "B|two", "A|three", "B|four", "A|five")
	ms := form(t, formation.Former{Scene: 2}, eps)
	var scenes []engram.Memory
	for _, m := range ms {
		if m.Metadata[engram.MetaGranularity] == engram.GranularityScene {
			scenes = append(scenes, m)
		}
	}
	if got, want := len(ms)-len(scenes), 5; got != want {
		t.Errorf("%d turn memories, want %d", got, want)
	}
	// Pairs; the last turn alone makes no scene when turns are kept.
	if len(scenes) != 2 {
		t.Fatalf("%d scenes, want 2", len(scenes))
	}
	if got, want := scenes[0].Value, "A: one\nB: two"; got != want {
		t.Errorf("scene value = %q, want %q", got, want)
	}
	if !slices.Equal(scenes[1].Sources, []string{eps[2].ID, eps[3].ID}) {
		t.Errorf("scene sources = %v", scenes[1].Sources)
	}
	only := form(t, formation.Former{Scene: 2, NoTurns: true}, eps)
	if len(only) != 3 {
		t.Errorf("scenes only: %d memories, want 3", len(only))
	}
}

func TestFormerDeterministic(t *testing.T) {
	eps := episodes("Caroline|Last Friday I met Dr. Smith in New York.", "Mel|Cool!")
	a := form(t, formation.Former{Context: 50}, eps)
	b := form(t, formation.Former{Context: 50}, eps)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs formed different memories")
	}
}

func TestFormerCJK(t *testing.T) {
	eps := []engram.Episode{{ID: engram.NewID(), Namespace: ns, Speaker: "李雷", Content: "我昨天在东京都买了一本书。然后去了京都。", OccurredAt: ref}}
	m := form(t, formation.Former{}, eps)[0]
	if m.Value != eps[0].Content {
		t.Errorf("value changed: %q", m.Value)
	}
	if got, want := m.Language, "zh"; got != want {
		t.Errorf("language = %q, want %q", got, want)
	}
	if got, want := m.Abstraction, "李雷: 我昨天 [7 May 2023]在东京都买了一本书。然后去了京都。"; got != want {
		t.Errorf("abstraction = %q, want %q", got, want)
	}
	if !slices.Contains(m.Cues, "李雷") {
		t.Errorf("cues %q lack the speaker", m.Cues)
	}
}

// TestFormerLanguages forms a turn in each language: the memory carries
// the language, the names by that language's rules and the dates its
// expressions name.
func TestFormerLanguages(t *testing.T) {
	tests := []struct {
		text, lang string
		names      []string // cues besides the speaker and the date
		notNames   []string
		date       string // the label of the first date, in the cues and the abstraction
		from       string // the event period's start
	}{
		{"Letzte Woche war ich mit meinem Hund im Park und habe Anna getroffen.", "de",
			[]string{"Anna"}, []string{"Woche", "Hund", "Park"}, "the week of 1 May 2023", "2023-05-01"},
		{"Ayer fui al parque con María y su perro.", "es", []string{"María"}, []string{"Ayer"}, "7 May 2023", "2023-05-07"},
		{"La semaine dernière, je suis allé au parc avec Marie.", "fr", []string{"Marie"}, []string{"La"}, "the week of 1 May 2023", "2023-05-01"},
		{"我上周六和朋友去了公园。", "zh", nil, nil, "6 May 2023", "2023-05-06"},
		{"先週、友達と公園に行きました。", "ja", nil, nil, "the week of 1 May 2023", "2023-05-01"},
	}
	for _, tt := range tests {
		m := form(t, formation.Former{}, episodes("Sam|"+tt.text))[0]
		if m.Language != tt.lang {
			t.Errorf("%q: language %q, want %q", tt.text, m.Language, tt.lang)
		}
		for _, n := range append(tt.names, "Sam", tt.date) {
			if !slices.Contains(m.Cues, n) {
				t.Errorf("%q: cues %q lack %q", tt.text, m.Cues, n)
			}
		}
		for _, n := range tt.notNames {
			if slices.Contains(m.Cues, n) {
				t.Errorf("%q: cues %q hold %q", tt.text, m.Cues, n)
			}
		}
		if !strings.Contains(m.Abstraction, "["+tt.date+"]") {
			t.Errorf("%q: abstraction %q lacks [%s]", tt.text, m.Abstraction, tt.date)
		}
		if got := m.Metadata[engram.MetaEventFrom]; got != tt.from {
			t.Errorf("%q: event from %v, want %s", tt.text, got, tt.from)
		}
	}
}

func TestFormerHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (formation.Former{}).Form(ctx, engram.FormRequest{Episodes: episodes("A|hi")}); err == nil {
		t.Errorf("Form with a cancelled context succeeded")
	}
}

func TestAbstract(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		speaker, text string
		max           int
		want          string
	}{
		{"", "Short.", 50, "Short."},
		{"Ann", "Short.", 50, "Ann: Short."},
		{"", "First sentence here. Second sentence is longer than the room.", 30, "First sentence here."},
		{"", "  spaced \n\t out  ", 50, "spaced out"},
		{"", long, 20, "word word word…"},
	}
	for _, tt := range tests {
		got := formation.Abstract(tt.speaker, tt.text, tt.max)
		if got != tt.want {
			t.Errorf("Abstract(%q, %q, %d) = %q, want %q", tt.speaker, tt.text, tt.max, got, tt.want)
		}
		if len(got) > tt.max {
			t.Errorf("Abstract(%q) is %d bytes, above %d", tt.text, len(got), tt.max)
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		text  string
		known []string
		want  []string
	}{
		{"I went to New York with Melanie.", nil, []string{"New York", "Melanie"}},
		{"Melanie went home.", nil, nil},
		{"Melanie went home.", []string{"Melanie"}, []string{"Melanie"}},
		{"We read Charlotte's Web and met Dr. Seuss fans at Bank of America.", nil, []string{"Charlotte's Web", "Dr. Seuss", "Bank of America"}},
		{"Wow, that's cool! Hey Caroline, thanks.", nil, []string{"Caroline"}},
		{"I love it. It is great, OK?", nil, nil},
		{"Went to Paris, London and Rome", nil, []string{"Paris", "London", "Rome"}},
	}
	for _, tt := range tests {
		known := map[string]bool{}
		for _, k := range tt.known {
			known[strings.ToLower(k)] = true
		}
		if got := formation.Names(tt.text, known); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Names(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestNameKeys(t *testing.T) {
	got := formation.NameKeys("Yesterday I saw Melanie's dog.", "Then the Dog ran.")
	if !got["melanie"] || !got["dog"] || got["yesterday"] || got["then"] {
		t.Errorf("NameKeys = %v", got)
	}
}

func TestTitles(t *testing.T) {
	got := formation.Titles(`I read "Nothing is Impossible" and “Charlotte's Web”. She said "this is a very long quote that goes on and on and on forever".`)
	if want := []string{"Nothing is Impossible", "Charlotte's Web"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Titles = %q, want %q", got, want)
	}
}

// TestFormerContinues forms a conversation one turn per call, as a chat
// client adds it, applying each call's update of the turn before, and
// checks that the memories say what one batch of all the turns says.
func TestFormerContinues(t *testing.T) {
	f := formation.Former{Context: 100, After: 100, Link: true}
	eps := episodes(
		"Melanie|What have you been researching lately?",
		"Caroline|Adoption agencies! It's been a dream.",
		"Caroline|Also pottery.",
		"Melanie|That's wonderful.",
	)
	eps = append(eps, engram.Episode{ID: engram.NewID(), Namespace: ns, Speaker: "Caroline", Content: "Hi again!", OccurredAt: ref.Add(48 * time.Hour)})
	batch := form(t, f, eps)

	var got []engram.Memory
	for i := range eps {
		var prev *engram.Episode
		var prevMem *engram.Memory
		if i > 0 {
			prev, prevMem = &eps[i-1], &got[i-1]
		}
		ops, err := f.Form(context.Background(), engram.FormRequest{Episodes: eps[i : i+1], Prev: prev, PrevMemory: prevMem})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			switch op.Op {
			case engram.OpAdd:
				got = append(got, op.Memory)
			case engram.OpUpdate:
				if op.TargetID != prevMem.ID || op.Memory.ID != prevMem.ID {
					t.Fatalf("turn %d updates %s, want the turn before, %s", i, op.TargetID, prevMem.ID)
				}
				got[i-1] = op.Memory
			default:
				t.Fatalf("turn %d: op %s", i, op.Op)
			}
		}
	}
	if len(got) != len(batch) {
		t.Fatalf("%d memories one turn at a time, %d in one batch", len(got), len(batch))
	}
	// Ids differ between the runs; compare what they point at.
	index := func(ms []engram.Memory) map[string]int {
		out := map[string]int{}
		for i, m := range ms {
			out[m.ID] = i
		}
		return out
	}
	gi, bi := index(got), index(batch)
	for i := range got {
		if got[i].Abstraction != batch[i].Abstraction {
			t.Errorf("turn %d abstraction\n one at a time %q\n batch         %q", i, got[i].Abstraction, batch[i].Abstraction)
		}
		for _, k := range []string{engram.MetaPrev, engram.MetaNext, engram.MetaConversation} {
			g, gok := got[i].Metadata[k].(string)
			b, bok := batch[i].Metadata[k].(string)
			if gok != bok || (gok && gi[g] != bi[b]) {
				t.Errorf("turn %d %s: one at a time %v, batch %v", i, k, got[i].Metadata[k], batch[i].Metadata[k])
			}
		}
	}
	// A turn whose predecessor already links onward leaves it alone.
	ops, err := f.Form(context.Background(), engram.FormRequest{Episodes: []engram.Episode{episodes("Caroline|late reply")[0]}, Prev: &eps[0], PrevMemory: &got[0]})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.Op != engram.OpAdd {
			t.Errorf("op %s on a memory that already has a next turn", op.Op)
		}
	}
}

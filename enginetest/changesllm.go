package enginetest

import (
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// llmChanges scripts a model that follows the prompts' operations of a
// change: per new turn, what it extracts; per new memory, what it
// decides about the existing memory that holds a word.
var llmChanges = []struct {
	turn, extracted   string
	op, target, value string // the decision: op on the existing memory holding target
}{
	{"My favourite drink is black coffee.", "Bob's favourite drink is black coffee", "ADD", "", ""},
	{"Ich wohne in München.", "Bob wohnt in München", "ADD", "", ""},
	{"I stopped drinking coffee last week; now I only drink green tea.", "Bob no longer drinks coffee", "SUPERSEDE", "black coffee", ""},
	{"Ich wohne jetzt in Schwabing, einem Stadtteil von München.", "Bob wohnt in Schwabing", "MERGE", "München", "Bob wohnt in Schwabing, München"},
}

// scriptedChange answers the former's requests as llmChanges says.
func scriptedChange(req openaitest.ChatRequest) string {
	system, user := req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content
	_, newTurns, _ := strings.Cut(user, "NEW turns:")
	for _, c := range llmChanges {
		switch {
		case !strings.HasPrefix(system, "You keep") && strings.Contains(newTurns, c.turn):
			return llmFact("semantic", c.extracted, "")
		case strings.HasPrefix(system, "You keep") && strings.Contains(user, "NEW memory:\n") && strings.Contains(strings.SplitN(user, "EXISTING", 2)[0], c.extracted):
			n := 0
			if m := regexp.MustCompile(`\[(\d+)\] [^\n]*` + regexp.QuoteMeta(c.target)).FindStringSubmatch(user); m != nil && c.target != "" {
				fmt.Sscan(m[1], &n)
			}
			return fmt.Sprintf(`{"decision": %q, "target": %d, "reason": "scripted %s", "abstraction": "", "value": %q, "cues": []}`, c.op, n, c.op, c.value)
		}
	}
	return `{"episodes": [], "memories": []}`
}

// testChangesLLM: the LLM former, against a scripted model, asks for a
// change's operations, and the store applies its answers as the rules
// former's: over a conversation of four turns on different days, the
// stopped favourite is superseded and a district merges into the city
// held, which stays active and answerable by the city's name, through the
// library and over HTTP.
func testChangesLLM(t *testing.T, open Open) {
	fake := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true, Chat: scriptedChange})
	chat, err := openai.NewChat(openai.Config{BaseURL: fake.URL(), Model: "m1", RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, open, engine.Options{Former: f})
	var formed []engram.Memory
	for i, c := range llmChanges {
		res := say(t, e, t0.AddDate(0, 0, 10*i), "Bob", c.turn)
		formed = append(formed, res.Memories...)
	}
	coffee, munich := memoryHolding(formed, "black coffee"), memoryHolding(formed, "wohnt in München")
	if coffee == nil || munich == nil {
		t.Fatalf("formed %q, want the coffee and the München memories", values(formed))
	}
	if m, err := e.GetMemory(ctx, scA, coffee.ID); err != nil || m.Status != engram.StatusSuperseded || m.SupersededBy == "" {
		t.Errorf("the stopped favourite after the stop: %+v, %v; want superseded", m, err)
	}
	if m, err := e.GetMemory(ctx, scA, munich.ID); err != nil || m.Status != engram.StatusActive || m.Value != "Bob wohnt in Schwabing, München" {
		t.Errorf("the city after the district: %+v, %v; want it active, refined", m, err)
	}
	var decided bool
	for _, r := range fake.Requests() {
		if r.Chat != nil && strings.Contains(r.Chat.Messages[0].Content, "A refinement is not a change") && strings.Contains(r.Chat.Messages[0].Content, "Stopping is a change") {
			decided = true
		}
	}
	if !decided {
		t.Error("no decision request asked for a change's operations")
	}
	client, _ := overHTTP(t, e)
	for _, via := range []struct {
		name string
		r    reader
	}{{"library", e}, {"http", client}} {
		for _, q := range []string{"Wo wohnt Bob?", "München"} {
			res, err := via.r.Search(ctx, engram.SearchRequest{Scope: scA, Query: q, K: 5})
			if err != nil {
				t.Fatalf("%s: search %q: %v", via.name, q, err)
			}
			if memoryHolding(hitMemories(res.Hits), "Schwabing, München") == nil {
				t.Errorf("%s: %q finds %q, want the refined home", via.name, q, hitValues(res.Hits))
			}
		}
	}
}

func memoryHolding(ms []engram.Memory, s string) *engram.Memory {
	for i := range ms {
		if strings.Contains(ms[i].Value, s) {
			return &ms[i]
		}
	}
	return nil
}

func hitMemories(hs []engram.Hit) []engram.Memory {
	out := make([]engram.Memory, len(hs))
	for i, h := range hs {
		out[i] = h.Memory
	}
	return out
}

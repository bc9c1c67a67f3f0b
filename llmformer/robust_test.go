package llmformer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

func TestInvalidRepliesFailFormation(t *testing.T) {
	ok := fact("semantic", "home", "Alice lives in Munich")
	cases := []struct {
		name    string
		replies []string
		want    string
	}{
		{"malformed JSON", []string{`{"episodes": [], "memories": [`}, "JSON object"},
		{"not JSON at all", []string{"I could not find any memories."}, "JSON object"},
		{"wrong type", []string{`{"episodes": [], "memories": "none"}`}, "field memories"},
		{"missing fields", []string{`{"answer": 1}`}, "neither episodes nor memories"},
		{"unknown kind", []string{extraction(fact("opinion", "x", "Alice likes jazz"))}, `kind "opinion"`},
		{"confidence out of range", []string{extraction(fact("semantic", "x", "Alice likes jazz", "confidence", "1.7"))}, "confidence 1.7"},
		{"importance missing", []string{extraction(strings.Replace(fact("semantic", "x", "Alice likes jazz"), `"importance":0.6,`, "", 1))}, "importance (none)"},
		{"empty value", []string{extraction(fact("semantic", "x", " "))}, "value is missing"},
		{"hallucinated turn", []string{extraction(fact("semantic", "x", "Alice likes jazz", "sources", "[4]"))}, "source 4 is not one of the new turns 1..1"},
		{"bad date", []string{extraction(fact("semantic", "x", "Alice likes jazz", "valid_from", "next Tuesday"))}, `valid_from "next Tuesday"`},
		{"hallucinated memory id", []string{extraction(ok), `{"decision": "SUPERSEDE", "target": 9, "reason": "moved", "abstraction": "", "value": "", "cues": []}`}, "target 9 is not one of the memories shown, 1..2"},
		{"unknown decision", []string{extraction(ok), `{"decision": "REPLACE", "target": 1, "reason": "", "abstraction": "", "value": "", "cues": []}`}, `decision "REPLACE"`},
		{"summary of no turn", []string{`{"episodes": [{"turns": [0], "title": "t", "summary": "s"}], "memories": []}`}, "episodes[0]: turns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{})
			srv.QueueChat(c.replies...)
			ops, err := f.Form(context.Background(), engram.FormRequest{View: stored("Alice is vegetarian", "Alice lives in Berlin"), Episodes: episodes("I live in Munich now")})
			if err == nil {
				t.Fatalf("formation succeeded with ops %+v", ops)
			}
			if engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v (code %s), want EUNAVAILABLE with %q", err, engram.ErrorCode(err), c.want)
			}
			if ops != nil {
				t.Errorf("ops = %+v beside the error", ops)
			}
		})
	}
}

func TestServerFailures(t *testing.T) {
	t.Run("500s exhaust the retries", func(t *testing.T) {
		f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{MaxRetries: 2})
		srv.FailNext(3, openaitest.Fault{Status: 500})
		_, err := f.Form(context.Background(), engram.FormRequest{Episodes: episodes("I live in Munich")})
		if engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(err.Error(), "extraction call") {
			t.Errorf("err = %v, want EUNAVAILABLE from the extraction call", err)
		}
	})
	t.Run("a 500 then an answer", func(t *testing.T) {
		f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{MaxRetries: 2})
		srv.FailNext(1, openaitest.Fault{Status: 500})
		srv.QueueChat(extraction(fact("semantic", "home", "Alice lives in Munich")))
		ops, err := f.Form(context.Background(), engram.FormRequest{Episodes: episodes("I live in Munich")})
		if err != nil || len(ops) != 1 || ops[0].Op != engram.OpAdd {
			t.Errorf("ops %+v, err %v; want one ADD after the retry", ops, err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true, Latency: time.Second}, openai.Config{Timeout: 50 * time.Millisecond, MaxRetries: -1})
		srv.QueueChat(extraction(fact("semantic", "home", "Alice lives in Munich")))
		start := time.Now()
		_, err := f.Form(context.Background(), engram.FormRequest{Episodes: episodes("I live in Munich")})
		if engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("err = %v, want EUNAVAILABLE naming the timeout", err)
		}
		if d := time.Since(start); d > 900*time.Millisecond {
			t.Errorf("took %s, want the timeout to cut the call", d)
		}
	})
}

func TestOutputModesAndTolerantParsing(t *testing.T) {
	cases := []struct{ name, reply string }{
		{"code fence", "```json\n" + extraction(fact("semantic", "home", "Alice lives in Munich")) + "\n```"},
		{"leading prose", "Here are the memories I found: " + extraction(fact("semantic", "home", "Alice lives in Munich")) + " Hope this helps."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// No structured outputs: json_schema is refused with 400, JSON
			// mode is used from then on, and the reply is still read.
			f, srv := newFormer(t, openaitest.Options{}, openai.Config{})
			srv.QueueChat(c.reply, c.reply)
			for range 2 {
				ops, err := f.Form(context.Background(), engram.FormRequest{Episodes: episodes("I live in Munich")})
				if err != nil || len(ops) != 1 || ops[0].Memory.Value != "Alice lives in Munich" {
					t.Fatalf("ops %+v, err %v", ops, err)
				}
			}
			var formats []string
			for _, r := range srv.Requests() {
				formats = append(formats, r.Chat.ResponseFormat.Type)
			}
			if got, want := strings.Join(formats, ","), "json_schema,json_object,json_object"; got != want {
				t.Errorf("response formats %s, want %s", got, want)
			}
			if s := f.Stats(); s.Calls != 3 || s.Turns != 2 || s.PromptTokens == 0 || s.CompletionTokens == 0 || s.CallsPerTurn() != 1.5 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}

func TestRepliesKeepTheirLanguage(t *testing.T) {
	cases := []struct{ lang, turn, value string }{
		{"de", "Ich bin letzten Monat nach München gezogen.", "Alice ist nach München gezogen und wohnt jetzt dort."},
		{"es", "Me mudé a Madrid el mes pasado.", "Alice se mudó a Madrid y ahora vive allí."},
		{"zh", "我上个月搬到了上海。", "Alice 上个月搬到了上海。"},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{})
			srv.QueueChat(extraction(fact("episodic", "Umzug", c.value)))
			ops, err := f.Form(context.Background(), engram.FormRequest{Episodes: episodes(c.turn)})
			if err != nil || len(ops) != 1 {
				t.Fatalf("ops %+v, err %v", ops, err)
			}
			m := ops[0].Memory
			if m.Value != c.value || m.Language != c.lang {
				t.Errorf("value %q language %q, want %q in %s", m.Value, m.Language, c.value, c.lang)
			}
			if !strings.Contains(srv.Requests()[0].Chat.Messages[1].Content, c.turn) {
				t.Errorf("the turn did not reach the model as said")
			}
			// "last month" in each language resolves against the turn.
			if c.lang != "zh" && (m.ValidFrom == nil || !m.ValidFrom.Equal(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))) {
				t.Errorf("valid_from = %v, want 2024-05-01", m.ValidFrom)
			}
		})
	}
}

func TestProfileIsRewrittenAndBounded(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	chat, _ := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m"})
	f, err := llmformer.New(llmformer.Config{LLM: chat, Traits: 2, States: 1})
	if err != nil {
		t.Fatal(err)
	}
	old := engram.ProfileMemory(ns, []string{"Lives in Berlin", "Vegetarian"}, nil)
	old.ID, old.Status = engram.NewID(), engram.StatusActive
	r := &reader{ms: []engram.Memory{old}}
	srv.QueueChat(extraction(fact("core", "home", "Alice lives in Munich", "profile", "trait")),
		`{"traits": ["Lives in Munich", "Eats fish again", "Likes jazz"], "states": ["Tired", "Busy"]}`)
	ops, err := f.Form(context.Background(), engram.FormRequest{View: r, Episodes: episodes("I moved to Munich")})
	if err != nil {
		t.Fatal(err)
	}
	// The profile memory is never a neighbour: the candidate is added
	// without a decision call.
	if len(ops) != 2 || ops[0].Op != engram.OpAdd {
		t.Fatalf("ops = %+v", ops)
	}
	p := ops[1]
	traits, states := engram.ProfileOf(&p.Memory)
	if p.Op != engram.OpUpdate || p.TargetID != old.ID || strings.Join(traits, "|") != "Lives in Munich|Eats fish again" || strings.Join(states, "|") != "Tired" {
		t.Errorf("profile op %+v: traits %q states %q", p, traits, states)
	}
	if prompt := srv.Requests()[1].Chat.Messages[1].Content; !strings.Contains(prompt, "Lives in Berlin") || !strings.Contains(prompt, "Alice lives in Munich") {
		t.Errorf("profile prompt lacks the current profile or the new fact: %s", prompt)
	}
	if f.Needs().Actor != "former:llm:m" {
		t.Errorf("actor %q", f.Needs().Actor)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := llmformer.New(llmformer.Config{}); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("no LLM: err = %v", err)
	}
}

package eval_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/eval"
	"github.com/engramhq/engram/openai/openaitest"
)

// fakeLLM answers with the first memory of the context and judges an
// answer CORRECT when the question mentions Alice or Chen, WRONG otherwise,
// except for one question whose verdict is not a valid label.
func fakeLLM(req openaitest.ChatRequest) string {
	user := req.Messages[len(req.Messages)-1].Content
	if req.ResponseFormat == nil { // answering
		mem := strings.TrimPrefix(user, "Memories:\n")
		first, _, _ := strings.Cut(mem, "\n")
		return first
	}
	q := between(user, "Question: ", "\n")
	switch {
	case strings.Contains(q, "laptop"):
		return `{"label": "MAYBE"}`
	case strings.Contains(q, "Alice") || strings.Contains(q, "Chen"):
		return `{"label": "CORRECT"}`
	}
	return `{"label": "WRONG"}`
}

func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, end)
	return v
}

func TestLLMMode(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Chat: fakeLLM, APIKey: "k"})
	rep := run(t, eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini,
		LLM: &eval.LLMConfig{URL: srv.URL(), Key: "k", Model: "judge-model"}})

	// What the fake's policy gives, from the fixture's questions.
	raw, _ := os.ReadFile(locomoMini)
	var samples []struct {
		QA []struct {
			Question string `json:"question"`
			Category int    `json:"category"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil {
		t.Fatal(err)
	}
	type acc struct{ ok, n int }
	want := map[string]*acc{}
	total, errs := acc{}, 0
	asked := 0
	for _, s := range samples {
		for _, q := range s.QA {
			if q.Category == 5 {
				continue
			}
			asked++
			if strings.Contains(q.Question, "laptop") {
				errs++
				continue
			}
			c := strconv.Itoa(q.Category)
			if want[c] == nil {
				want[c] = &acc{}
			}
			want[c].n++
			total.n++
			if strings.Contains(q.Question, "Alice") || strings.Contains(q.Question, "Chen") {
				want[c].ok++
				total.ok++
			}
		}
	}

	l := rep.Systems[eval.SystemEngram].LLM
	if l == nil {
		t.Fatal("no LLM report for engram")
	}
	if rep.Systems[eval.SystemBM25].LLM != nil {
		t.Errorf("bm25 was answered though only engram was asked for")
	}
	if l.Overall.N != total.n || l.Errors != errs || l.Model != "judge-model" || l.Budget != 2000 {
		t.Errorf("LLM overall N=%d errors=%d model=%s budget=%d; want N=%d errors=%d", l.Overall.N, l.Errors, l.Model, l.Budget, total.n, errs)
	}
	if got, w := l.Overall.J, float64(total.ok)/float64(total.n); !near(got, w) {
		t.Errorf("J = %v, want %v", got, w)
	}
	for c, a := range want {
		if got := l.ByCategory[c]; got.N != a.n || !near(got.J, float64(a.ok)/float64(a.n)) {
			t.Errorf("category %s: %+v, want J=%v N=%d", c, got, float64(a.ok)/float64(a.n), a.n)
		}
	}
	if _, ok := l.ByCategory["5"]; ok {
		t.Errorf("category 5 was answered")
	}

	reqs := srv.Requests()
	if got, want := len(reqs), 2*asked; got != want {
		t.Errorf("%d chat requests, want %d (answer and judge per question)", got, want)
	}
	var sawKitten bool
	for _, r := range reqs {
		if r.Chat == nil {
			t.Fatalf("a request was not a chat request: %s", r.Path)
		}
		if r.Chat.Temperature == nil || *r.Chat.Temperature != 0 {
			t.Errorf("a request was not at temperature 0")
		}
		user := r.Chat.Messages[len(r.Chat.Messages)-1].Content
		if r.Chat.ResponseFormat == nil && strings.Contains(user, "Question: What is the name of Alice's kitten?") {
			sawKitten = true
			if !strings.Contains(user, "Alice: I adopted a grey kitten from the animal shelter on Saturday. Her name is Pepper.") {
				t.Errorf("the answer prompt lacks the evidence turn:\n%s", user)
			}
		}
		if r.Chat.ResponseFormat != nil && strings.Contains(user, "Question: What is the name of Alice's kitten?") && !strings.Contains(user, "Gold answer: Pepper") {
			t.Errorf("the judge prompt lacks the gold answer:\n%s", user)
		}
	}
	if !sawKitten {
		t.Errorf("the kitten question was not answered")
	}
	var perQuestion int
	for _, q := range rep.Questions {
		if qs := q.Systems[eval.SystemEngram]; qs != nil && qs.LLM != nil {
			perQuestion++
		}
	}
	if perQuestion != asked {
		t.Errorf("%d questions carry an LLM result, want %d", perQuestion, asked)
	}
	if !strings.Contains(rep.Summary(), "LLM judge (engram, model judge-model)") {
		t.Errorf("summary lacks the LLM line")
	}
}

func TestLLMModeLongMemEval(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		if r.ResponseFormat == nil {
			return "I don't know"
		}
		return `{"label": "CORRECT"}`
	}})
	rep := run(t, eval.Config{Bench: eval.BenchLongMemEval, Data: lmeMini,
		LLM: &eval.LLMConfig{URL: srv.URL(), Model: "m", Systems: []string{"engram", "full"}, Budget: 500}})
	for _, sys := range []string{eval.SystemEngram, eval.SystemFull} {
		l := rep.Systems[sys].LLM
		// Abstention questions are answered and judged too.
		if l == nil || l.Overall.N != 4 || l.ByCategory["temporal-reasoning"].N != 1 {
			t.Errorf("%s LLM report = %+v, want 4 answers including the abstention one", sys, l)
		}
	}
	var sawAbs, sawDate bool
	for _, r := range srv.Requests() {
		user := r.Chat.Messages[len(r.Chat.Messages)-1].Content
		if strings.Contains(user, "dentist") && r.Chat.ResponseFormat != nil {
			sawAbs = true
			if !strings.Contains(user, "not known") || strings.Contains(user, "not enough") {
				t.Errorf("abstention judge prompt does not ask for a refusal:\n%s", user)
			}
		}
		if strings.Contains(user, "dentist") && r.Chat.ResponseFormat == nil && strings.Contains(user, "Today is 2023-08-01") {
			sawDate = true
		}
	}
	if !sawAbs || !sawDate {
		t.Errorf("abstention judged %v, question date given %v", sawAbs, sawDate)
	}
}

func TestLLMModeAllFail(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{}) // no scripted replies: every chat is refused
	_, err := eval.Run(context.Background(), eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, Limit: 1, DataDir: t.TempDir(), Systems: []string{eval.SystemEngram},
		LLM: &eval.LLMConfig{URL: srv.URL(), Model: "m"}})
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Errorf("err = %v, want code %s", err, want)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
)

// LLMConfig turns on answering and judging with an OpenAI-compatible chat
// endpoint: each question is answered from the system's context assembled
// within Budget tokens, and a judge call grades the answer against the gold
// one (the J metric). LoCoMo category 5 is left out; LongMemEval abstention
// questions are in, graded on whether the answer declines.
type LLMConfig struct {
	URL   string // base URL of the endpoint; required
	Key   string // API key; empty sends none
	Model string // model answering and judging; required
	// Systems whose contexts are answered from; default ["engram"].
	Systems []string
	// Budget is the context size in tokens; default 2000.
	Budget int
	// Concurrency is the number of questions in flight; default 4.
	Concurrency int
}

func (c *LLMConfig) defaults(systems []string) error {
	if c.URL == "" || c.Model == "" {
		return engram.Errorf(engram.EINVALID, "LLM mode needs both an endpoint URL and a model")
	}
	if len(c.Systems) == 0 {
		c.Systems = []string{SystemEngram}
	}
	for _, s := range c.Systems {
		if !slices.Contains(systems, s) {
			return engram.Errorf(engram.EINVALID, "LLM system %q is not among the systems run (%s)", s, strings.Join(systems, ", "))
		}
	}
	if c.Budget == 0 {
		c.Budget = 2000
	}
	if c.Budget < 0 {
		return engram.Errorf(engram.EINVALID, "LLM budget %d is negative", c.Budget)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	return nil
}

// LLMReport is the J metric of one system: the fraction of answers the
// judge called correct, overall and per category. Errors counts questions
// whose answer or grade could not be had; they are not in N.
type LLMReport struct {
	Model      string              `json:"model"`
	Budget     int                 `json:"budget"`
	Overall    LLMScore            `json:"overall"`
	ByCategory map[string]LLMScore `json:"by_category"`
	Errors     int                 `json:"errors"`
}

// LLMScore is J over N graded answers.
type LLMScore struct {
	J float64 `json:"j"`
	N int     `json:"n"`
}

// QuestionLLM is one question's answer and grade.
type QuestionLLM struct {
	Answer  string `json:"answer,omitempty"`
	Correct bool   `json:"correct"`
	Error   string `json:"error,omitempty"`
}

type llmJob struct {
	system     string
	qi         int // index in runner.questions
	category   string
	question   string
	date       *time.Time
	gold       string
	abstention bool
	context    string

	out QuestionLLM
}

// newLLMJob assembles the context the LLM answers from: the top pieces
// within the budget, or for the full history the most recent ones.
func (r *runner) newLLMJob(system string, q question, l *label, ps []piece, recent bool) llmJob {
	var in []piece
	if recent {
		start, _ := assembleRecent(ps, r.cfg.LLM.Budget)
		in = ps[start:]
	} else {
		n, _ := assembleTop(ps, r.cfg.LLM.Budget)
		in = ps[:n]
	}
	texts := make([]string, len(in))
	for i, p := range in {
		texts[i] = p.text
	}
	return llmJob{system: system, qi: len(r.questions), category: l.category, question: q.text, date: q.date,
		gold: l.answer, abstention: l.abstention, context: strings.Join(texts, "\n")}
}

const answerPrompt = `You are answering a question about a person's past conversations. ` +
	`The memories below were retrieved from those conversations; each starts with its date and who spoke. ` +
	`Use only these memories. Resolve relative dates ("yesterday", "last week") against the memory's own date. ` +
	`If the memories do not hold the answer, reply that you do not know. Reply with the answer alone, in a few words.`

const judgePrompt = `You grade an answer to a question against the gold answer. ` +
	`Call it CORRECT when it states the same fact, entity, number or date as the gold answer, ` +
	`even if worded differently, more verbose, or a date written in another format; ` +
	`call it WRONG when it contradicts the gold answer, misses it, or says it does not know when the gold answer exists. ` +
	`Reply with one JSON object: {"label": "CORRECT"} or {"label": "WRONG"}.`

const abstentionGold = `The conversations do not contain this information; a correct answer says it is not known or cannot be answered.`

func (j *llmJob) messages() []openai.Message {
	var u strings.Builder
	u.WriteString("Memories:\n")
	u.WriteString(j.context)
	u.WriteString("\n\n")
	if j.date != nil {
		u.WriteString("Today is " + j.date.Format("2006-01-02 15:04 (Monday)") + ".\n")
	}
	u.WriteString("Question: " + j.question + "\nAnswer:")
	return []openai.Message{{Role: "system", Content: answerPrompt}, {Role: "user", Content: u.String()}}
}

func (j *llmJob) judgeMessages(answer string) []openai.Message {
	gold := j.gold
	if j.abstention {
		gold = abstentionGold
	}
	u := fmt.Sprintf("Question: %s\nGold answer: %s\nAnswer to grade: %s\nReply in JSON.", j.question, gold, answer)
	return []openai.Message{{Role: "system", Content: judgePrompt}, {Role: "user", Content: u}}
}

// parseVerdict reads the judge's JSON reply.
func parseVerdict(reply string) (bool, error) {
	var v struct {
		Label string `json:"label"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(reply)), &v); err != nil {
		return false, fmt.Errorf("judge reply is not JSON: %q", reply)
	}
	switch strings.ToUpper(strings.TrimSpace(v.Label)) {
	case "CORRECT":
		return true, nil
	case "WRONG":
		return false, nil
	}
	return false, fmt.Errorf("judge label %q is neither CORRECT nor WRONG", v.Label)
}

func (j *llmJob) run(ctx context.Context, chat *openai.Chat) {
	answer, err := chat.Complete(ctx, j.messages(), openai.Temperature(0), openai.MaxTokens(200))
	if err != nil {
		j.out.Error = "answer: " + err.Error()
		return
	}
	j.out.Answer = strings.TrimSpace(answer)
	reply, err := chat.Complete(ctx, j.judgeMessages(j.out.Answer), openai.Temperature(0), openai.JSONMode(), openai.MaxTokens(50))
	if err != nil {
		j.out.Error = "judge: " + err.Error()
		return
	}
	ok, err := parseVerdict(reply)
	if err != nil {
		j.out.Error = err.Error()
		return
	}
	j.out.Correct = ok
}

// runLLM answers and judges the collected jobs and adds the J metric to
// rep. It fails when the context ends or when every job failed, which means
// the endpoint is unusable rather than a few answers being lost.
func (r *runner) runLLM(ctx context.Context, rep *Report) error {
	cfg := r.cfg.LLM
	chat, err := openai.NewChat(openai.Config{BaseURL: cfg.URL, APIKey: cfg.Key, Model: cfg.Model})
	if err != nil {
		return fmt.Errorf("LLM mode: %w", err)
	}
	jobs := r.llmJobs
	if len(jobs) == 0 {
		return nil
	}
	if err := r.runJobs(ctx, chat, jobs); err != nil {
		return err
	}
	return scoreLLM(rep, cfg, jobs)
}

// runJobs runs the jobs on cfg.Concurrency workers, advancing the progress
// bar, until all are done or ctx ends (its error).
func (r *runner) runJobs(ctx context.Context, chat *openai.Chat, jobs []llmJob) error {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(r.cfg.LLM.Concurrency, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				jobs[i].run(ctx, chat)
			}
		}()
	}
	if r.bar != nil {
		r.bar.Reset()
		r.bar.ChangeMax(len(jobs))
		r.bar.Describe(r.cfg.Bench + ": LLM answers")
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
			if r.bar != nil {
				_ = r.bar.Add(1)
			}
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.bar != nil {
		_ = r.bar.Finish()
	}
	return nil
}

// scoreLLM adds each job's answer to its question in rep and the J metric,
// overall and by category, to each system. It fails with EUNAVAILABLE when
// every job failed.
func scoreLLM(rep *Report, cfg *LLMConfig, jobs []llmJob) error {
	type acc struct{ ok, n int }
	failed := 0
	var firstErr string
	per := map[string]*LLMReport{}
	cats := map[string]map[string]*acc{}
	for i := range jobs {
		j := &jobs[i]
		lr := per[j.system]
		if lr == nil {
			lr = &LLMReport{Model: cfg.Model, Budget: cfg.Budget, ByCategory: map[string]LLMScore{}}
			per[j.system] = lr
			cats[j.system] = map[string]*acc{}
		}
		out := j.out
		rep.Questions[j.qi].Systems[j.system].LLM = &out
		if j.out.Error != "" {
			lr.Errors++
			failed++
			if firstErr == "" {
				firstErr = j.out.Error
			}
			continue
		}
		c := cats[j.system][j.category]
		if c == nil {
			c = &acc{}
			cats[j.system][j.category] = c
		}
		c.n++
		lr.Overall.N++
		if j.out.Correct {
			c.ok++
			lr.Overall.J++
		}
	}
	if failed == len(jobs) {
		return engram.Errorf(engram.EUNAVAILABLE, "LLM mode: all %d answers failed; the first: %s", failed, firstErr)
	}
	for sys, lr := range per {
		if lr.Overall.N > 0 {
			lr.Overall.J /= float64(lr.Overall.N)
		}
		for c, a := range cats[sys] {
			lr.ByCategory[c] = LLMScore{J: float64(a.ok) / float64(a.n), N: a.n}
		}
		rep.Systems[sys].LLM = lr
	}
	return nil
}

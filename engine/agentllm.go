package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
)

// Chat is the chat model an agentic search asks to choose its steps;
// *openai.Chat is one.
type Chat interface {
	// Complete returns the model's reply to messages, or the client's
	// error.
	Complete(ctx context.Context, messages []openai.Message, opts ...openai.ChatOption) (string, error)
}

// agentPrompt tells the chat model what a step is and how to answer.
const agentPrompt = `You steer a search of a person's long-term memory to answer a question.
You see the question, the searches made so far and the best memories found.
Choose the next step and answer with one JSON object only:
{"action": "refine" | "expand" | "stop", "query": "...", "reason": "..."}
- "stop" when the memories shown are enough to answer the question (say why in reason).
- "refine" to search again: query is a new search text, in the question's language, for what is
  still missing (another wording, a part of the question, a name or thing the memories mention).
- "expand" to read what surrounds the best memories (the turns around them, memories sharing
  their names and places).`

// agentReply is the shape of the chat model's answer.
type agentReply struct {
	Action string `json:"action"`
	Query  string `json:"query"`
	Reason string `json:"reason"`
}

// AgentShown is how many of the best hits the chat model is shown, and
// AgentShownChars how much of each one's value.
const (
	AgentShown      = 8
	AgentShownChars = 300
)

// askChat asks the chat model for the next move, counting the call and
// its tokens. It fails when the call fails or the reply is not a usable
// move (unknown action, a refine without a query); the caller falls back
// to the rules.
func (e *searcher) askChat(ctx context.Context, a *agent) (move, error) {
	msgs := []openai.Message{{Role: "system", Content: agentPrompt}, {Role: "user", Content: agentState(a)}}
	reply, err := e.complete(ctx, a, msgs, openai.JSONMode())
	if engram.ErrorCode(err) == engram.EINVALID && a.calls < a.maxCalls {
		// A server that knows no JSON mode is asked for plain text.
		reply, err = e.complete(ctx, a, msgs)
	}
	if err != nil {
		e.log.Warn("agentic search: chat model failed", "err", err)
		return move{}, fmt.Errorf("the LLM call failed (%s)", engram.ErrorMessage(err))
	}
	obj, ok := openai.ExtractObject(reply)
	var r agentReply
	if !ok || json.Unmarshal([]byte(obj), &r) != nil {
		return move{}, fmt.Errorf("the LLM reply held no JSON object of the step's shape")
	}
	r.Query = strings.TrimSpace(r.Query)
	switch r.Action = strings.ToLower(strings.TrimSpace(r.Action)); r.Action {
	case engram.ActionStop, engram.ActionExpand:
		return move{action: r.Action, by: "llm", reason: r.Reason}, nil
	case engram.ActionRefine:
		if r.Query == "" || len(r.Query) > engram.MaxContentBytes {
			return move{}, fmt.Errorf("the LLM asked to refine without a usable query")
		}
		return move{action: r.Action, queries: []string{r.Query}, by: "llm", reason: r.Reason}, nil
	default:
		return move{}, fmt.Errorf("the LLM chose the unknown action %q", r.Action)
	}
}

// complete makes one counted call to the chat model.
func (e *searcher) complete(ctx context.Context, a *agent, msgs []openai.Message, opts ...openai.ChatOption) (string, error) {
	a.calls++
	var u openai.Usage
	opts = append(opts, openai.Temperature(0), openai.MaxTokens(AgentReplyTokens), openai.ReportUsage(&u))
	reply, err := e.chat.Complete(ctx, msgs, opts...)
	a.tokens += u.PromptTokens + u.CompletionTokens
	return reply, err
}

// AgentReplyTokens bounds the chat model's reply to one step.
const AgentReplyTokens = 300

// agentState renders the question, the searches so far and the best hits
// for the chat model.
func agentState(a *agent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\nAsked on: %s\n\nSteps so far:\n", a.s.req.Query, a.s.now.Format(time.DateOnly))
	for i, st := range a.trace {
		fmt.Fprintf(&b, "%d. %s %s (%d new among the best)\n", i+1, st.Action, strings.Join(st.Queries, " | "), len(st.New))
	}
	b.WriteString("\nBest memories:\n")
	for i, c := range a.pool.Ranked()[:min(AgentShown, a.pool.Len())] {
		m := c.Memory
		when := ""
		if m.ValidFrom != nil {
			when = m.ValidFrom.Format(time.DateOnly) + " "
		}
		v := []rune(m.Value)
		if len(v) > AgentShownChars {
			v = append(v[:AgentShownChars], '…')
		}
		fmt.Fprintf(&b, "%d. [%s%s] %s\n", i+1, when, m.Speaker(), strings.ReplaceAll(string(v), "\n", " "))
	}
	return b.String()
}

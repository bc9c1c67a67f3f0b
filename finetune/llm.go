package finetune

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
)

// Completer is the chat model LLM asks; *openai.Chat is one.
type Completer interface {
	// Complete returns the model's reply to messages, or an
	// *engram.Error (EINVALID when the server rejects the request).
	Complete(ctx context.Context, messages []openai.Message, opts ...openai.ChatOption) (string, error)
}

// LLM is an Asker that has a chat model write a memory's pairs. It asks
// for structured output and falls back to JSON mode on a server that
// rejects it, remembering which worked. It is safe for concurrent use.
type LLM struct {
	chat  Completer
	plain atomic.Bool // the server rejected structured output
}

// NewLLM returns an LLM asking chat.
func NewLLM(chat Completer) *LLM { return &LLM{chat: chat} }

// Limits on the model's pairs: more are cut, longer ones refused.
const (
	maxPairs       = 3
	maxPairBytes   = 2000
	llmCallTimeout = 60 * time.Second
)

const llmPrompt = `You write fine-tuning data for a personal model of one person, from one of their memories.
Write 1 to 3 questions someone could ask this person that the memory answers, each with the answer the person would give: in the first person, in their own voice, in the language of the memory (%s), using only what the memory says.
Reply with one JSON object {"pairs": [{"question": "...", "answer": "..."}]}.`

var pairsSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["pairs"],"properties":{
"pairs":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["question","answer"],
"properties":{"question":{"type":"string"},"answer":{"type":"string"}}}}}}`)

// Pairs asks the model for m's pairs. It fails with the client's error,
// or with EUNAVAILABLE when the reply holds no usable pairs: no JSON
// object, no pairs, an empty or overlong question or answer.
func (l *LLM) Pairs(ctx context.Context, m *engram.Memory) ([]Pair, error) {
	ctx, cancel := context.WithTimeout(ctx, llmCallTimeout)
	defer cancel()
	in, err := json.Marshal(map[string]any{"kind": m.Kind, "language": langOf(m), "abstraction": m.Abstraction, "value": m.Value, "cues": m.Cues})
	if err != nil {
		return nil, fmt.Errorf("finetune: encode memory %s: %w", m.ID, err)
	}
	msgs := []openai.Message{{Role: "system", Content: fmt.Sprintf(llmPrompt, langOf(m))}, {Role: "user", Content: string(in)}}
	reply, err := l.complete(ctx, msgs)
	if err != nil {
		return nil, fmt.Errorf("finetune: pairs of memory %s: %w", m.ID, err)
	}
	return decodePairs(reply)
}

// complete asks with structured output, or JSON mode once a server
// rejected it.
func (l *LLM) complete(ctx context.Context, msgs []openai.Message) (string, error) {
	for {
		plain := l.plain.Load()
		opt := openai.JSONSchema("pairs", pairsSchema)
		if plain {
			opt = openai.JSONMode()
		}
		reply, err := l.chat.Complete(ctx, msgs, openai.Temperature(0), opt)
		if err != nil && !plain && engram.ErrorCode(err) == engram.EINVALID && ctx.Err() == nil {
			l.plain.Store(true)
			continue
		}
		return reply, err
	}
}

// decodePairs reads and checks the pairs of a reply.
func decodePairs(reply string) ([]Pair, error) {
	obj, ok := openai.ExtractObject(reply)
	if !ok {
		return nil, unusable("the reply holds no JSON object: %.200q", reply)
	}
	var out struct {
		Pairs []Pair `json:"pairs"`
	}
	if err := json.Unmarshal([]byte(obj), &out); err != nil {
		return nil, unusable("the reply is not the pairs object: %v", err)
	}
	if len(out.Pairs) == 0 {
		return nil, unusable("the reply has no pairs")
	}
	if len(out.Pairs) > maxPairs {
		out.Pairs = out.Pairs[:maxPairs]
	}
	for i := range out.Pairs {
		p := &out.Pairs[i]
		p.Question, p.Answer = strings.TrimSpace(p.Question), strings.TrimSpace(p.Answer)
		for _, f := range []struct{ name, v string }{{"question", p.Question}, {"answer", p.Answer}} {
			if f.v == "" || len(f.v) > maxPairBytes || !utf8.ValidString(f.v) {
				return nil, unusable("pair %d: %s is empty, longer than %d bytes or not UTF-8", i, f.name, maxPairBytes)
			}
		}
	}
	return out.Pairs, nil
}

func unusable(format string, args ...any) error {
	return engram.Errorf(engram.EUNAVAILABLE, "finetune: unusable model reply: %s", fmt.Sprintf(format, args...))
}

package llmformer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
)

// Completer is the chat model the former asks; *openai.Chat is one.
type Completer interface {
	// Complete returns the model's reply to messages, or an
	// *engram.Error (EINVALID when the server rejects the request).
	Complete(ctx context.Context, messages []openai.Message, opts ...openai.ChatOption) (string, error)
	// Model names the model, for the actor former:llm:<model>.
	Model() string
}

// Output modes, tried in this order: a server that rejects one (400) is
// asked in the next, and the former remembers the mode that worked.
const (
	modeSchema int32 = iota // response_format json_schema
	modeJSON                // response_format json_object
	modePlain               // no response_format; the JSON is found in the text
)

// Stats counts the former's chat calls and the tokens servers reported
// for them, and the turns it formed, since it was made.
type Stats struct {
	Turns            int64 `json:"turns"`
	Calls            int64 `json:"calls"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// CallsPerTurn is Calls divided by Turns, 0 without turns.
func (s Stats) CallsPerTurn() float64 { return ratio(s.Calls, s.Turns) }

// TokensPerTurn is prompt plus completion tokens divided by Turns.
func (s Stats) TokensPerTurn() float64 { return ratio(s.PromptTokens+s.CompletionTokens, s.Turns) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

type counters struct {
	turns, calls, prompt, completion atomic.Int64
}

func (c *counters) stats() Stats {
	return Stats{Turns: c.turns.Load(), Calls: c.calls.Load(), PromptTokens: c.prompt.Load(), CompletionTokens: c.completion.Load()}
}

// ask sends a system and a user message and decodes the JSON object of the
// reply into out. It asks for structured output with schema and falls
// back to JSON mode and then plain text on servers that reject it. It
// fails with the client's error, or with EUNAVAILABLE naming what when the
// reply holds no JSON object of out's shape.
func (f *Former) ask(ctx context.Context, what, system, user string, schema json.RawMessage, out any) error {
	msgs := []openai.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	for {
		mode := f.mode.Load()
		opts := []openai.ChatOption{openai.Temperature(0)}
		switch mode {
		case modeSchema:
			opts = append(opts, openai.JSONSchema(what, schema))
		case modeJSON:
			opts = append(opts, openai.JSONMode())
		}
		var u openai.Usage
		opts = append(opts, openai.ReportUsage(&u))
		reply, err := f.call(ctx, msgs, opts)
		f.count.calls.Add(1)
		f.count.prompt.Add(int64(u.PromptTokens))
		f.count.completion.Add(int64(u.CompletionTokens))
		if err != nil && engram.ErrorCode(err) == engram.EINVALID && mode < modePlain && ctx.Err() == nil {
			f.log.Info("llm former: the server rejected an output mode, trying the next", "mode", mode, "err", err)
			f.mode.CompareAndSwap(mode, mode+1)
			continue
		}
		if engram.ErrorCode(err) == engram.EINTERNAL {
			// The server answered, but not with a usable reply.
			return invalid(what, "%s", engram.ErrorMessage(err))
		}
		if err != nil {
			return fmt.Errorf("llm former: %s call: %w", what, err)
		}
		return decodeReply(what, reply, out)
	}
}

// call makes one call to the model within the call timeout, through the
// circuit breaker: a refused call, or a failed one that leaves the breaker
// open, fails with a *HeldOffError; a call cut by the timeout fails with
// EUNAVAILABLE.
func (f *Former) call(ctx context.Context, msgs []openai.Message, opts []openai.ChatOption) (string, error) {
	probe, err := f.breaker.allow()
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, f.cfg.CallTimeout)
	defer cancel()
	reply, err := f.llm.Complete(cctx, msgs, opts...)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = engram.Errorf(engram.EUNAVAILABLE, "no answer within the call timeout of %s", f.cfg.CallTimeout)
	}
	failed := upstreamFailure(cctx, err)
	if err != nil && !failed {
		// The model answered, if not as asked: it is up.
		f.breaker.record(probe, ctx.Err() != nil, nil)
		return "", err
	}
	return reply, f.breaker.record(probe, ctx.Err() != nil, err)
}

// decodeReply finds the JSON object in reply and decodes it into out.
func decodeReply(what, reply string, out any) error {
	obj, ok := openai.ExtractObject(reply)
	if !ok {
		return invalid(what, "the reply holds no JSON object: %.200q", reply)
	}
	if err := json.Unmarshal([]byte(obj), out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(what, "field %s is a JSON %s, not a %s", te.Field, te.Value, te.Type)
		}
		return invalid(what, "the reply is not valid JSON: %v", err)
	}
	return nil
}

// invalid is the error of a reply that fails validation: EUNAVAILABLE,
// because asking again may well succeed, with the reason.
func invalid(what, format string, args ...any) error {
	return engram.Errorf(engram.EUNAVAILABLE, "llm former: invalid %s reply: %s", what, fmt.Sprintf(format, args...))
}

package openai

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/engramhq/engram"
)

// Message is one turn of a chat: Role is "system", "user" or "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Chat asks an OpenAI-compatible /chat/completions endpoint for replies. It
// is safe for concurrent use.
type Chat struct {
	c client
}

// NewChat returns a Chat for cfg, or an EINVALID error when cfg is unusable.
// Dimensions and BatchSize are ignored. It makes no request.
func NewChat(cfg Config) (*Chat, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Chat{c: client{cfg: cfg}}, nil
}

// Model returns the configured model name.
func (c *Chat) Model() string { return c.c.cfg.Model }

// ChatOption changes one completion request.
type ChatOption func(*chatRequest)

// Temperature sets the sampling temperature; 0 asks for the most likely
// reply, which evaluations want. Without it the server's default applies.
func Temperature(t float64) ChatOption {
	return func(r *chatRequest) { r.Temperature = &t }
}

// MaxTokens bounds the length of the reply.
func MaxTokens(n int) ChatOption {
	return func(r *chatRequest) { r.MaxTokens = n }
}

// JSONMode asks for a reply that is one JSON object (response_format
// json_object). Most servers also need the prompt to mention JSON.
func JSONMode() ChatOption {
	return func(r *chatRequest) { r.ResponseFormat = &responseFormat{Type: "json_object"} }
}

// JSONSchema asks for a reply that follows schema, a JSON Schema object
// (response_format json_schema, strict). Servers without structured
// outputs reject the request, which Complete reports as EINVALID; the
// caller may then fall back to JSONMode.
func JSONSchema(name string, schema json.RawMessage) ChatOption {
	return func(r *chatRequest) {
		r.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: name, Strict: true, Schema: schema}}
	}
}

// Usage is the token count a server reports for one completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ReportUsage makes Complete store the server's token count of a
// successful call in u (zero when the server reports none).
func ReportUsage(u *Usage) ChatOption {
	return func(r *chatRequest) { r.usage = u }
}

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`

	usage *Usage
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// Complete sends messages and returns the assistant's reply text. It fails
// with EINVALID for an empty conversation, a message without a role or a
// rejected request; with EINTERNAL when the answer has no reply or, in
// JSONMode or with a JSONSchema, a reply that holds no JSON object; and as
// described in the package comment for HTTP failures. In those modes the
// reply returned is the JSON object alone, taken out of code fences or
// surrounding prose when the model added them (see ExtractObject).
func (c *Chat) Complete(ctx context.Context, messages []Message, opts ...ChatOption) (string, error) {
	if len(messages) == 0 {
		return "", engram.Errorf(engram.EINVALID, "openai: a chat completion needs at least one message")
	}
	for i, m := range messages {
		if m.Role == "" {
			return "", engram.Errorf(engram.EINVALID, "openai: message %d has no role", i)
		}
	}
	req := chatRequest{Model: c.c.cfg.Model, Messages: messages}
	for _, o := range opts {
		o(&req)
	}
	var resp chatResponse
	if err := c.c.post(ctx, "/chat/completions", req, &resp); err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", engram.Errorf(engram.EINTERNAL, "openai: the server's chat answer has no choices")
	}
	ch := resp.Choices[0]
	if ch.Message.Content == nil {
		if ch.Message.Refusal != "" {
			return "", engram.Errorf(engram.EINTERNAL, "openai: the model refused: %s", truncate(ch.Message.Refusal))
		}
		return "", engram.Errorf(engram.EINTERNAL, "openai: the server's chat answer has no content (finish_reason %q)", ch.FinishReason)
	}
	text := *ch.Message.Content
	if req.ResponseFormat != nil {
		obj, ok := ExtractObject(text)
		if !ok {
			return "", engram.Errorf(engram.EINTERNAL, "openai: JSON mode reply is not a JSON object (finish_reason %q): %s", ch.FinishReason, truncate(text))
		}
		text = obj
	}
	if req.usage != nil && resp.Usage != nil {
		*req.usage = *resp.Usage
	}
	return text, nil
}

// ExtractObject returns the JSON object in a model's reply: the reply
// itself when it is one, else the object inside a ``` code fence, else the
// first well-formed object that starts after leading prose. It reports
// false when there is none.
func ExtractObject(reply string) (string, bool) {
	s := strings.TrimSpace(reply)
	if isObject(s) {
		return s, true
	}
	if i := strings.Index(s, "```"); i >= 0 {
		body := s[i+3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.HasPrefix(strings.TrimSpace(body[:nl]), "{") {
			body = body[nl+1:] // the fence's language tag, e.g. "json"
		}
		if j := strings.Index(body, "```"); j >= 0 {
			body = body[:j]
		}
		if b := strings.TrimSpace(body); isObject(b) {
			return b, true
		}
	}
	for i := strings.IndexByte(s, '{'); i >= 0; {
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var raw json.RawMessage
		if dec.Decode(&raw) == nil && isObject(string(raw)) {
			return string(raw), true
		}
		j := strings.IndexByte(s[i+1:], '{')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "", false
}

func isObject(s string) bool {
	var obj map[string]json.RawMessage
	return strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &obj) == nil
}

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

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// Complete sends messages and returns the assistant's reply text. It fails
// with EINVALID for an empty conversation, a message without a role or a
// rejected request; with EINTERNAL when the answer has no reply or, in
// JSONMode, a reply that is not a JSON object; and as described in the
// package comment for HTTP failures.
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
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &obj); err != nil {
			return "", engram.Errorf(engram.EINTERNAL, "openai: JSON mode reply is not a JSON object (finish_reason %q): %s", ch.FinishReason, truncate(text))
		}
	}
	return text, nil
}

package chatproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/jsonbody"
)

// chatRequest is a decoded chat completion request. Fields holds every
// top-level field as sent, so that what the proxy does not change reaches
// the upstream byte for byte.
type chatRequest struct {
	body     []byte // as sent
	fields   map[string]json.RawMessage
	messages []message
	model    string
	user     string
	stream   bool
	// last is the index in messages of the last message with role user.
	last int
}

// chatRoles are the roles of OpenAI's chat completion messages; the proxy
// refuses others before the upstream sees them, as a typo ("asistant")
// would otherwise reach the model as a message of no known speaker.
var chatRoles = []string{"system", "developer", "user", "assistant", "tool", "function"}

// message is one element of "messages": its fields as sent, its role, and
// its text (a string content, or the text parts of an array joined).
type message struct {
	fields map[string]json.RawMessage
	role   string
	text   string
	parts  bool // content is an array of content parts
}

// parseRequest decodes a chat completion request. It returns an EINVALID
// error naming the first field that is missing or of the wrong type, or
// when no message with role user carries text.
func parseRequest(body []byte) (*chatRequest, error) {
	if err := jsonbody.CheckUTF8(body); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "request body: %v", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, engram.Errorf(engram.EINVALID, "request body is not a JSON object (a chat completion request with model and messages)")
	}
	req := &chatRequest{body: body, fields: fields, last: -1}
	if err := decodeField(fields, "model", &req.model, "a string"); err != nil {
		return nil, err
	}
	if req.model == "" {
		return nil, engram.Errorf(engram.EINVALID, "model is required: the model name the upstream LLM serves")
	}
	if err := decodeField(fields, "user", &req.user, "a string"); err != nil {
		return nil, err
	}
	if err := decodeField(fields, "stream", &req.stream, "true or false"); err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := decodeField(fields, "messages", &raws, "an array of messages"); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "messages is required: an array with at least one message")
	}
	for i, raw := range raws {
		m, err := parseMessage(i, raw)
		if err != nil {
			return nil, err
		}
		if m.role == "user" {
			req.last = i
		}
		req.messages = append(req.messages, m)
	}
	if req.last < 0 || strings.TrimSpace(req.messages[req.last].text) == "" {
		return nil, engram.Errorf(engram.EINVALID, "messages holds no message with role user and text content; the proxy recalls with the last one")
	}
	return req, nil
}

// decodeField decodes fields[name] into v when it is present and not null,
// or returns an EINVALID error saying it must be what.
func decodeField(fields map[string]json.RawMessage, name string, v any, what string) error {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return engram.Errorf(engram.EINVALID, "%s must be %s", name, what)
	}
	return nil
}

// parseMessage decodes messages[i]; an error names the field at fault.
func parseMessage(i int, raw json.RawMessage) (message, error) {
	var m message
	if err := json.Unmarshal(raw, &m.fields); err != nil || m.fields == nil {
		return m, engram.Errorf(engram.EINVALID, "messages[%d] is not an object", i)
	}
	if err := json.Unmarshal(m.fields["role"], &m.role); err != nil || m.role == "" {
		return m, engram.Errorf(engram.EINVALID, "messages[%d].role must be a string such as system, user or assistant", i)
	}
	if !slices.Contains(chatRoles, m.role) {
		return m, engram.Errorf(engram.EINVALID, "messages[%d].role %q is not one of %s", i, m.role, strings.Join(chatRoles, ", "))
	}
	content := bytes.TrimSpace(m.fields["content"])
	switch {
	case len(content) == 0 || string(content) == "null":
	case content[0] == '"':
		_ = json.Unmarshal(content, &m.text)
	case content[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(content, &parts); err != nil {
			return m, engram.Errorf(engram.EINVALID, "messages[%d].content must be a string or an array of content parts", i)
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				sb.WriteString(p.Text)
			}
		}
		m.text, m.parts = sb.String(), true
	default:
		return m, engram.Errorf(engram.EINVALID, "messages[%d].content must be a string or an array of content parts", i)
	}
	return m, nil
}

// Delimiters of the memory block put into the system message.
const (
	blockOpen  = "<engram-memories>"
	blockClose = "</engram-memories>"
	blockIntro = "What you remember about this user from earlier conversations, most relevant first, each with when it was said. Use it when it helps; it may be out of date."
)

// memoryBlock is the delimited block that carries the assembled context.
func memoryBlock(context string) string {
	return blockOpen + "\n" + blockIntro + "\n" + strings.TrimRight(context, "\n") + "\n" + blockClose
}

// withMemories returns the request body with block added to the first
// message when it is a system (or developer) message, else with a system
// message of block put first. Every other field is as sent.
func (req *chatRequest) withMemories(block string) ([]byte, error) {
	msgs := make([]map[string]json.RawMessage, 0, len(req.messages)+1)
	for _, m := range req.messages {
		msgs = append(msgs, m.fields)
	}
	if first := req.messages[0]; first.role == "system" || first.role == "developer" {
		sys := make(map[string]json.RawMessage, len(first.fields))
		for k, v := range first.fields {
			sys[k] = v
		}
		content, err := appendText(first, "\n\n"+block)
		if err != nil {
			return nil, err
		}
		sys["content"] = content
		msgs[0] = sys
	} else {
		content, _ := json.Marshal(block)
		msgs = append([]map[string]json.RawMessage{{"role": json.RawMessage(`"system"`), "content": content}}, msgs...)
	}
	fields := make(map[string]json.RawMessage, len(req.fields))
	for k, v := range req.fields {
		fields[k] = v
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return nil, fmt.Errorf("encode messages: %w", err)
	}
	fields["messages"] = b
	return json.Marshal(fields)
}

// appendText returns m's content with text appended: to the string, or as
// one more text part of an array. An empty content becomes text alone.
func appendText(m message, text string) (json.RawMessage, error) {
	if !m.parts {
		return json.Marshal(strings.TrimLeft(m.text+text, "\n"))
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(m.fields["content"], &parts); err != nil {
		return nil, fmt.Errorf("decode content parts: %w", err)
	}
	part, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return json.Marshal(append(parts, part))
}

// query is the text the proxy recalls with: the last user message, cut to
// the longest query a search takes.
func (req *chatRequest) query() string {
	return truncate(strings.TrimSpace(req.messages[req.last].text), engram.MaxContentBytes)
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// split cuts s into pieces of at most n bytes at rune boundaries; joined,
// they are s.
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		piece := truncate(s, n)
		out = append(out, piece)
		s = s[len(piece):]
	}
	return append(out, s)
}

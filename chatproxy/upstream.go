package chatproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// forward sends body to the upstream's chat completions endpoint with the
// proxy's own key. It returns the transport's error when no answer came.
func (h *Handler) forward(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build upstream request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	return h.cfg.HTTPClient.Do(req)
}

// writeOpenAIError answers in OpenAI's error shape.
func writeOpenAIError(w http.ResponseWriter, status int, msg, typ string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeUpstreamFailure answers a call that got no answer: 504 when the
// proxy's timeout ran out, else 502.
func writeUpstreamFailure(w http.ResponseWriter, ctx context.Context, err error) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		writeOpenAIError(w, http.StatusGatewayTimeout, "the upstream LLM did not answer in time", "upstream_error")
		return
	}
	writeOpenAIError(w, http.StatusBadGateway, "the upstream LLM could not be reached", "upstream_error")
}

// passError relays an upstream error answer: its status, Retry-After and
// body when that is OpenAI's error shape, else the body's start wrapped in
// that shape.
func passError(w http.ResponseWriter, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	var shape struct {
		Error map[string]any `json:"error"`
	}
	if json.Unmarshal(body, &shape) == nil && shape.Error != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		return
	}
	msg := fmt.Sprintf("the upstream LLM answered %s", resp.Status)
	if text := bytes.TrimSpace(body); len(text) > 0 {
		msg += ": " + truncate(string(text), 512)
	}
	writeOpenAIError(w, resp.StatusCode, msg, "upstream_error")
}

func isEventStream(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream"
}

// relayJSON stores the turn of a whole JSON reply, then writes the reply
// as the upstream sent it; a reply that cannot be read is a 502, a store
// that fails answers its error instead of the reply.
func (h *Handler) relayJSON(w http.ResponseWriter, r *http.Request, resp *http.Response, x *exchange) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxReplyBytes+1))
	switch {
	case err != nil:
		h.cfg.Logger.Warn("chatproxy: read upstream reply", "err", err)
		writeOpenAIError(w, http.StatusBadGateway, "the upstream LLM's reply broke off", "upstream_error")
		return
	case len(body) > MaxReplyBytes:
		writeOpenAIError(w, http.StatusBadGateway, fmt.Sprintf("the upstream LLM's reply is longer than %d bytes", MaxReplyBytes), "upstream_error")
		return
	}
	var reply struct {
		Choices []struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	var text string
	if json.Unmarshal(body, &reply) == nil && len(reply.Choices) > 0 {
		text = contentText(reply.Choices[0].Message.Content)
	}
	if err := h.store(r.Context(), x, text); err != nil {
		engramhttp.WriteError(w, r, err)
		return
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// contentText is the text of a message content: a string, or the text
// parts of an array joined; "" for null or anything else.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out string
	for _, p := range parts {
		if p.Type == "text" {
			out += p.Text
		}
	}
	return out
}

// streamState follows a relayed stream: the reply text of choice 0 so
// far, and how the stream ended.
type streamState struct {
	text     bytes.Buffer
	finished bool // choice 0 had a finish_reason
	done     bool // the upstream sent data: [DONE]
	failed   bool // the upstream sent an error event
}

// relayStream relays the upstream's server-sent events one event at a
// time, flushing each, while collecting the reply. The upstream's closing
// "data: [DONE]" is held back until the turn is stored; a stream that
// broke off or carried an error stores nothing and, when the proxy is at
// fault, ends with an error event of its own.
func (h *Handler) relayStream(w http.ResponseWriter, ctx context.Context, resp *http.Response, x *exchange) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(resp.StatusCode)
	_ = rc.Flush()

	var st streamState
	err := readEvents(io.LimitReader(resp.Body, MaxReplyBytes+1), func(event []byte, data []byte) error {
		if st.observe(data) {
			return nil // [DONE]: held back
		}
		if _, err := w.Write(event); err != nil {
			return fmt.Errorf("write to client: %w", err)
		}
		return rc.Flush()
	})
	switch {
	case err != nil:
		h.cfg.Logger.Warn("chatproxy: stream broke off; the turn is not stored", "err", err)
		writeEvent(w, rc, "the upstream LLM's stream broke off", "upstream_error")
		return
	case st.failed:
		return // the upstream's own error event was relayed as it came
	case !st.done && !st.finished:
		writeEvent(w, rc, "the upstream LLM's stream ended before the reply was finished", "upstream_error")
		return
	}
	if err := h.store(ctx, x, st.text.String()); err != nil {
		writeEvent(w, rc, "the reply was not stored as memory: "+engram.ErrorMessage(err), "engram_error")
		return
	}
	if st.done {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
		_ = rc.Flush()
	}
}

// observe takes an event's data and reports whether it is [DONE].
func (st *streamState) observe(data []byte) bool {
	if string(data) == "[DONE]" {
		st.done = true
		return true
	}
	var chunk struct {
		Error   json.RawMessage `json:"error"`
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content *string `json:"content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &chunk) != nil {
		return false
	}
	if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
		st.failed = true
	}
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue
		}
		if c.Delta.Content != nil {
			st.text.WriteString(*c.Delta.Content)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			st.finished = true
		}
	}
	return false
}

// writeEvent ends a stream with an error event in OpenAI's shape, which
// OpenAI's clients raise as an error.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, msg, typ string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	_ = rc.Flush()
}

// readEvents splits a server-sent event stream into events and calls fn
// with each event's bytes as sent (its closing blank line included) and
// its data lines joined. A line longer than MaxReplyBytes, a stream longer
// than that, or one that ends in the middle of an event is an error; so is
// any error fn returns.
func readEvents(r io.Reader, fn func(event, data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var event, data []byte
	total := 0
	for {
		line, err := br.ReadBytes('\n')
		total += len(line)
		if total > MaxReplyBytes {
			return fmt.Errorf("stream is longer than %d bytes", MaxReplyBytes)
		}
		if len(line) > 0 && err == nil {
			event = append(event, line...)
			text := bytes.TrimRight(line, "\r\n")
			switch {
			case len(text) == 0:
				if err := fn(event, data); err != nil {
					return err
				}
				event, data = event[:0], data[:0]
			case bytes.HasPrefix(text, []byte("data:")):
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(text, []byte("data:")), []byte(" "))...)
			}
			continue
		}
		switch {
		case err == io.EOF && len(line) == 0 && len(event) == 0:
			return nil
		case err == io.EOF:
			return errors.New("stream ended in the middle of an event")
		default:
			return err
		}
	}
}

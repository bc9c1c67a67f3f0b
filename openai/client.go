package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Bounds on what is read from a response: a batch of 64 vectors of 3072
// floats is about 5 MB of JSON, error bodies are short.
const (
	maxResponseBytes = 128 << 20
	maxErrorBytes    = 64 << 10
)

// client sends JSON requests with retries; Embedder and Chat share it.
type client struct {
	cfg Config
}

// failure describes one failed attempt.
type failure struct {
	retry      bool
	retryAfter time.Duration // from the response; < 0 when absent
	code       string        // engram code when the failure is final
	reason     string        // a clause saying what went wrong
}

// post sends in as JSON to the API path and decodes a 2xx answer into out,
// retrying as the package comment describes.
func (c *client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("openai: encode request: %w", err)
	}
	return c.send(ctx, path, "application/json", body, out)
}

// send posts body of the given content type to the API path and decodes a
// 2xx JSON answer into out, retrying as the package comment describes, and
// tells the configured CallObserver of the call.
func (c *client) send(ctx context.Context, path, contentType string, body []byte, out any) error {
	start := time.Now()
	attempts, err := c.sendAttempts(ctx, path, contentType, body, out)
	if c.cfg.Observer != nil {
		c.cfg.Observer.ObserveCall(strings.TrimPrefix(path, "/"), attempts, time.Since(start), err)
	}
	return err
}

// sendAttempts is send without the observer; it also returns how many
// attempts it made.
func (c *client) sendAttempts(ctx context.Context, path, contentType string, body []byte, out any) (int, error) {
	endpoint := c.cfg.BaseURL + path
	for attempt := 0; ; attempt++ {
		f := c.attempt(ctx, endpoint, contentType, body, out)
		if f == nil {
			return attempt + 1, nil
		}
		if err := ctx.Err(); err != nil {
			return attempt + 1, fmt.Errorf("openai: POST %s: %w", endpoint, err)
		}
		if !f.retry {
			return attempt + 1, engram.Errorf(f.code, "openai: POST %s: %s", endpoint, f.reason)
		}
		if attempt >= c.cfg.MaxRetries {
			return attempt + 1, engram.Errorf(engram.EUNAVAILABLE, "openai: POST %s failed after %d attempts: %s", endpoint, attempt+1, f.reason)
		}
		wait := c.backoff(attempt)
		if f.retryAfter >= 0 {
			if f.retryAfter > c.cfg.MaxBackoff {
				return attempt + 1, engram.Errorf(engram.EUNAVAILABLE, "openai: POST %s: %s; the server asks to retry after %s, longer than MaxBackoff %s",
					endpoint, f.reason, f.retryAfter, c.cfg.MaxBackoff)
			}
			wait = f.retryAfter
		}
		c.cfg.Logger.Warn("openai: retrying request", "url", endpoint, "attempt", attempt+1, "wait", wait, "reason", f.reason)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return attempt + 1, fmt.Errorf("openai: POST %s: %w", endpoint, ctx.Err())
		case <-t.C:
		}
	}
}

// attempt makes one HTTP request; it returns nil when out holds the answer.
func (c *client) attempt(ctx context.Context, endpoint, contentType string, body []byte, out any) *failure {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return &failure{code: engram.EINVALID, reason: fmt.Sprintf("cannot build the request: %v", err)}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "engram")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}

	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return c.transportFailure(ctx, actx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(out); err != nil {
			if actx.Err() != nil || isTransport(err) {
				f := c.transportFailure(ctx, actx, err)
				if actx.Err() == nil {
					f.reason = fmt.Sprintf("the connection broke while reading the answer: %v", err)
				}
				return f
			}
			return &failure{code: engram.EINTERNAL, reason: fmt.Sprintf("the server's answer (status %d) is not JSON of the expected shape: %v", resp.StatusCode, err)}
		}
		return nil
	}

	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	f := &failure{
		retryAfter: -1,
		reason:     fmt.Sprintf("the server answered %s: %s", resp.Status, serverMessage(b)),
	}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests || (s >= 500 && s != http.StatusNotImplemented):
		f.retry = true
		f.retryAfter = retryAfter(resp.Header)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		f.code = engram.EUNAUTHORIZED
	case s == http.StatusRequestEntityTooLarge:
		f.code = engram.ETOOLARGE
	case s >= 400 && s < 500:
		f.code = engram.EINVALID
	default:
		// 1xx and 3xx other than redirects the client follows: the URL
		// most likely points at something that is not the API.
		f.code = engram.EUNAVAILABLE
	}
	return f
}

// transportFailure classifies an error without an HTTP status. The caller
// checks ctx itself, so only timeouts and connection errors matter here.
func (c *client) transportFailure(ctx, actx context.Context, err error) *failure {
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &failure{retry: true, retryAfter: -1, reason: fmt.Sprintf("no answer within the timeout of %s", c.cfg.Timeout)}
	}
	return &failure{retry: true, retryAfter: -1, reason: fmt.Sprintf("cannot reach the server: %v", err)}
}

// isTransport reports whether a decoding error came from the connection
// (including a body cut short) rather than from the JSON itself.
func isTransport(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return !errors.As(err, &syn) && !errors.As(err, &typ) && err != io.EOF
}

// backoff returns the jittered wait before retry number attempt+1.
func (c *client) backoff(attempt int) time.Duration {
	d := c.cfg.MaxBackoff
	if attempt < 30 {
		if e := c.cfg.RetryBase << attempt; e > 0 && e < d {
			d = e
		}
	}
	// Jitter downwards so that clients failed together retry apart.
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads how long the server asks us to wait: OpenAI's
// retry-after-ms, else Retry-After in seconds or as an HTTP date. It
// returns -1 when neither is usable.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

// serverMessage extracts the error message from an error body: OpenAI's
// {"error":{"message":...}}, Ollama's {"error":"..."}, FastAPI's
// {"detail":...}, else the start of the body itself.
func serverMessage(b []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0:
			return truncate(string(v.Detail))
		}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(no error message)"
	}
	return truncate(s)
}

func truncate(s string) string {
	const n = 300
	if len(s) <= n {
		return s
	}
	// Cut at a rune boundary so the message stays valid UTF-8.
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

func newChat(t *testing.T, cfg openai.Config) *openai.Chat {
	t.Helper()
	cfg.Model = "test-chat"
	c, err := openai.NewChat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChatComplete(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{APIKey: "sk-chat"})
	srv.QueueChat("Paris.")
	cfg := testConfig(srv.URL())
	cfg.APIKey = "sk-chat"
	c := newChat(t, cfg)
	if got, want := c.Model(), "test-chat"; got != want {
		t.Errorf("Model() = %q, want %q", got, want)
	}
	msgs := []openai.Message{
		{Role: "system", Content: "Answer briefly."},
		{Role: "user", Content: "Capital of France?"},
	}
	got, err := c.Complete(context.Background(), msgs, openai.Temperature(0), openai.MaxTokens(20))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Paris."; got != want {
		t.Fatalf("reply %q, want %q", got, want)
	}

	r := srv.Requests()[0]
	if got, want := r.Path, "/v1/chat/completions"; got != want {
		t.Fatalf("path %q, want %q", got, want)
	}
	if got, want := r.Header.Get("Authorization"), "Bearer sk-chat"; got != want {
		t.Errorf("Authorization %q, want %q", got, want)
	}
	req := r.Chat
	if req.Model != "test-chat" || len(req.Messages) != 2 || req.Messages[1].Content != "Capital of France?" || req.Messages[0].Role != "system" {
		t.Errorf("request %+v does not carry the model and messages", req)
	}
	// Temperature 0 must be sent, not dropped as a zero value.
	if req.Temperature == nil || *req.Temperature != 0 {
		t.Errorf("temperature %v, want 0", req.Temperature)
	}
	if got, want := req.MaxTokens, 20; got != want {
		t.Errorf("max_tokens %d, want %d", got, want)
	}
	if req.ResponseFormat != nil {
		t.Errorf("response_format %+v sent without JSON mode", req.ResponseFormat)
	}
}

func TestChatDefaultsOmitOptionalFields(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.QueueChat("ok")
	if _, err := newChat(t, testConfig(srv.URL())).Complete(context.Background(), []openai.Message{{Role: "user", Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(srv.Requests()[0].Body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"temperature", "max_tokens", "response_format"} {
		if _, ok := raw[k]; ok {
			t.Errorf("request sent %q without the option", k)
		}
	}
}

func TestChatJSONMode(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		if r.ResponseFormat != nil && r.ResponseFormat.Type == "json_object" {
			return fmt.Sprintf(`{"echo": %q}`, r.Messages[len(r.Messages)-1].Content)
		}
		return "not json"
	}})
	c := newChat(t, testConfig(srv.URL()))
	msgs := []openai.Message{{Role: "user", Content: "reply in JSON"}}

	got, err := c.Complete(context.Background(), msgs, openai.JSONMode())
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Echo string }
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("reply %q is not JSON: %v", got, err)
	}
	if v.Echo != "reply in JSON" {
		t.Fatalf("echo %q", v.Echo)
	}

	// A JSON-mode reply that is not an object is an error, not a surprise
	// for the caller's decoder.
	srv.QueueChat("Sure! Here is your JSON: {")
	_, err = c.Complete(context.Background(), msgs, openai.JSONMode())
	assertCode(t, err, engram.EINTERNAL)
	if !strings.Contains(engram.ErrorMessage(err), "not a JSON object") {
		t.Fatalf("message %q", engram.ErrorMessage(err))
	}

	// Without JSON mode any text is returned as is.
	got, err = c.Complete(context.Background(), msgs)
	if err != nil || got != "not json" {
		t.Fatalf("Complete() = %q, %v", got, err)
	}
}

func TestChatRetriesAndErrors(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.FailNext(2, openaitest.Fault{Status: 503})
	srv.QueueChat("after retries")
	c := newChat(t, testConfig(srv.URL()))
	msgs := []openai.Message{{Role: "user", Content: "hi"}}
	got, err := c.Complete(context.Background(), msgs)
	if err != nil || got != "after retries" {
		t.Fatalf("Complete() = %q, %v", got, err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}

	// Nothing scripted: the fake answers 400, which is not retried.
	_, err = c.Complete(context.Background(), msgs)
	assertCode(t, err, engram.EINVALID)
	if !strings.Contains(engram.ErrorMessage(err), "no chat reply is scripted") {
		t.Fatalf("message %q", engram.ErrorMessage(err))
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
}

func TestChatRejectsBadInput(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	c := newChat(t, testConfig(srv.URL()))
	for _, tc := range []struct {
		name string
		msgs []openai.Message
		want string
	}{
		{"no messages", nil, "at least one message"},
		{"no role", []openai.Message{{Role: "user", Content: "a"}, {Content: "b"}}, "message 1 has no role"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Complete(context.Background(), tc.msgs)
			assertCode(t, err, engram.EINVALID)
			if !strings.Contains(engram.ErrorMessage(err), tc.want) {
				t.Fatalf("message %q does not contain %q", engram.ErrorMessage(err), tc.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests for invalid input", n)
	}
}

func TestChatMalformedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"no choices", `{"choices":[]}`, "no choices"},
		{"null content", `{"choices":[{"message":{"content":null},"finish_reason":"tool_calls"}]}`, `no content (finish_reason "tool_calls")`},
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"I cannot help"}}]}`, "refused: I cannot help"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, tc.body)
			}))
			defer ts.Close()
			_, err := newChat(t, testConfig(ts.URL)).Complete(context.Background(), []openai.Message{{Role: "user", Content: "x"}})
			assertCode(t, err, engram.EINTERNAL)
			if !strings.Contains(engram.ErrorMessage(err), tc.want) {
				t.Fatalf("message %q does not contain %q", engram.ErrorMessage(err), tc.want)
			}
		})
	}
}

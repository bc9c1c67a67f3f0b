package openaitest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/openai/openaitest"
)

func post(t *testing.T, url, body string, header ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, v
}

func TestVector(t *testing.T) {
	a := openaitest.Vector("The cat sat on the mat", 64)
	if b := openaitest.Vector("The cat sat on the mat", 64); !equal(a, b) {
		t.Fatal("Vector is not deterministic")
	}
	var ss float64
	for _, x := range a {
		ss += float64(x) * float64(x)
	}
	if math.Abs(ss-1) > 1e-5 {
		t.Fatalf("squared norm %v, want 1", ss)
	}
	if equal(a, openaitest.Vector("the cat sat on the mat", 64)) {
		t.Fatal("different texts got the same vector")
	}
	// Shared words make texts closer than unrelated ones.
	near := dot(a, openaitest.Vector("a cat on a mat", 64))
	far := dot(a, openaitest.Vector("quarterly revenue grew strongly", 64))
	if near <= far+0.2 {
		t.Fatalf("similar texts have cosine %v, unrelated %v", near, far)
	}
}

func TestEmbeddingsWire(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 6})
	status, v := post(t, srv.URL()+"/embeddings", `{"model":"m","input":"single string"}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	data := v["data"].([]any)
	if len(data) != 1 || v["object"] != "list" || v["model"] != "m" {
		t.Fatalf("answer %v", v)
	}
	emb := data[0].(map[string]any)["embedding"].([]any)
	if len(emb) != 6 {
		t.Fatalf("embedding length %d, want 6", len(emb))
	}

	// base64 carries the same vector as little-endian float32.
	status, v = post(t, srv.URL()+"/embeddings", `{"model":"m","input":["single string"],"encoding_format":"base64","dimensions":4}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	b, err := base64.StdEncoding.DecodeString(v["data"].([]any)[0].(map[string]any)["embedding"].(string))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(b)/4)
	binary.Read(bytes.NewReader(b), binary.LittleEndian, got)
	if !equal(got, openaitest.Vector("single string", 4)) {
		t.Fatalf("base64 vector %v", got)
	}

	r := srv.Requests()[1]
	if r.Embedding == nil || r.Embedding.Dimensions == nil || *r.Embedding.Dimensions != 4 || r.Status != 200 {
		t.Fatalf("recorded %+v", r)
	}
}

func TestEmbeddingsErrors(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{APIKey: "k", Models: []string{"m"}})
	auth := []string{"Authorization", "Bearer k"}
	for _, tc := range []struct {
		name   string
		body   string
		header []string
		status int
		want   string
	}{
		{"no key", `{"model":"m","input":"x"}`, nil, 401, "didn't provide an API key"},
		{"wrong key", `{"model":"m","input":"x"}`, []string{"Authorization", "Bearer nope"}, 401, "Incorrect API key"},
		{"unknown model", `{"model":"z","input":"x"}`, auth, 404, "does not exist"},
		{"no model", `{"input":"x"}`, auth, 400, "must provide a model"},
		{"empty text", `{"model":"m","input":["a",""]}`, auth, 400, "input[1]"},
		{"no input", `{"model":"m","input":[]}`, auth, 400, "empty"},
		{"bad input", `{"model":"m","input":{"a":1}}`, auth, 400, "string or an array"},
		{"bad dimensions", `{"model":"m","input":"x","dimensions":0}`, auth, 400, "dimensions"},
		{"bad format", `{"model":"m","input":"x","encoding_format":"int8"}`, auth, 400, "encoding_format"},
		{"not json", `{`, auth, 400, "could not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, v := post(t, srv.URL()+"/embeddings", tc.body, tc.header...)
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			msg, _ := v["error"].(map[string]any)["message"].(string)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q does not contain %q", msg, tc.want)
			}
		})
	}
}

func TestFaultsAndRecording(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.FailNext(2, openaitest.Fault{Status: 429, RetryAfter: "3", Message: "slow down"})
	for i, want := range []int{429, 429, 200} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/embeddings", strings.NewReader(`{"model":"m","input":"x"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: status %d, want %d", i, resp.StatusCode, want)
		}
		if got, wantRA := resp.Header.Get("Retry-After"), map[bool]string{true: "3", false: ""}[want == 429]; got != wantRA {
			t.Fatalf("request %d: Retry-After %q, want %q", i, got, wantRA)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Status != 429 || reqs[2].Status != 200 {
		t.Fatalf("recorded %d requests: %+v", len(reqs), reqs)
	}

	srv.FailNext(1, openaitest.Fault{Drop: true})
	if _, err := http.Post(srv.URL()+"/embeddings", "application/json", strings.NewReader(`{"model":"m","input":"x"}`)); err == nil {
		t.Fatal("a dropped connection gave no error")
	}
	srv.Reset()
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests after Reset", n)
	}
}

func TestChatScript(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string { return "fallback " + r.Model }})
	srv.QueueChat("one", "two")
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for _, want := range []string{"one", "two", "fallback m"} {
		status, v := post(t, srv.URL()+"/chat/completions", body)
		if status != 200 {
			t.Fatalf("status %d: %v", status, v)
		}
		msg := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		if msg["content"] != want || msg["role"] != "assistant" {
			t.Fatalf("message %v, want content %q", msg, want)
		}
	}
	status, _ := post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":[]}`)
	if status != 400 {
		t.Fatalf("empty messages: status %d, want 400", status)
	}
}

func TestConcurrentUse(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Shuffle: true})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := http.Post(srv.URL()+"/embeddings", "application/json", strings.NewReader(`{"model":"m","input":["a","b","c"]}`))
			if err == nil {
				resp.Body.Close()
			}
			srv.Requests()
		})
	}
	wg.Wait()
	if n := len(srv.Requests()); n != 8 {
		t.Fatalf("%d requests recorded, want 8", n)
	}
}

func TestNilTestingTB(t *testing.T) {
	srv := openaitest.NewServer(nil, openaitest.Options{})
	srv.Close()
	if _, err := http.Post(srv.URL()+"/embeddings", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Fatal("server still answers after Close")
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// A streaming request gets the scripted reply as server-sent chunks whose
// deltas join to the reply, then the usage when asked, then [DONE].
func TestChatStream(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.QueueChat("Porto is lovely in May")
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	b, _ := io.ReadAll(resp.Body)
	var text strings.Builder
	var chunks, usage int
	events := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
	if last := events[len(events)-1]; last != "data: [DONE]" {
		t.Fatalf("last event %q, want data: [DONE]", last)
	}
	for _, ev := range events[:len(events)-1] {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("event %q: %v", ev, err)
		}
		chunks++
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
		}
		if c.Usage != nil {
			usage = c.Usage.CompletionTokens
		}
	}
	if got := text.String(); got != "Porto is lovely in May" || chunks < 6 {
		t.Fatalf("deltas join to %q in %d chunks", got, chunks)
	}
	if usage != 5 {
		t.Fatalf("usage completion_tokens %d, want 5", usage)
	}
	if r := srv.Requests()[0]; r.Chat == nil || !r.Chat.Stream || r.Chat.StreamOptions == nil || !r.Chat.StreamOptions.IncludeUsage {
		t.Fatalf("recorded %+v", r.Chat)
	}
}

// Content given as an array of parts is recorded as its text parts joined.
func TestChatContentParts(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(openaitest.ChatRequest) string { return "ok" }})
	status, v := post(t, srv.URL()+"/chat/completions",
		`{"model":"m","messages":[{"role":"system","content":[{"type":"text","text":"Be brief. "},{"type":"text","text":"Sei kurz."}]},{"role":"assistant","content":null},{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	m := srv.Requests()[0].Chat.Messages
	if m[0].Content != "Be brief. Sei kurz." || !m[0].Parts || m[1].Content != "" || m[2].Content != "hi" || m[2].Parts {
		t.Fatalf("recorded messages %+v", m)
	}
	status, _ = post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":{"a":1}}]}`)
	if status != 400 {
		t.Fatalf("object content: status %d, want 400", status)
	}
}

// TestDownAndHang: a server that is down closes every connection without
// an answer, and answers again once it is up; a hanging server holds the
// requests that match until the client gives up, and answers the others.
func TestDownAndHang(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(openaitest.ChatRequest) string { return "ok" }})
	chat := func(content string, timeout time.Duration) error {
		body := `{"model":"m","messages":[{"role":"user","content":"` + content + `"}]}`
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
		resp, err := (&http.Client{Timeout: timeout}).Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	srv.SetDown(true)
	if err := chat("hello", 5*time.Second); err == nil {
		t.Error("a request to a server that is down was answered")
	}
	srv.SetDown(false)
	if err := chat("hello", 5*time.Second); err != nil {
		t.Errorf("after the server came back: %v", err)
	}
	srv.SetHang(func(r openaitest.Request) bool { return bytes.Contains(r.Body, []byte("slow")) })
	start := time.Now()
	if err := chat("slow one", 100*time.Millisecond); err == nil || time.Since(start) < 100*time.Millisecond {
		t.Errorf("a hanging request ended after %v with %v, want the client's timeout", time.Since(start), err)
	}
	if err := chat("quick one", 5*time.Second); err != nil {
		t.Errorf("a request that does not hang: %v", err)
	}
	srv.SetHang(nil)
	if err := chat("slow one", 5*time.Second); err != nil {
		t.Errorf("after the hanging stopped: %v", err)
	}
}

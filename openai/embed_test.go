package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// testConfig returns a config against url with fast retries.
func testConfig(url string) openai.Config {
	return openai.Config{
		BaseURL:    url,
		Model:      "test-embed",
		Timeout:    5 * time.Second,
		RetryBase:  time.Millisecond,
		MaxBackoff: 20 * time.Millisecond,
		Logger:     slog.New(slog.DiscardHandler),
	}
}

func newEmbedder(t *testing.T, cfg openai.Config) *openai.Embedder {
	t.Helper()
	e, err := openai.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d about topic %d", i, i%7)
	}
	return out
}

func embeddingRequests(srv *openaitest.Server) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range srv.Requests() {
		if r.Path == "/v1/embeddings" {
			out = append(out, r)
		}
	}
	return out
}

func assertVector(t *testing.T, i int, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("vector %d has length %d, want %d", i, len(got), len(want))
	}
	for j := range got {
		if math.Abs(float64(got[j]-want[j])) > 1e-6 {
			t.Fatalf("vector %d differs at %d: got %v, want %v", i, j, got[j], want[j])
		}
	}
}

func assertCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := engram.ErrorCode(err); got != code {
		t.Fatalf("error code %q, want %q (err: %v)", got, code, err)
	}
}

func TestEmbedBatchesAndKeepsOrder(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 24, Shuffle: true})
	e := newEmbedder(t, testConfig(srv.URL()))
	in := texts(150)
	vecs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(vecs), len(in); got != want {
		t.Fatalf("got %d vectors, want %d", got, want)
	}
	for i, v := range vecs {
		assertVector(t, i, v, openaitest.Vector(in[i], 24))
	}

	reqs := embeddingRequests(srv)
	if got, want := len(reqs), 3; got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
	next := 0
	for i, r := range reqs {
		want := []int{64, 64, 22}[i]
		if got := len(r.Embedding.Input); got != want {
			t.Errorf("request %d carried %d texts, want %d", i, got, want)
		}
		for j, s := range r.Embedding.Input {
			if s != in[next+j] {
				t.Fatalf("request %d input %d is %q, want %q", i, j, s, in[next+j])
			}
		}
		next += len(r.Embedding.Input)
		if got, want := r.Embedding.Model, "test-embed"; got != want {
			t.Errorf("model %q, want %q", got, want)
		}
		if got, want := r.Embedding.EncodingFormat, "float"; got != want {
			t.Errorf("encoding_format %q, want %q", got, want)
		}
		var raw map[string]any
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := raw["dimensions"]; ok {
			t.Errorf("request sent dimensions although none is configured: %s", r.Body)
		}
	}
}

func TestEmbedBatchSize(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	cfg := testConfig(srv.URL())
	cfg.BatchSize = 10
	e := newEmbedder(t, cfg)
	if _, err := e.Embed(context.Background(), texts(25)); err != nil {
		t.Fatal(err)
	}
	if got, want := len(embeddingRequests(srv)), 3; got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
}

func TestEmbedNothing(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	e := newEmbedder(t, testConfig(srv.URL()))
	vecs, err := e.Embed(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(vecs); got != 0 {
		t.Fatalf("got %d vectors for no texts", got)
	}
	if got := len(srv.Requests()); got != 0 {
		t.Fatalf("%d requests for no texts, want 0", got)
	}
}

func TestEmbedRejectsBadTexts(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	e := newEmbedder(t, testConfig(srv.URL()))
	for _, tc := range []struct {
		name  string
		texts []string
		want  string
	}{
		{"empty", []string{"a", ""}, "text 1 is empty"},
		{"invalid utf-8", []string{"ok", "ok", "\xff\xfe"}, "text 2 is not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Embed(context.Background(), tc.texts)
			assertCode(t, err, engram.EINVALID)
			if !strings.Contains(engram.ErrorMessage(err), tc.want) {
				t.Fatalf("message %q does not say %q", engram.ErrorMessage(err), tc.want)
			}
		})
	}
	if got := len(srv.Requests()); got != 0 {
		t.Fatalf("%d requests sent for invalid input, want 0", got)
	}
}

func TestEmbedConfiguredDimensions(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 32})
	cfg := testConfig(srv.URL())
	cfg.Dimensions = 12
	e := newEmbedder(t, cfg)
	if got, want := e.Name(), "openai:test-embed:12"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got, want := e.Dim(), 12; got != want {
		t.Errorf("Dim() before any call = %d, want %d", got, want)
	}
	vecs, err := e.Embed(context.Background(), []string{"hello world"})
	if err != nil {
		t.Fatal(err)
	}
	assertVector(t, 0, vecs[0], openaitest.Vector("hello world", 12))
	r := embeddingRequests(srv)[0]
	if r.Embedding.Dimensions == nil || *r.Embedding.Dimensions != 12 {
		t.Fatalf("request dimensions = %v, want 12", r.Embedding.Dimensions)
	}
}

func TestEmbedDiscoversDimension(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 40})
	e := newEmbedder(t, testConfig(srv.URL()))
	if got, want := e.Name(), "openai:test-embed"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got := e.Dim(); got != 0 {
		t.Errorf("Dim() before discovery = %d, want 0", got)
	}
	n, err := e.Probe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 40 || e.Dim() != 40 {
		t.Fatalf("Probe() = %d, Dim() = %d, want 40", n, e.Dim())
	}

	// A server whose vectors change length is refused, not mixed in.
	srv.SetDim(48)
	_, err = e.Embed(context.Background(), []string{"x"})
	assertCode(t, err, engram.EMISMATCH)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "48") || !strings.Contains(msg, "40") {
		t.Fatalf("message %q does not name both lengths", msg)
	}
	if got := e.Dim(); got != 40 {
		t.Fatalf("Dim() changed to %d after a mismatch", got)
	}
}

func TestEmbedConcurrentDiscovery(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 16})
	e := newEmbedder(t, testConfig(srv.URL()))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			in := texts(20 + g)
			vecs, err := e.Embed(context.Background(), in)
			if err != nil {
				errs <- err
				return
			}
			for i, v := range vecs {
				if len(v) != 16 {
					errs <- fmt.Errorf("vector %d has length %d", i, len(v))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := e.Dim(); got != 16 {
		t.Fatalf("Dim() = %d, want 16", got)
	}
}

func TestEmbedDimensionsIgnoredByServer(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 32, IgnoreDimensions: true})
	cfg := testConfig(srv.URL())
	cfg.Dimensions = 16
	e := newEmbedder(t, cfg)
	_, err := e.Probe(context.Background())
	assertCode(t, err, engram.EMISMATCH)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "32-dimensional") || !strings.Contains(msg, "Dimensions is 16") {
		t.Fatalf("message %q does not explain the mismatch", msg)
	}
}

func TestEmbedNormalizes(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Dim: 8, Unnormalized: true})
	e := newEmbedder(t, testConfig(srv.URL()))
	in := []string{"alpha", "beta gamma"}
	vecs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(ss)-1) > 1e-5 {
			t.Fatalf("vector %d has norm %v, want 1", i, math.Sqrt(ss))
		}
		assertVector(t, i, v, openaitest.Vector(in[i], 8))
	}
}

func TestEmbedAuthHeader(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string
	}{
		{"with key", "sk-test", "Bearer sk-test"},
		{"without key", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.Options{APIKey: tc.key})
			cfg := testConfig(srv.URL())
			cfg.APIKey = tc.key
			if _, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"}); err != nil {
				t.Fatal(err)
			}
			h := srv.Requests()[0].Header
			if got := h.Get("Authorization"); got != tc.want {
				t.Fatalf("Authorization = %q, want %q", got, tc.want)
			}
			if _, ok := h["Authorization"]; ok != (tc.want != "") {
				t.Fatalf("Authorization header present = %v, want %v", ok, tc.want != "")
			}
		})
	}
}

func TestEmbedRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		fault openaitest.Fault
	}{
		{"429 with Retry-After 0", 2, openaitest.Fault{Status: 429, RetryAfter: "0"}},
		{"429 without Retry-After", 1, openaitest.Fault{Status: 429}},
		{"500", 3, openaitest.Fault{Status: 500}},
		{"502", 1, openaitest.Fault{Status: 502}},
		{"503", 4, openaitest.Fault{Status: 503}},
		{"dropped connection", 2, openaitest.Fault{Drop: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.Options{})
			srv.FailNext(tc.n, tc.fault)
			e := newEmbedder(t, testConfig(srv.URL()))
			vecs, err := e.Embed(context.Background(), []string{"retry me"})
			if err != nil {
				t.Fatal(err)
			}
			assertVector(t, 0, vecs[0], openaitest.Vector("retry me", 32))
			if got, want := len(srv.Requests()), tc.n+1; got != want {
				t.Fatalf("%d requests, want %d", got, want)
			}
		})
	}
}

func TestEmbedDoesNotRetryClientErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     openaitest.Options
		fault    *openaitest.Fault
		key      string
		code     string
		wantText []string
	}{
		{"400", openaitest.Options{}, &openaitest.Fault{Status: 400, Message: "bad input here"}, "", engram.EINVALID,
			[]string{"400 Bad Request", "bad input here", "/v1/embeddings"}},
		{"401 missing key", openaitest.Options{APIKey: "sk-right"}, nil, "", engram.EUNAUTHORIZED,
			[]string{"401", "didn't provide an API key"}},
		{"401 wrong key", openaitest.Options{APIKey: "sk-right"}, nil, "sk-wrong", engram.EUNAUTHORIZED,
			[]string{"401", "Incorrect API key"}},
		{"403", openaitest.Options{}, &openaitest.Fault{Status: 403, Message: "forbidden region"}, "", engram.EUNAUTHORIZED,
			[]string{"403", "forbidden region"}},
		{"404 unknown model", openaitest.Options{Models: []string{"other"}}, nil, "", engram.EINVALID,
			[]string{"404", "The model `test-embed` does not exist"}},
		{"413", openaitest.Options{}, &openaitest.Fault{Status: 413, Message: "too big"}, "", engram.ETOOLARGE,
			[]string{"413", "too big"}},
		{"501", openaitest.Options{}, &openaitest.Fault{Status: 501, Message: "no embeddings here"}, "", engram.EUNAVAILABLE,
			[]string{"501", "no embeddings here"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, tc.opts)
			if tc.fault != nil {
				srv.FailNext(1, *tc.fault)
			}
			cfg := testConfig(srv.URL())
			cfg.APIKey = tc.key
			_, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
			assertCode(t, err, tc.code)
			for _, s := range tc.wantText {
				if !strings.Contains(engram.ErrorMessage(err), s) {
					t.Errorf("message %q does not contain %q", engram.ErrorMessage(err), s)
				}
			}
			if got := len(srv.Requests()); got != 1 {
				t.Fatalf("%d requests, want 1 (no retry)", got)
			}
		})
	}
}

func TestEmbedExhaustedRetries(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.FailNext(10, openaitest.Fault{Status: 503, Message: "overloaded, try later"})
	cfg := testConfig(srv.URL())
	cfg.MaxRetries = 2
	_, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
	assertCode(t, err, engram.EUNAVAILABLE)
	msg := engram.ErrorMessage(err)
	for _, s := range []string{"failed after 3 attempts", "503", "overloaded, try later"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not contain %q", msg, s)
		}
	}
	if got, want := len(srv.Requests()), 3; got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
}

func TestEmbedRetriesDisabled(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.FailNext(1, openaitest.Fault{Status: 500})
	cfg := testConfig(srv.URL())
	cfg.MaxRetries = -1
	_, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
	assertCode(t, err, engram.EUNAVAILABLE)
	if got := len(srv.Requests()); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}
}

func TestEmbedHonoursRetryAfter(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.FailNext(1, openaitest.Fault{Status: 429, RetryAfter: "1"})
	cfg := testConfig(srv.URL())
	cfg.MaxBackoff = 5 * time.Second // long enough to honour 1s; RetryBase stays 1ms
	start := time.Now()
	if _, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	// Without the header the backoff would be about a millisecond.
	if got := time.Since(start); got < time.Second {
		t.Fatalf("retried after %v, before the server's Retry-After of 1s", got)
	}
}

func TestEmbedRetryAfterTooLong(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		value  string
	}{
		{"seconds", "Retry-After", "120"},
		{"milliseconds", "Retry-After-Ms", "60000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			var mu sync.Mutex
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				mu.Unlock()
				w.Header().Set(tc.header, tc.value)
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":{"message":"Rate limit reached"}}`)
			}))
			defer ts.Close()
			cfg := testConfig(ts.URL)
			cfg.MaxBackoff = time.Second
			_, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
			assertCode(t, err, engram.EUNAVAILABLE)
			if msg := engram.ErrorMessage(err); !strings.Contains(msg, "retry after") || !strings.Contains(msg, "Rate limit reached") {
				t.Fatalf("message %q does not explain the refusal to wait", msg)
			}
			if calls != 1 {
				t.Fatalf("%d requests, want 1", calls)
			}
		})
	}
}

func TestEmbedTimeout(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Latency: 2 * time.Second})
	cfg := testConfig(srv.URL())
	cfg.Timeout = 50 * time.Millisecond
	cfg.MaxRetries = 1
	_, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
	assertCode(t, err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "no answer within the timeout of 50ms") || !strings.Contains(msg, "2 attempts") {
		t.Fatalf("message %q does not explain the timeout", msg)
	}
	if got := len(srv.Requests()); got != 2 {
		t.Fatalf("%d requests, want 2 (one retry after a timeout)", got)
	}
}

func TestEmbedTimeoutThenSuccess(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{Latency: 2 * time.Second})
	cfg := testConfig(srv.URL())
	cfg.Timeout = 100 * time.Millisecond
	e := newEmbedder(t, cfg)
	go func() {
		// Speed the server up while the client is retrying.
		time.Sleep(150 * time.Millisecond)
		srv.SetLatency(0)
	}()
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Requests()); got < 2 {
		t.Fatalf("%d requests, want at least 2", got)
	}
}

func TestEmbedContextCancel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*openaitest.Server)
	}{
		{"while waiting for the answer", func(s *openaitest.Server) { s.SetLatency(30 * time.Second) }},
		{"while backing off", func(s *openaitest.Server) { s.FailNext(1, openaitest.Fault{Status: 429, RetryAfter: "30"}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.Options{})
			tc.setup(srv)
			cfg := testConfig(srv.URL())
			cfg.Timeout = time.Minute
			cfg.MaxBackoff = time.Minute
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			_, err := newEmbedder(t, cfg).Embed(ctx, []string{"x"})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			// The server would hold us for 30 s; returning well before shows
			// that cancellation does not wait for it.
			if got := time.Since(start); got > 10*time.Second {
				t.Fatalf("returned after %v", got)
			}
		})
	}
}

func TestEmbedUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now

	cfg := testConfig("http://" + addr)
	cfg.MaxRetries = 2
	_, err = newEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
	assertCode(t, err, engram.EUNAVAILABLE)
	msg := engram.ErrorMessage(err)
	for _, s := range []string{"cannot reach the server", addr, "failed after 3 attempts"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not contain %q", msg, s)
		}
	}
}

func TestBaseURLForms(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{})
	root := strings.TrimSuffix(srv.URL(), "/v1")
	for _, url := range []string{root, root + "/", srv.URL(), srv.URL() + "/"} {
		t.Run(url, func(t *testing.T) {
			if _, err := newEmbedder(t, testConfig(url)).Embed(context.Background(), []string{"x"}); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, r := range srv.Requests() {
		if r.Path != "/v1/embeddings" {
			t.Errorf("request went to %q", r.Path)
		}
	}
}

func TestBaseURLWithOtherPrefix(t *testing.T) {
	var path string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		fmt.Fprint(w, `{"data":[{"index":0,"embedding":[0.6,0.8]}]}`)
	}))
	defer ts.Close()
	if _, err := newEmbedder(t, testConfig(ts.URL+"/api/openai/")).Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if got, want := path, "/api/openai/embeddings"; got != want {
		t.Fatalf("path %q, want %q", got, want)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  openai.Config
		want string
	}{
		{"no model", openai.Config{}, "Model is required"},
		{"ftp", openai.Config{Model: "m", BaseURL: "ftp://host/v1"}, "not an http or https URL"},
		{"no host", openai.Config{Model: "m", BaseURL: "http://"}, "not an http or https URL"},
		{"garbage", openai.Config{Model: "m", BaseURL: "::not a url"}, "not an http or https URL"},
		{"query", openai.Config{Model: "m", BaseURL: "http://h/v1?x=1"}, "query or fragment"},
		{"negative dimensions", openai.Config{Model: "m", Dimensions: -1}, "Dimensions -1 is negative"},
		{"negative batch", openai.Config{Model: "m", BatchSize: -5}, "BatchSize -5 is negative"},
		{"negative timeout", openai.Config{Model: "m", Timeout: -time.Second}, "may not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openai.NewEmbedder(tc.cfg)
			assertCode(t, err, engram.EINVALID)
			if !strings.Contains(engram.ErrorMessage(err), tc.want) {
				t.Fatalf("message %q does not contain %q", engram.ErrorMessage(err), tc.want)
			}
			_, err = openai.NewChat(tc.cfg)
			if tc.name != "negative dimensions" && tc.name != "negative batch" {
				assertCode(t, err, engram.EINVALID)
			}
		})
	}
}

// TestEmbedMalformedAnswers uses hand-written servers that break the
// protocol in ways the fake never does.
func TestEmbedMalformedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		code string
		want string
	}{
		{"too few", `{"data":[{"index":0,"embedding":[1,0]}]}`, engram.EINTERNAL, "1 embeddings for 2 texts"},
		{"duplicate index", `{"data":[{"index":1,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}`, engram.EINTERNAL, "two embeddings for index 1"},
		{"index out of range", `{"data":[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[0,1]}]}`, engram.EINTERNAL, "index 2 of a batch of 2"},
		{"mixed lengths", `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1,0]}]}`, engram.EMISMATCH, "2 and 3 dimensions"},
		{"zero vector", `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,0]}]}`, engram.EINTERNAL, "all zeros"},
		{"empty vector", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`, engram.EINTERNAL, "empty embedding"},
		{"not JSON", `<html>hello</html>`, engram.EINTERNAL, "not JSON of the expected shape"},
		{"wrong shape", `{"data":{"index":0}}`, engram.EINTERNAL, "not JSON of the expected shape"},
		{"missing one index", `{"data":[{"index":0,"embedding":[1,0]},{"embedding":[0,1]}]}`, engram.EINTERNAL, "no index while others do"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, tc.body)
			}))
			defer ts.Close()
			_, err := newEmbedder(t, testConfig(ts.URL)).Embed(context.Background(), []string{"a", "b"})
			assertCode(t, err, tc.code)
			if !strings.Contains(engram.ErrorMessage(err), tc.want) {
				t.Fatalf("message %q does not contain %q", engram.ErrorMessage(err), tc.want)
			}
		})
	}
}

func TestEmbedWithoutIndexes(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"embedding":[3,4]},{"embedding":[0,2]}]}`)
	}))
	defer ts.Close()
	vecs, err := newEmbedder(t, testConfig(ts.URL)).Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	assertVector(t, 0, vecs[0], []float32{0.6, 0.8})
	assertVector(t, 1, vecs[1], []float32{0, 1})
}

func TestEmbedFailsAsWhole(t *testing.T) {
	var n int
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k == 2 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"input too long"}}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}`)
	}))
	defer ts.Close()
	cfg := testConfig(ts.URL)
	cfg.BatchSize = 2
	vecs, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"a", "b", "c", "d", "e", "f"})
	if vecs != nil {
		t.Fatalf("got %d vectors with an error", len(vecs))
	}
	assertCode(t, err, engram.EINVALID)
	if !strings.Contains(err.Error(), "texts 2 to 3") || !strings.Contains(err.Error(), "input too long") {
		t.Fatalf("error %q does not name the failed batch and the cause", err)
	}
	if n != 2 {
		t.Fatalf("%d requests, want 2 (stop at the first failure)", n)
	}
}

func TestErrorMessageShapes(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"openai", `{"error":{"message":"Invalid model","type":"invalid_request_error","code":"model_not_found"}}`, "Invalid model"},
		{"ollama", `{"error":"model 'x' not found"}`, "model 'x' not found"},
		{"fastapi string", `{"detail":"Not Found"}`, "Not Found"},
		{"fastapi list", `{"detail":[{"loc":["body","input"],"msg":"field required"}]}`, "field required"},
		{"message", `{"message":"bad thing"}`, "bad thing"},
		{"plain text", "upstream exploded\n", "upstream exploded"},
		{"empty", "", "(no error message)"},
		{"long", strings.Repeat("é", 400), "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, tc.body)
			}))
			defer ts.Close()
			_, err := newEmbedder(t, testConfig(ts.URL)).Embed(context.Background(), []string{"x"})
			assertCode(t, err, engram.EINVALID)
			msg := engram.ErrorMessage(err)
			if !strings.Contains(msg, "422 Unprocessable Entity") || !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q lacks the status or %q", msg, tc.want)
			}
			if len(msg) > 500 {
				t.Fatalf("message is %d bytes; long bodies should be cut", len(msg))
			}
		})
	}
}

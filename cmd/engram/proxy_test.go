package main_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/netproxy"
	"github.com/engramhq/engram/openai/openaitest"
)

// TestServeProxy: --proxy-url and --proxy-key reach the memory proxy, and
// --proxy-org/--proxy-project name the tenant without keys; without an
// upstream the route answers 503 naming the flag.
func TestServeProxy(t *testing.T) {
	t.Parallel()
	up := openaitest.NewServer(t, openaitest.Options{Chat: func(openaitest.ChatRequest) string { return "Noted." }})
	dir := t.TempDir()
	s := startServer(t, dir, append(baseEnv(t), "ENGRAM_PROXY_KEY=up-key"), "--proxy-url", up.URL(), "--proxy-org", "acme", "--proxy-project", "bot")
	chat := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Post(url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","user":"ann","messages":[{"role":"user","content":"I live in Porto."}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := chat(s.url); status != 200 || !strings.Contains(body, "Noted.") {
		t.Fatalf("status %d: %s", status, body)
	}
	if got := up.Requests()[0].Header.Get("Authorization"); got != "Bearer up-key" {
		t.Fatalf("upstream Authorization %q", got)
	}
	resp, err := http.Get(s.url + "/v1/episodes?org=acme&project=bot&user=ann")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "I live in Porto.") || !strings.Contains(string(b), "Noted.") {
		t.Fatalf("episodes of acme/bot/ann: %s", b)
	}

	bare := startServer(t, t.TempDir(), baseEnv(t))
	if status, body := chat(bare.url); status != 503 || !strings.Contains(body, "--proxy-url") {
		t.Fatalf("without an upstream: status %d: %s", status, body)
	}
}

func TestServeBadProxyFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--proxy-budget", "0"}, "--proxy-budget (env ENGRAM_PROXY_BUDGET)"},
		{"ENGRAM_PROXY_BUDGET=many", nil, "--proxy-budget (env ENGRAM_PROXY_BUDGET)"},
		{"ENGRAM_PROXY_TIMEOUT=soon", nil, "--proxy-timeout (env ENGRAM_PROXY_TIMEOUT)"},
		{"", []string{"--proxy-url", "ftp://llm"}, "--proxy-url (env ENGRAM_PROXY_URL"},
		{"", []string{"--proxy-org", "a/b"}, "--proxy-org"},
	} {
		env := baseEnv(t)
		if tc.env != "" {
			env = append(env, tc.env)
		}
		c := &cli{t: t, env: env}
		stderr := c.fail(2, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)...)
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%s %v: stderr = %q, want it to name %s", tc.env, tc.args, stderr, tc.want)
		}
	}
}

// TestServeProxyPostgresDown: over a PostgreSQL store that cannot be
// reached the proxy is mounted and answers 503 before calling the
// upstream.
func TestServeProxyPostgresDown(t *testing.T) {
	t.Parallel()
	up := openaitest.NewServer(t, openaitest.Options{Chat: func(openaitest.ChatRequest) string { return "lost" }})
	store := "postgres://engram@" + netproxy.ClosedAddr(t) + "/engram?connect_timeout=3"
	s := startServer(t, t.TempDir(), append(baseEnv(t), "ENGRAM_STORE="+store), "--proxy-url", up.URL())
	code, eb := httpCall(t, "POST", s.url+"/v1/chat/completions", `{"model":"m","user":"ann","messages":[{"role":"user","content":"hi"}]}`)
	if code != http.StatusServiceUnavailable || eb.Error.Code != engram.EUNAVAILABLE {
		t.Fatalf("status %d %+v, want 503 unavailable", code, eb)
	}
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("%d requests went upstream", n)
	}
}

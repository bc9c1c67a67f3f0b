package main_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeGuards: engram serve's flags and variables reach the server: a
// trickled body is cut after --read-timeout, and the Host and Origin
// checks accept what --allowed-hosts and ENGRAM_ALLOWED_ORIGINS list.
func TestServeGuards(t *testing.T) {
	t.Parallel()
	env := append(baseEnv(t), "ENGRAM_ALLOWED_ORIGINS=https://app.example")
	s := startServer(t, t.TempDir(), env, "--read-timeout", "500ms", "--allowed-hosts", "engram.test, other.test:9")
	addr := strings.TrimPrefix(s.url, "http://")
	list := s.url + "/v1/memories?org=o&project=p"

	get := func(host, origin string) (int, http.Header) {
		t.Helper()
		req, err := http.NewRequest("GET", list, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{addr, "", 200},
		{"engram.test:8080", "", 200},
		{"other.test:9", "", 200},
		{"other.test:10", "", 403},
		{"attacker.example", "", 403},
		{addr, "https://app.example", 200},
		{addr, "https://attacker.example", 403},
	} {
		status, h := get(tc.host, tc.origin)
		if status != tc.want {
			t.Errorf("Host %q Origin %q: status %d, want %d", tc.host, tc.origin, status, tc.want)
		}
		if tc.origin != "" && tc.want == 200 && h.Get("Access-Control-Allow-Origin") != tc.origin {
			t.Errorf("Origin %q: no CORS header", tc.origin)
		}
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", addr)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		close(done)
	}()
	for {
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
			if time.Since(start) > 10*time.Second {
				t.Fatal("a trickled body was not cut off after --read-timeout 500ms")
			}
			_, _ = conn.Write([]byte(" "))
		}
	}
}

func TestServeBadTimeout(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_WRITE_TIMEOUT=soon")}
	stderr := c.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	if !strings.Contains(stderr, `--write-timeout (env ENGRAM_WRITE_TIMEOUT) "soon" is not a positive duration`) {
		t.Errorf("stderr = %q", stderr)
	}
}

// TestServeLimits: --rate-limit and --rate-burst reach the server, and
// ENGRAM_RATE_LIMIT=0 turns the limit off.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	get := func(s *server) *http.Response {
		t.Helper()
		resp, err := http.Get(s.url + "/v1/memories?org=o&project=p")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	limited := startServer(t, t.TempDir(), baseEnv(t), "--rate-limit", "0.1", "--rate-burst", "2")
	for i := range 2 {
		if resp := get(limited); resp.StatusCode != 200 {
			t.Fatalf("request %d of the burst: status %d", i+1, resp.StatusCode)
		}
	}
	if resp := get(limited); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the burst: status %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	off := startServer(t, t.TempDir(), append(baseEnv(t), "ENGRAM_RATE_LIMIT=0"), "--rate-burst", "1")
	for i := range 20 {
		if resp := get(off); resp.StatusCode != 200 {
			t.Fatalf("request %d with ENGRAM_RATE_LIMIT=0: status %d", i+1, resp.StatusCode)
		}
	}
}

func TestServeBadLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"ENGRAM_RATE_LIMIT=fast", nil, "--rate-limit (env ENGRAM_RATE_LIMIT)"},
		{"", []string{"--rate-limit", "-1"}, "--rate-limit (env ENGRAM_RATE_LIMIT)"},
		{"", []string{"--rate-burst", "0"}, "--rate-burst (env ENGRAM_RATE_BURST)"},
		{"ENGRAM_MAX_CONCURRENT=-3", nil, "--max-concurrent (env ENGRAM_MAX_CONCURRENT)"},
		{"", []string{"--text-index-mb", "-1"}, "--text-index-mb (env ENGRAM_TEXT_INDEX_MB)"},
		{"ENGRAM_TEXT_INDEX_LIMIT=-5", nil, "--text-index-limit (env ENGRAM_TEXT_INDEX_LIMIT)"},
		{"", []string{"--row-cache-mb", "-1"}, "--row-cache-mb (env ENGRAM_ROW_CACHE_MB)"},
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

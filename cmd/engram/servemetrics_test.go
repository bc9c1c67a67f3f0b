package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var metricsRE = regexp.MustCompile(`serving metrics on (http://[0-9.]+:[0-9]+/metrics)`)

// TestServeMetrics: where keys are required, GET /metrics answers 401
// without a key and 403 with a key below admin, and the scrape with an
// admin key; --metrics-addr serves it without a key; --log-format json logs
// one JSON line per request with the id the client sent.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := localCLI(t, dir)
	admin := strings.TrimSpace(c.ok("keys", "create", "--org", "acme", "--project", "app", "--role", "admin"))
	writer := strings.TrimSpace(c.ok("keys", "create", "--org", "acme", "--project", "app", "--role", "write"))
	s := startServer(t, dir, baseEnv(t), "--no-auth=false", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	get := func(url, key string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Request-ID", "scrape-"+key[:min(len(key), 6)])
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		key  string
		want int
	}{{"", 401}, {writer, 403}, {admin, 200}} {
		if code, _ := get(s.url+"/metrics", tc.key); code != tc.want {
			t.Errorf("GET /metrics with key %.6q: %d, want %d", tc.key, code, tc.want)
		}
	}
	m := metricsRE.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics address logged:\n%s", s.logs.String())
	}
	code, body := get(m[1], "")
	if code != 200 || !strings.Contains(body, `engram_http_requests_total{method="GET",route="/metrics",status="403"} 1`) {
		t.Errorf("GET %s without a key: %d, want 200 with the refusals counted:\n%.2000s", m[1], code, body)
	}
	var seen bool
	for _, l := range lines(s.logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("--log-format json wrote %q", l)
		}
		if rec["msg"] == "request" && rec["request_id"] == "scrape-"+admin[:6] {
			seen = rec["route"] == "/metrics" && rec["status"] == float64(200) && rec["org"] == "acme"
		}
		if strings.Contains(l, admin) || strings.Contains(l, writer) {
			t.Errorf("a key is in the log: %s", l)
		}
	}
	if !seen {
		t.Errorf("no request line for the admin's scrape:\n%s", s.logs.String())
	}
	if stderr := c.fail(2, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "xml"); !strings.Contains(stderr, `--log-format (env ENGRAM_LOG_FORMAT) "xml" is not one of text, json`) {
		t.Errorf("stderr = %q", stderr)
	}
}

// TestServeMetricsLoopback: a server without keys (loopback only) serves
// GET /metrics to anyone who reaches it.
func TestServeMetricsLoopback(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), baseEnv(t))
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "go_goroutines") {
		t.Errorf("GET /metrics: %d %.300s", resp.StatusCode, b)
	}
}

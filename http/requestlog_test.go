package http_test

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/syncbuf"

	engramhttp "github.com/engramhq/engram/http"
)

// recordedRequests is a RequestObserver keeping what it is told.
type recordedRequests struct {
	mu   sync.Mutex
	seen []string
}

func (r *recordedRequests) ObserveRequest(route, method string, status int, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, method+" "+route+" "+strconv.Itoa(status))
}

// logLines decodes the JSON lines of a log, failing on one that is not.
func logLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRequestLog: every request gets one JSON log line with its id, route
// pattern (not the path with its ids), method, status, duration and
// tenant; a sane X-Request-ID comes back as sent, an insane one is
// replaced; the observer is told the route pattern; neither the API key
// nor anything of the body or the query reaches the log.
func TestRequestLog(t *testing.T) {
	var logs syncbuf.Buffer
	obs := &recordedRequests{}
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Keys: secretKeys{}, Observer: obs,
	}))
	t.Cleanup(srv.Close)
	const apiKey = "ek_0123abcd_topsecretkeymaterial"
	const bodySecret = "my-passport-number-X9Y8Z7"
	auth := []string{"Authorization", "Bearer " + apiKey}

	r := do(t, "POST", srv.URL+"/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"ann"},"episodes":[{"content":"`+bodySecret+`"}]}`,
		append(auth, "X-Request-ID", "client-req-42")...)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	if got := r.Header.Get("X-Request-ID"); got != "client-req-42" {
		t.Errorf("X-Request-ID answered %q, want the one sent", got)
	}
	r = do(t, "GET", srv.URL+"/v1/memories/01J0000000000000000000000Z?org=o&project=p&contains="+bodySecret, "",
		append(auth, "X-Request-ID", "bad id with spaces")...)
	generated := r.Header.Get("X-Request-ID")
	if !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(generated) {
		t.Errorf("an insane X-Request-ID was answered with %q, want a new 24-hex-digit id", generated)
	}
	long := strings.Repeat("a", engramhttp.MaxRequestIDBytes+1)
	if r := do(t, "GET", srv.URL+"/healthz", "", "X-Request-ID", long); r.Header.Get("X-Request-ID") == long {
		t.Errorf("an X-Request-ID of %d bytes came back", len(long))
	}
	do(t, "GET", srv.URL+"/v1/memories?org=o&project=p", "") // no key: 401

	out := logs.String()
	for _, secret := range []string{apiKey, "topsecretkeymaterial", bodySecret, "ann", "01J0000000000000000000000Z"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	lines := logLines(t, out)
	if len(lines) != 4 {
		t.Fatalf("%d log lines, want one per request:\n%s", len(lines), out)
	}
	want := []map[string]any{
		{"msg": "request", "request_id": "client-req-42", "route": "/v1/episodes", "method": "POST", "org": "o", "project": "p"},
		{"msg": "request", "request_id": generated, "route": "/v1/memories/{id}", "method": "GET", "org": "o", "project": "p"},
		{"msg": "request", "route": "/healthz", "method": "GET", "status": float64(200)},
		{"msg": "request", "route": "/v1/memories", "method": "GET", "status": float64(401)},
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i+1, k, lines[i][k], v, lines[i])
			}
		}
		if d, ok := lines[i]["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("line %d: duration_ms %v, want a number of milliseconds", i+1, lines[i]["duration_ms"])
		}
		if _, ok := lines[i]["status"].(float64); !ok {
			t.Errorf("line %d: no status", i+1)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if got := strings.Join(obs.seen, "; "); !strings.Contains(got, "GET /v1/memories/{id} ") || strings.Contains(got, "01J0") {
		t.Errorf("observer saw %s, want route patterns only", got)
	}
}

// TestRequestIDCORS: a page of an allowed origin may send X-Request-ID and
// read the one answered.
func TestRequestIDCORS(t *testing.T) {
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger: discardLogger(), AllowedOrigins: []string{"https://app.example"},
	}))
	t.Cleanup(srv.Close)
	pre := do(t, "OPTIONS", srv.URL+"/v1/search", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	if !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "X-Request-ID") {
		t.Errorf("preflight allows headers %q, want X-Request-ID among them", pre.Header.Get("Access-Control-Allow-Headers"))
	}
	r := do(t, "GET", srv.URL+"/v1/memories?org=o&project=p", "", "Origin", "https://app.example", "X-Request-ID", "page-1")
	if r.Header.Get("Access-Control-Expose-Headers") != "X-Request-ID" || r.Header.Get("X-Request-ID") != "page-1" {
		t.Errorf("answer exposes %q with id %q, want X-Request-ID page-1", r.Header.Get("Access-Control-Expose-Headers"), r.Header.Get("X-Request-ID"))
	}
}

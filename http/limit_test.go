package http_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// secretKeys is a KeyService whose secrets are the ids of admin keys of
// org o, project p.
type secretKeys struct{ engram.KeyService }

func (secretKeys) Authenticate(_ context.Context, secret string) (*engram.APIKey, error) {
	if secret == "" {
		return nil, engram.Errorf(engram.EUNAUTHORIZED, "no key")
	}
	return &engram.APIKey{ID: secret, Org: "o", Project: "p", Role: engram.RoleAdmin}, nil
}

const limitedList = "/v1/memories?org=o&project=p"

// wantTooMany checks a 429 answer: Retry-After a whole number of seconds
// of at least 1, and an error body naming the limit's flag.
func wantTooMany(t *testing.T, what string, r rawResponse, flag string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429; body %s", what, r.Status, r.Body)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("%s: Retry-After %q, want a whole number of seconds ≥ 1", what, r.Header.Get("Retry-After"))
	}
	e := errorOf(t, r)
	if e.Error.Code != engram.ETOOMANY || !strings.Contains(e.Error.Message, flag) {
		t.Errorf("%s: error %+v, want code %s naming %s", what, e.Error, engram.ETOOMANY, flag)
	}
}

func TestLimit_RatePerKey(t *testing.T) {
	t.Parallel()
	// A token every 10s: the burst cannot refill while the test runs.
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger: discardLogger(), Keys: secretKeys{}, RateLimit: 0.1, RateBurst: 3,
	}))
	t.Cleanup(srv.Close)
	get := func(key string) rawResponse {
		return do(t, "GET", srv.URL+limitedList, "", "Authorization", "Bearer "+key)
	}
	for i := range 3 {
		if r := get("a"); r.Status != 200 {
			t.Fatalf("request %d of the burst: status %d, body %s", i+1, r.Status, r.Body)
		}
	}
	wantTooMany(t, "request past the burst", get("a"), "--rate-limit")
	if r := get("b"); r.Status != 200 {
		t.Errorf("another key: status %d, want 200; body %s", r.Status, r.Body)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := do(t, "GET", srv.URL+p, ""); r.Status != 200 {
			t.Errorf("GET %s: status %d, want 200 (probes are not limited)", p, r.Status)
		}
	}
}

func TestLimit_RatePerIPWithoutAuth(t *testing.T) {
	t.Parallel()
	h := engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger(), RateLimit: 0.1, RateBurst: 1})
	get := func(remote string) rawResponse {
		req := httptest.NewRequest("GET", limitedList, nil)
		req.Host, req.RemoteAddr = "localhost", remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return rawResponse{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	}
	if r := get("192.0.2.1:1000"); r.Status != 200 {
		t.Fatalf("first request: status %d", r.Status)
	}
	wantTooMany(t, "second request, another port of the same IP", get("192.0.2.1:2000"), "--rate-limit")
	if r := get("192.0.2.2:1000"); r.Status != 200 {
		t.Errorf("another IP: status %d, want 200", r.Status)
	}
}

// blockingService holds ListMemories until release is closed, saying on
// started when each call begins.
type blockingService struct {
	*fakeService
	started chan struct{}
	release chan struct{}
}

func (b *blockingService) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	b.started <- struct{}{}
	<-b.release
	return b.fakeService.ListMemories(ctx, s, f)
}

func TestLimit_Concurrent(t *testing.T) {
	t.Parallel()
	svc := &blockingService{fakeService: &fakeService{}, started: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(engramhttp.NewServer(svc, engramhttp.ServerOptions{
		Logger: discardLogger(), Keys: secretKeys{}, MaxConcurrent: 2,
	}))
	t.Cleanup(srv.Close)
	get := func(key string) rawResponse {
		return do(t, "GET", srv.URL+limitedList, "", "Authorization", "Bearer "+key)
	}
	var wg sync.WaitGroup
	status := make([]int, 2)
	for i := range 2 {
		wg.Go(func() { status[i] = get("a").Status })
	}
	<-svc.started
	<-svc.started
	wantTooMany(t, "a third request in flight", get("a"), "--max-concurrent")

	go func() { <-svc.started }()
	// Another key has its own allowance; it blocks too, until release.
	var other int
	wg.Go(func() { other = get("b").Status })
	close(svc.release)
	wg.Wait()
	if status[0] != 200 || status[1] != 200 || other != 200 {
		t.Errorf("requests within the limit: statuses %v and %d, want 200", status, other)
	}
	go func() { <-svc.started }()
	if r := get("a"); r.Status != 200 {
		t.Errorf("after the others finished: status %d, want 200", r.Status)
	}
}

func TestLimit_Off(t *testing.T) {
	t.Parallel()
	h := engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger(), RateLimit: 0, MaxConcurrent: 0})
	for i := range 500 {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("GET", limitedList, nil)
		req.Host = "localhost"
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("request %d: status %d with the limits off", i+1, w.Code)
		}
	}
}

package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

func TestHealthz(t *testing.T) {
	srv, c := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{})
	r := do(t, "GET", srv.URL+"/healthz", "")
	if got, want := r.Status, 200; got != want {
		t.Fatalf("status = %d, want %d", got, want)
	}
	if got, want := strings.TrimSpace(string(r.Body)), `{"keys_required":false,"status":"ok"}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	if err := c.Health(context.Background()); err != nil {
		t.Errorf("Health: %v", err)
	}
}

func TestReadyz(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ready      func(context.Context) error
		wantStatus int
		wantMsg    string
	}{
		{"no check", nil, 200, ""},
		{"ready", func(context.Context) error { return nil }, 200, ""},
		{"engram error", func(context.Context) error {
			return engram.Errorf(engram.EUNAVAILABLE, "database is closed")
		}, 503, "database is closed"},
		{"wrapped engram error", func(context.Context) error {
			return errors.Join(errors.New("engine"), engram.Errorf(engram.EUNAVAILABLE, "migration running"))
		}, 503, "migration running"},
		{"plain error", func(context.Context) error { return errors.New("disk full") }, 503, "disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{Ready: tc.ready})
			r := do(t, "GET", srv.URL+"/readyz", "")
			if got, want := r.Status, tc.wantStatus; got != want {
				t.Fatalf("status = %d, want %d", got, want)
			}
			err := c.Ready(context.Background())
			if tc.wantStatus == 200 {
				if err != nil {
					t.Errorf("Ready: %v", err)
				}
				return
			}
			e := errorOf(t, r)
			if e.Error.Code != engram.EUNAVAILABLE || e.Error.Message != tc.wantMsg {
				t.Errorf("body = %s, want unavailable %q", r.Body, tc.wantMsg)
			}
			if engram.ErrorCode(err) != engram.EUNAVAILABLE || engram.ErrorMessage(err) != tc.wantMsg {
				t.Errorf("Ready = %v, want unavailable %q", err, tc.wantMsg)
			}
		})
	}
}

// TestServe_GracefulShutdown holds a request in flight, cancels Serve's
// context, and checks that new connections are refused while the request
// still completes, after which Serve returns nil.
func TestServe_GracefulShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	s := engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger: discardLogger(),
		Ready: func(ctx context.Context) error {
			close(entered)
			<-release
			return nil
		},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	type result struct {
		status int
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			inflight <- result{err: err}
			return
		}
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode}
	}()
	<-entered
	cancel()

	// The listener closes once shutdown starts; wait for that.
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after cancel")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a request in flight", err)
	default:
	}

	close(release)
	if r := <-inflight; r.err != nil || r.status != 200 {
		t.Errorf("in-flight request: status %d, err %v; want 200", r.status, r.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestServe_ShutdownTimeout: a request that outlives ShutdownTimeout is cut
// off and Serve says so.
func TestServe_ShutdownTimeout(t *testing.T) {
	entered := make(chan struct{})
	s := engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger:          discardLogger(),
		ShutdownTimeout: 50 * time.Millisecond,
		Ready: func(ctx context.Context) error {
			close(entered)
			<-ctx.Done() // until the connection is closed
			return ctx.Err()
		},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve = %v, want a deadline error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func TestListenAndServe_BadAddress(t *testing.T) {
	s := engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger()})
	if err := s.ListenAndServe(context.Background(), "256.0.0.1:http"); err == nil {
		t.Error("ListenAndServe on a bad address succeeded")
	}
}

// TestBadInput_NotPassedOn sends malformed requests and checks the status,
// code and sentence of each answer, and that none reached the service. (The
// same cases against the real engine, with "nothing stored" checks, are in
// engine_test.go.)
func TestBadInput_NotPassedOn(t *testing.T) {
	svc := &fakeService{}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{MaxBodyBytes: testMaxBody, MaxImportBytes: testMaxImport})
	for _, tc := range badInputCases(engram.NewID(), "?org=o&project=p&user=u") {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.method, srv.URL+tc.path, tc.body, tc.header...)
			checkBadInput(t, tc, r)
		})
	}
	if calls := svc.Calls(); len(calls) != 0 {
		t.Errorf("the service was called %d times: %+v", len(calls), calls)
	}
}

type badInput struct {
	name         string
	method, path string
	body         string
	header       []string
	status       int
	code         string
	msg          string // a part of the message
}

// Body limits of the servers in bad-input tests: small enough to exceed
// cheaply, large enough for the engine's own limits to be reached first.
const (
	testMaxBody   = 256 << 10
	testMaxImport = 512 << 10
)

// badInputCases are the malformed requests the server itself refuses; sc
// is a scope query string.
func badInputCases(id, sc string) []badInput {
	ep := `{"namespace":{"org":"o","project":"p","user":"u"},"episodes":[{"content":"hi"}]}`
	big := `{"namespace":{"org":"o","project":"p","user":"u"},"episodes":[{"content":"` + strings.Repeat("x", testMaxBody) + `"}]}`
	bigImport := strings.Repeat(`{"type":"episode"}`+"\n", testMaxImport/10)
	return []badInput{
		{"malformed JSON", "POST", "/v1/episodes", `{"namespace":`, nil, 400, engram.EINVALID, "ends in the middle of a JSON value"},
		{"not JSON", "POST", "/v1/episodes", `hello`, nil, 400, engram.EINVALID, "not valid JSON"},
		{"empty body", "POST", "/v1/memories", ``, nil, 400, engram.EINVALID, "request body is empty"},
		{"trailing garbage", "POST", "/v1/episodes", ep + `xyz`, nil, 400, engram.EINVALID, "not valid JSON"},
		{"second value", "POST", "/v1/episodes", ep + ` {}`, nil, 400, engram.EINVALID, "more data after the JSON value"},
		{"unknown field", "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p"},"episodes":[{"content":"hi","colour":"red"}]}`, nil, 400, engram.EINVALID, `unknown field "colour"`},
		{"unknown top-level field", "POST", "/v1/search", `{"scope":{"org":"o","project":"p"},"query":"q","top_k":3}`, nil, 400, engram.EINVALID, `unknown field "top_k"`},
		{"wrong type", "POST", "/v1/search", `{"scope":{"org":"o","project":"p"},"query":"q","k":"ten"}`, nil, 400, engram.EINVALID, `request body: k must be an integer, not string`},
		{"wrong type nested", "POST", "/v1/memories", `{"namespace":{"org":"o","project":"p"},"memories":[{"value":"v","confidence":"high"}]}`, nil, 400, engram.EINVALID, `request body: memories[0].confidence must be a number, not string`},
		{"array for object", "POST", "/v1/episodes", `[]`, nil, 400, engram.EINVALID, "must be an object"},
		{"bad time in body", "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p"},"episodes":[{"content":"hi","occurred_at":"yesterday"}]}`, nil, 400, engram.EINVALID, `"yesterday" is not in RFC 3339 format`},
		{"bad time in batch", "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p"},"episodes":[{"content":"a"},{"content":"b","occurred_at":"yesterday"}]}`, nil, 400, engram.EINVALID, `request body: episodes[1].occurred_at: time "yesterday" is not in RFC 3339 format`},
		{"unknown field in batch", "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p"},"episodes":[{"content":"a"},{"content":"b"},{"content":"c","colour":"red"}]}`, nil, 400, engram.EINVALID, `request body: episodes[2]: unknown field "colour"`},
		{"wrong type in batch", "POST", "/v1/memories", `{"namespace":{"org":"o","project":"p"},"memories":[{"value":"v"},{"value":"w","cues":[1]}]}`, nil, 400, engram.EINVALID, `request body: memories[1].cues[0] must be a string, not number`},
		{"wrong type in namespace", "POST", "/v1/episodes", `{"namespace":{"org":"o","project":7},"episodes":[{"content":"a"}]}`, nil, 400, engram.EINVALID, `request body: namespace.project must be a string, not number`},
		{"bad import line path", "POST", "/v1/import" + sc, `{"type":"episode","episode":{"content":"x","occurred_at":"soon"}}` + "\n", nil, 400, engram.EINVALID, `line 1: episode.occurred_at: time "soon"`},
		{"oversized body", "POST", "/v1/episodes", big, nil, 413, engram.ETOOLARGE, fmt.Sprintf("larger than the limit of %d bytes", testMaxBody)},
		{"oversized import", "POST", "/v1/import" + sc, bigImport, nil, 413, engram.ETOOLARGE, fmt.Sprintf("larger than the limit of %d bytes", testMaxImport)},
		{"bad import line", "POST", "/v1/import" + sc, `{"type":"episode","episode":{"id":"` + id + `","content":"x"}}` + "\n\n" + `{"type":"memory","nope":1}` + "\n", nil, 400, engram.EINVALID, `line 3: unknown field "nope"`},
		{"import not JSON", "POST", "/v1/import" + sc, "garbage\n", nil, 400, engram.EINVALID, "line 1 is not valid JSON"},
		{"invalid id", "GET", "/v1/memories/not-an-id" + sc, "", nil, 400, engram.EINVALID, `"not-an-id" is not a valid id`},
		{"lower-case id", "DELETE", "/v1/episodes/" + strings.ToLower(id) + sc, "", nil, 400, engram.EINVALID, "is not a valid id"},
		{"invalid id on rollback", "POST", "/v1/memories/XYZ/rollback" + sc, `{"version":1}`, nil, 400, engram.EINVALID, "is not a valid id"},
		{"unknown query parameter", "GET", "/v1/memories" + sc + "&knd=core", "", nil, 400, engram.EINVALID, `unknown query parameter "knd"`},
		{"unknown query parameters", "GET", "/v1/episodes/" + id + sc + "&projet=x&zz=1", "", nil, 400, engram.EINVALID, `unknown query parameters "projet", "zz"`},
		{"query on body route", "POST", "/v1/search?org=o", `{}`, nil, 400, engram.EINVALID, `unknown query parameter "org"; this endpoint accepts: none`},
		{"repeated single parameter", "GET", "/v1/episodes" + sc + "&org=other", "", nil, 400, engram.EINVALID, "org is given 2 times"},
		{"repeated meta key", "GET", "/v1/memories" + sc + "&meta.a=1&meta.a=2", "", nil, 400, engram.EINVALID, "meta.a is given 2 times"},
		{"bare meta prefix", "GET", "/v1/memories" + sc + "&meta.=1", "", nil, 400, engram.EINVALID, `unknown query parameter "meta."`},
		{"malformed query", "GET", "/v1/episodes" + sc + "&contains=%zz", "", nil, 400, engram.EINVALID, "query string is malformed"},
		{"non-numeric limit", "GET", "/v1/episodes" + sc + "&limit=ten", "", nil, 400, engram.EINVALID, `limit "ten" is not a whole number`},
		{"bad time query", "GET", "/v1/memories" + sc + "&valid_at=2024-05-01", "", nil, 400, engram.EINVALID, `valid_at "2024-05-01" is not a time in RFC 3339 format`},
		{"unescaped plus in time", "GET", "/v1/memories" + sc + "&created_after=2024-05-01T12:00:00+02:00", "", nil, 400, engram.EINVALID, "must be written %2B"},
		{"bad time on episodes", "GET", "/v1/episodes" + sc + "&occurred_after=yesterday", "", nil, 400, engram.EINVALID, "occurred_after"},
		{"bad time on audit", "GET", "/v1/audit" + sc + "&before=1714560000", "", nil, 400, engram.EINVALID, "before"},
		{"bad include_shared", "GET", "/v1/memories" + sc + "&include_shared=maybe", "", nil, 400, engram.EINVALID, `include_shared "maybe" is not true or false`},
		{"bad hard", "DELETE", "/v1/memories/" + id + sc + "&hard=yes", "", nil, 400, engram.EINVALID, `hard "yes" is not true or false`},
		{"rollback without version", "POST", "/v1/memories/" + id + "/rollback" + sc, `{"reason":"x"}`, nil, 400, engram.EINVALID, `"version" is required`},
		{"actor too long", "POST", "/v1/episodes", ep, []string{"X-Engram-Actor", strings.Repeat("a", 129)}, 400, engram.EINVALID, "X-Engram-Actor is 129 bytes"},
		{"actor with control character", "DELETE", "/v1/scope" + sc, "", []string{"X-Engram-Actor", "a\tb"}, 400, engram.EINVALID, "control characters"},
		{"text/plain body", "POST", "/v1/episodes", ep, []string{"Content-Type", "text/plain"}, 415, engram.EMEDIATYPE, `header Content-Type is "text/plain"; POST /v1/episodes reads application/json`},
		{"form body", "POST", "/v1/search", `{}`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, engram.EMEDIATYPE, "Content-Type"},
		{"body without Content-Type", "POST", "/v1/memories", `{}`, []string{"Content-Type", ""}, 415, engram.EMEDIATYPE, "no Content-Type header"},
		{"malformed Content-Type", "PATCH", "/v1/memories/" + id + sc, `{}`, []string{"Content-Type", "application/json; charset"}, 415, engram.EMEDIATYPE, "Content-Type"},
		{"latin-1 body", "POST", "/v1/memories/" + id + "/rollback" + sc, `{"version":1}`, []string{"Content-Type", "application/json; charset=iso-8859-1"}, 415, engram.EMEDIATYPE, `charset "iso-8859-1"`},
		{"text/plain import", "POST", "/v1/import" + sc, "{}\n", []string{"Content-Type", "text/plain"}, 415, engram.EMEDIATYPE, "reads application/x-ndjson or application/json"},
		{"text/plain embeddings", "POST", "/v1/embeddings", `{"input":"x"}`, []string{"Content-Type", "text/plain;charset=UTF-8"}, 415, engram.EMEDIATYPE, "Content-Type"},
		{"actor twice", "DELETE", "/v1/scope" + sc, "", []string{"X-Engram-Actor", "a", "X-Engram-Actor", "b"}, 400, engram.EINVALID, "given 2 times"},
	}
}

func checkBadInput(t *testing.T, tc badInput, r rawResponse) {
	t.Helper()
	if got, want := r.Status, tc.status; got != want {
		t.Errorf("status = %d, want %d (body %s)", got, want, r.Body)
		return
	}
	e := errorOf(t, r)
	if got, want := e.Error.Code, tc.code; got != want {
		t.Errorf("code = %q, want %q", got, want)
	}
	if !strings.Contains(e.Error.Message, tc.msg) {
		t.Errorf("message = %q, want it to contain %q", e.Error.Message, tc.msg)
	}
}

// TestQueryParsing checks what the server makes of the query parameters of
// the list endpoints, beyond what the client sends (see
// TestClient_ArgumentsRoundTrip).
func TestQueryParsing(t *testing.T) {
	svc := &fakeService{}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{})
	for _, tc := range []struct {
		name string
		path string
		want any
	}{
		{"meta values", "/v1/memories?org=o&project=p&meta.n=3&meta.s=%223%22&meta.city=Paris&meta.b=true&meta.nil=null&meta.e=&meta.a.b=x",
			engram.MemoryFilter{Metadata: map[string]any{"n": json.Number("3"), "s": "3", "city": "Paris", "b": true, "nil": nil, "e": "", "a.b": "x"}}},
		{"meta_in repeats", "/v1/memories?org=o&project=p&meta_in.c=Paris&meta_in.c=2&meta_in.d=x",
			engram.MemoryFilter{MetadataIn: map[string][]any{"c": {"Paris", json.Number("2")}, "d": {"x"}}}},
		{"empty values are absent", "/v1/memories?org=o&project=p&limit=&valid_at=&kind=&contains=",
			engram.MemoryFilter{}},
		{"repeatables", "/v1/memories?org=o&project=p&kind=core&kind=vault&status=deleted",
			engram.MemoryFilter{Kinds: []engram.Kind{"core", "vault"}, Statuses: []engram.Status{"deleted"}}},
		{"ids", "/v1/memories?org=o&project=p&id=01HZY3V7Q8X2M4N6P8R0S2T4V6&id=&id=01HZY3V7Q8X2M4N6P8R0S2T4V7",
			engram.MemoryFilter{IDs: []string{"01HZY3V7Q8X2M4N6P8R0S2T4V6", "01HZY3V7Q8X2M4N6P8R0S2T4V7"}}},
		{"negative limit passes to the service", "/v1/episodes?org=o&project=p&limit=-1",
			engram.EpisodeFilter{Limit: -1}},
		{"times keep their offset", "/v1/audit?org=o&project=p&after=2024-05-01T12:00:00.5%2B02:00&op=a&op=b",
			engram.AuditFilter{After: tp("2024-05-01T12:00:00.5+02:00"), Ops: []string{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "GET", srv.URL+tc.path, "")
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			got := svc.last().Arg
			if !sameJSON(t, got, tc.want) {
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(tc.want)
				t.Errorf("filter:\n got %s\nwant %s", a, b)
			}
		})
	}
}

// TestEmptyListsAreArrays: lists encode as [] rather than null even when
// the service returns nil slices.
func TestEmptyListsAreArrays(t *testing.T) {
	srv, _ := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{})
	id := engram.NewID()
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/v1/episodes?org=o&project=p", "", `{"episodes":[]}`},
		{"GET", "/v1/memories?org=o&project=p", "", `{"memories":[]}`},
		{"POST", "/v1/memories/list", `{"scope":{"org":"o","project":"p"}}`, `{"memories":[]}`},
		{"GET", "/v1/audit?org=o&project=p", "", `{"entries":[]}`},
		{"POST", "/v1/search", `{"scope":{"org":"o","project":"p"},"query":"x"}`, `{"hits":[]}`},
		{"GET", "/v1/memories/" + id + "/history?org=o&project=p", "", `{"versions":[]}`},
		{"POST", "/v1/memories", `{"namespace":{"org":"o","project":"p"},"memories":[]}`, `{"memories":[]}`},
	} {
		r := do(t, tc.method, srv.URL+tc.path, tc.body)
		if got := strings.TrimSpace(string(r.Body)); got != tc.want {
			t.Errorf("%s %s = %d %s, want %s", tc.method, tc.path, r.Status, got, tc.want)
		}
	}
}

func TestRestoreEmptyBody(t *testing.T) {
	svc := &fakeService{}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{})
	id := engram.NewID()
	r := do(t, "POST", srv.URL+"/v1/memories/"+id+"/restore?org=o&project=p", "")
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if got := svc.last(); got.Method != "RestoreMemory" || got.Arg != "" {
		t.Errorf("call = %+v, want RestoreMemory with no reason", got)
	}
}

package http_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// serveOn runs s on a fresh loopback listener until the test ends and
// returns the address it listens on.
func serveOn(t *testing.T, s *engramhttp.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// withHost sends a GET to addr+path with the given Host header.
func withHost(t *testing.T, addr, path, host string) rawResponse {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// TestHostCheck: a request whose Host header names another server (as a
// DNS rebinding attack's does) is refused; the bound address, the loopback
// names at its port and the allowed hosts are served.
func TestHostCheck(t *testing.T) {
	svc := &fakeService{}
	addr := serveOn(t, engramhttp.NewServer(svc, engramhttp.ServerOptions{
		Logger:       discardLogger(),
		AllowedHosts: []string{"engram.internal", "memory.example:8443"},
	}))
	_, port, _ := net.SplitHostPort(addr)
	const list = "/v1/memories?org=o&project=p"
	for _, tc := range []struct {
		host string
		path string
		want int
	}{
		{addr, list, 200},
		{"localhost:" + port, list, 200},
		{"LocalHost.:" + port, list, 200},
		{"[::1]:" + port, list, 200},
		{"engram.internal", list, 200},
		{"engram.internal:9999", list, 200},
		{"memory.example:8443", list, 200},
		{"rebind.attacker.example:" + port, list, 403},
		{"rebind.attacker.example", "/v1/nope", 403},
		{"localhost:1", list, 403},
		{"memory.example", list, 403},
		{"memory.example:8444", list, 403},
		{"192.168.1.20:" + port, list, 403},
		{"rebind.attacker.example:" + port, "/healthz", 200},
		{"rebind.attacker.example:" + port, "/readyz", 200},
	} {
		r := withHost(t, addr, tc.path, tc.host)
		if r.Status != tc.want {
			t.Errorf("Host %q %s: status %d, want %d (%s)", tc.host, tc.path, r.Status, tc.want, r.Body)
			continue
		}
		if tc.want == 403 {
			if e := errorOf(t, r); e.Error.Code != engram.EFORBIDDEN || !strings.Contains(e.Error.Message, `header Host "`+tc.host+`"`) {
				t.Errorf("Host %q: error %s", tc.host, r.Body)
			}
		}
	}
	if n := len(svc.Calls()); n != 7 {
		t.Errorf("the service was called %d times, want 7 (the allowed hosts only)", n)
	}

	// "*" turns the check off.
	addr = serveOn(t, engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger(), AllowedHosts: []string{"*"}}))
	if r := withHost(t, addr, list, "anything.example"); r.Status != 200 {
		t.Errorf("with *: status %d (%s)", r.Status, r.Body)
	}
}

// TestOriginCheck: requests from a browser origin that is not allowed are
// refused before they reach the service; allowed origins get CORS headers
// and their preflights are answered.
func TestOriginCheck(t *testing.T) {
	svc := &fakeService{}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{AllowedOrigins: []string{"https://app.example"}})
	list := srv.URL + "/v1/memories?org=o&project=p"
	search := srv.URL + "/v1/search"
	body := `{"scope":{"org":"o","project":"p"},"query":"x"}`

	r := do(t, "GET", list, "", "Origin", "https://app.example")
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || r.Header.Get("Vary") != "Origin" {
		t.Errorf("allowed origin: %d, headers %v", r.Status, r.Header)
	}
	r = do(t, "OPTIONS", search, "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight from an allowed origin: %d, headers %v", r.Status, r.Header)
	}
	calls := len(svc.Calls())

	for _, tc := range []struct {
		name, method, url, body string
		header                  []string
	}{
		{"read", "GET", list, "", []string{"Origin", "https://evil.example"}},
		{"write", "POST", search, body, []string{"Origin", "https://evil.example"}},
		{"text/plain write", "POST", search, body, []string{"Origin", "https://evil.example", "Content-Type", "text/plain"}},
		{"null origin", "GET", list, "", []string{"Origin", "null"}},
		{"other scheme", "GET", list, "", []string{"Origin", "http://app.example"}},
		{"preflight", "OPTIONS", search, "", []string{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"}},
	} {
		r := do(t, tc.method, tc.url, tc.body, tc.header...)
		if r.Status != 403 {
			t.Errorf("%s: status %d, want 403 (%s)", tc.name, r.Status, r.Body)
			continue
		}
		if e := errorOf(t, r); e.Error.Code != engram.EFORBIDDEN || !strings.Contains(e.Error.Message, "origin") {
			t.Errorf("%s: error %s", tc.name, r.Body)
		}
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q on a refused origin", tc.name, got)
		}
	}
	if n := len(svc.Calls()); n != calls {
		t.Errorf("refused origins reached the service %d times", n-calls)
	}

	// A page of the server's own origin (the dashboard) may call it, with
	// no CORS headers needed; the same host with another scheme or port
	// is another origin.
	own := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	r = do(t, "POST", own+"/v1/search", body, "Origin", own, "Content-Type", "application/json")
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("own origin: %d, headers %v, body %s", r.Status, r.Header, r.Body)
	}
	for _, o := range []string{strings.Replace(own, "http://", "https://", 1), "http://localhost:1"} {
		if r = do(t, "GET", own+"/v1/memories?org=o&project=p", "", "Origin", o); r.Status != 403 {
			t.Errorf("origin %s on %s: %d, want 403", o, own, r.Status)
		}
	}

	// With every Host allowed, a page on a name rebound to the server
	// would be its "own" origin: only listed origins pass then.
	wild, _ := newFakeServer(t, svc, engramhttp.ServerOptions{AllowedHosts: []string{"*"}})
	rebound := strings.Replace(wild.URL, "127.0.0.1", "evil.example", 1)
	req, err := http.NewRequest("GET", wild.URL+"/v1/memories?org=o&project=p", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = strings.TrimPrefix(rebound, "http://")
	req.Header.Set("Origin", rebound)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("rebound origin %s with --allowed-hosts '*': %d, want 403", rebound, resp.StatusCode)
	}

	// Without an Origin header (not a browser) nothing changes.
	r = do(t, "GET", list, "")
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no origin: %d, headers %v", r.Status, r.Header)
	}
}

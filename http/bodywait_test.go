package http_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	engramhttp "github.com/engramhq/engram/http"
)

// startSlowBody opens a connection to srv that sends a request's headers
// and the first byte of its body, then waits; it returns the connection.
func startSlowBody(t *testing.T, srv *httptest.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	body := `{"scope":{"org":"o","project":"p"},"query":"tea"}`
	fmt.Fprintf(c, "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:1])
	return c
}

// TestLimit_SlowBodiesHoldNoSlot: requests that send their headers and
// then their body a byte at a time do not count as in flight while the
// body arrives, so on a keyless loopback server (every local client is
// 127.0.0.1) they cannot turn the other local clients away with 429; once
// a slow body has arrived, its request is answered.
func TestLimit_SlowBodiesHoldNoSlot(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger: discardLogger(), MaxConcurrent: 4, RateLimit: 1000,
	}))
	t.Cleanup(srv.Close)
	slow := make([]net.Conn, 8)
	for i := range slow {
		slow[i] = startSlowBody(t, srv)
	}
	time.Sleep(300 * time.Millisecond) // the server has read every header
	for i := range 3 {
		if r := do(t, "GET", srv.URL+limitedList, ""); r.Status != http.StatusOK {
			t.Fatalf("request %d beside 8 slow bodies: status %d %s, want 200", i, r.Status, r.Body)
		}
	}
	body := `{"scope":{"org":"o","project":"p"},"query":"tea"}`
	c := slow[0]
	if _, err := c.Write([]byte(body[1:])); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the slow request's answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the slow request, once its body arrived: status %d, want 200", resp.StatusCode)
	}
}

// TestLimit_LongBodyPaced: past the part read ahead, a long body must keep
// arriving; one that stalls is ended with the read timeout's 400 instead
// of holding its slot.
func TestLimit_LongBodyPaced(t *testing.T) {
	defer engramhttp.SetBodyPace(200*time.Millisecond, 1<<20)()
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{
		Logger: discardLogger(), MaxConcurrent: 4, RateLimit: 1000,
	}))
	t.Cleanup(srv.Close)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := `{"scope":{"org":"o","project":"p"},"query":"` + strings.Repeat("a", 2<<20)
	fmt.Fprintf(c, "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(head)+10, head)
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("a stalled long body: status %d, want an error", resp.StatusCode)
		}
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("a stalled long body held its request for %v", waited)
	}
}

package enginetest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
)

// testExportStalledReaders opens, through the real HTTP server, twelve
// exports of a large scope (more than SQLite's four read connections) and
// stops reading them. Meanwhile another tenant's searches
// and writes must complete well within the write timeout, and afterwards
// every stalled export must have been cut, not completed. An export that
// held its read transaction while blocked on the client would keep every
// pooled connection until the write timeout.
func testExportStalledReaders(t *testing.T, open Open) {
	const (
		stalled      = 12 // more than the read connections SQLite keeps (4)
		episodes     = 40
		writeTimeout = 8 * time.Second
		bound        = 3 * time.Second
	)
	e := newEngine(t, open, engine.Options{})
	big := engram.Namespace{Org: "big", Project: "p", User: "hoarder"}
	importLarge(t, e, big, episodes)
	other := engram.Namespace{Org: "other", Project: "p", User: "ana"}
	mustAddMemory(t, e, other, "Ana's cat is called Pixel.")

	srv := httptest.NewUnstartedServer(engramhttp.NewServer(e, engramhttp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler), WriteTimeout: writeTimeout,
	}))
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)

	bodies := openStalledExports(t, srv.URL, big, stalled)
	// Every export answers at once (none waits for a store connection),
	// then fills the small buffers and blocks. A late one is read late.
	bodies = awaitAnswers(bodies, 1500*time.Millisecond)
	answered := time.Now()
	time.Sleep(300 * time.Millisecond)

	c := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Actor: "tester", Timeout: 3 * writeTimeout})
	for i := range 4 {
		op := func(ctx context.Context) error {
			_, err := c.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(other), Query: "cat", K: 5})
			return err
		}
		if i%2 == 1 {
			op = func(ctx context.Context) error {
				_, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: other, Memories: []engram.Memory{{Value: "Ana moved to Köln."}}})
				return err
			}
		}
		opStart := time.Now()
		if err := op(context.Background()); err != nil {
			t.Fatalf("another tenant's request %d during stalled exports: %v", i, err)
		}
		if d := time.Since(opStart); d > bound {
			t.Errorf("another tenant's request %d took %v while %d exports were stalled, more than %v", i, d, stalled, bound)
		}
	}

	// Past the write timeout every stalled export must have been cut: what
	// is left in the buffers reads, then the stream breaks off.
	time.Sleep(time.Until(answered.Add(writeTimeout + 2*time.Second)))
	for i, body := range bodies {
		b, err := readStalled(body, 20*time.Second)
		if err == nil {
			t.Errorf("stalled export %d completed (%d bytes) instead of being cut; the test proves nothing", i, len(b))
		}
		if n := strings.Count(string(b), `"type":"episode"`); n >= episodes {
			t.Errorf("stalled export %d gave all %d episodes", i, n)
		}
	}
}

// smallBuffers gives the connections it accepts a small send buffer, so
// that a client that stops reading blocks the server's writes after little
// data.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// awaitAnswers waits up to d for every export to answer and returns the
// bodies, the ones that did not answer in time still as channels.
func awaitAnswers(bodies []chan io.ReadCloser, d time.Duration) []chan io.ReadCloser {
	end := time.After(d)
	out := make([]chan io.ReadCloser, len(bodies))
	for i, b := range bodies {
		select {
		case rc := <-b:
			out[i] = make(chan io.ReadCloser, 1)
			out[i] <- rc
		case <-end:
			out[i] = b
		}
	}
	return out
}

// importLarge stores n episodes of about 40 KB each in ns, far more than
// the socket buffers between server and client hold.
func importLarge(t *testing.T, e *engine.Engine, ns engram.Namespace, n int) {
	t.Helper()
	words := strings.Repeat("Der Export läuft seitenweise, la exportación avanza, 导出分页进行. ", 700)
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	recs := make([]engram.Record, n)
	for i := range recs {
		recs[i] = engram.Record{Type: engram.RecordEpisode, Episode: &engram.Episode{
			ID: engram.NewID(), Namespace: ns, Role: "user", Content: strings.ToValidUTF8(words[:40<<10], ""),
			OccurredAt: at.Add(time.Duration(i) * time.Minute), ReceivedAt: at,
		}}
	}
	if _, err := e.Import(ctx, engram.ScopeOf(ns), recs); err != nil {
		t.Fatalf("import: %v", err)
	}
}

// openStalledExports starts n exports of ns, each on its own connection
// with a small receive buffer, and returns their bodies unread. The
// requests are sent in the background: an export that waits for a store
// connection has not answered yet.
func openStalledExports(t *testing.T, url string, ns engram.Namespace, n int) []chan io.ReadCloser {
	t.Helper()
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	q := "/v1/export?org=" + ns.Org + "&project=" + ns.Project + "&user=" + ns.User
	bodies := make([]chan io.ReadCloser, n)
	for i := range bodies {
		bodies[i] = make(chan io.ReadCloser, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", url+q, nil)
			resp, err := client.Do(req)
			if err != nil {
				bodies[i] <- io.NopCloser(&failingReader{err})
				return
			}
			bodies[i] <- resp.Body
		}()
	}
	return bodies
}

type failingReader struct{ err error }

func (f *failingReader) Read([]byte) (int, error) { return 0, f.err }

// readStalled reads what a stalled export left, waiting at most d for its
// response, and returns the bytes with the error that ended the stream (nil
// when it completed).
func readStalled(body chan io.ReadCloser, d time.Duration) ([]byte, error) {
	select {
	case rc := <-body:
		defer rc.Close()
		return io.ReadAll(rc)
	case <-time.After(d):
		return nil, context.DeadlineExceeded
	}
}

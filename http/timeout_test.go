package http_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestReadTimeout_TrickledBody: a client that sends its body a byte at a
// time, slower than the read timeout allows, is cut off rather than holding
// the connection as long as it likes.
func TestReadTimeout_TrickledBody(t *testing.T) {
	svc := &fakeService{}
	addr := serveOn(t, engramhttp.NewServer(svc, engramhttp.ServerOptions{
		Logger:      discardLogger(),
		ReadTimeout: 500 * time.Millisecond,
	}))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", addr)

	start := time.Now()
	cut := make(chan string, 1)
	go func() {
		// Whatever the server answers, if anything, before it closes.
		b, _ := io.ReadAll(conn)
		cut <- string(b)
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case answer := <-cut:
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("cut after %v, want about the read timeout", d)
			}
			if answer != "" && !strings.Contains(answer, "read timeout") {
				t.Errorf("answer to a trickled body: %q", answer)
			}
			if n := len(svc.Calls()); n != 0 {
				t.Errorf("the service was called %d times", n)
			}
			return
		case <-tick.C:
			if time.Since(start) > 10*time.Second {
				t.Fatalf("a body trickled for %v was not cut off (%d bytes sent)", time.Since(start), i)
			}
			_, _ = conn.Write([]byte(" "))
		}
	}
}

// TestWriteTimeout_LongExport: an export that takes many times the write
// timeout still completes, because each piece written moves the deadline.
func TestWriteTimeout_LongExport(t *testing.T) {
	const n = 12
	svc := &fakeService{exportDelay: 60 * time.Millisecond}
	for i := range n {
		svc.exported = append(svc.exported, engram.Record{Type: "episode", Episode: &engram.Episode{
			ID: engram.NewID(), Namespace: engram.Namespace{Org: "o", Project: "p"}, Content: strings.Repeat("x", 40<<10), OccurredAt: fakeTime, ReceivedAt: fakeTime,
			Metadata: map[string]any{"i": i},
		}})
	}
	addr := serveOn(t, engramhttp.NewServer(svc, engramhttp.ServerOptions{
		Logger:       discardLogger(),
		WriteTimeout: 250 * time.Millisecond,
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/v1/export?org=o&project=p", nil)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"error"`) {
			t.Fatalf("export ended with %s", sc.Text())
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("export cut after %d records and %v: %v", lines, time.Since(start), err)
	}
	if lines != n {
		t.Errorf("export gave %d records, want %d", lines, n)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("the export took %v, not longer than the write timeout; the test proves nothing", d)
	}
}

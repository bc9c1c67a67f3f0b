package http

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"
)

// A request's in-flight slot (serve --max-concurrent) is for work, not for
// waiting on a slow client: a client that sends its headers and then a
// byte of body a minute would otherwise hold a slot until the read timeout,
// and sixteen such requests from one address (all local clients share
// 127.0.0.1 on a keyless server) would turn every other request from it
// away with 429. So the server reads the first part of a body before it
// takes the slot, and past that part asks the rest to keep arriving at a
// minimum rate.
// prefetchBytes is how much of a body is read before the request counts
// as in flight: every JSON request but imports fits.
const prefetchBytes = 1 << 20

// bodyGrace and bodyMinRate bound how long the rest of a longer body (an
// import, an upload) may take once the request holds its slot: bodyGrace,
// plus a second for every bodyMinRate bytes it has sent. Variables for the
// tests.
var (
	bodyGrace   = 10 * time.Second
	bodyMinRate = float64(64 << 10)
)

// prefetchBody reads up to prefetchBytes of r's body into memory and
// returns r with a body that replays them and then reads the rest, at
// bodyMinRate or faster but never after deadline (the server's read
// timeout; zero: none), through w's connection deadline. An error while
// reading (the client gone, the read timeout) is not answered here: the
// handler meets it when it reads the body, as it would have.
func prefetchBody(w http.ResponseWriter, r *http.Request, deadline time.Time) *http.Request {
	if r.Body == nil || r.Body == http.NoBody {
		return r
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= prefetchBytes {
		buf.Grow(int(r.ContentLength))
	}
	_, err := io.CopyN(&buf, r.Body, prefetchBytes)
	rest := io.Reader(failing{err})
	switch {
	case err == nil: // more than prefetchBytes: the rest streams, paced
		rest = &pacedReader{r: r.Body, rc: http.NewResponseController(w), start: time.Now(), cap: deadline}
	case errors.Is(err, io.EOF):
		rest = failing{io.EOF}
	}
	r2 := *r
	r2.Body = prefetched{Reader: io.MultiReader(&buf, rest), body: r.Body}
	return &r2
}

// prefetched is a request body read partly ahead; Close closes the
// original.
type prefetched struct {
	io.Reader
	body io.ReadCloser
}

func (p prefetched) Close() error { return p.body.Close() }

// failing is a reader that returns err (io.EOF when nil) from every Read.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) {
	if f.err == nil {
		return 0, io.EOF
	}
	return 0, f.err
}

// pacedReader reads the rest of a long body with the connection's read
// deadline set so that it must arrive within bodyGrace plus a second per
// bodyMinRate bytes read so far; a client slower than that meets the
// read timeout's error.
type pacedReader struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	cap   time.Time // zero: none
	n     int64
}

func (p *pacedReader) Read(b []byte) (int, error) {
	allowed := bodyGrace + time.Duration(float64(prefetchBytes+p.n)/bodyMinRate*float64(time.Second))
	d := p.start.Add(allowed)
	if !p.cap.IsZero() && p.cap.Before(d) {
		d = p.cap
	}
	_ = p.rc.SetReadDeadline(d) // a writer without deadlines keeps the server's read timeout
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// readDeadline is when a request that began at start must have been read
// under the read timeout d; zero when there is none.
func readDeadline(d time.Duration, start time.Time) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return start.Add(d)
}

package http

import (
	"container/list"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/engramhq/engram"
)

// Per-client limits. Each client (an API key, or the client's IP address
// when the server does not authenticate) gets a token bucket of
// RateLimit requests a second with RateBurst of slack, and at most
// MaxConcurrent requests in flight. A request over either gets 429 with
// Retry-After. The clients are kept in a map of at most maxLimitedClients
// entries: when it is full the one seen least recently with nothing in
// flight is forgotten, so a flood of addresses costs bounded memory (and
// a forgotten client starts again with a full bucket, which is no worse
// than a new one).

// maxLimitedClients bounds the clients whose limits are remembered.
const maxLimitedClients = 10000

// limiter holds the per-client state of the limits.
type limiter struct {
	rate          rate.Limit // 0: no rate limit
	burst         int
	maxConcurrent int // 0: no concurrency limit
	max           int // clients remembered

	mu      sync.Mutex
	clients map[string]*list.Element // of *clientLimit
	lru     list.List                // front: seen most recently
}

type clientLimit struct {
	id       string
	bucket   *rate.Limiter
	inFlight int
}

// newLimiter returns a limiter, or nil when both limits are off.
func newLimiter(perSecond float64, burst, maxConcurrent int) *limiter {
	if perSecond <= 0 && maxConcurrent <= 0 {
		return nil
	}
	l := &limiter{burst: burst, maxConcurrent: max(maxConcurrent, 0), max: maxLimitedClients, clients: make(map[string]*list.Element)}
	if perSecond > 0 {
		l.rate = rate.Limit(perSecond)
		if l.burst <= 0 {
			l.burst = max(1, int(math.Ceil(perSecond)))
		}
	}
	return l
}

// acquire admits one request of the client id (who says how to name it
// in a message) at now, and returns the function that ends it; or an
// ETOOMANY error naming the limit and how many seconds to wait.
func (l *limiter) acquire(id, who string, now time.Time) (release func(), retryAfter int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, err := l.client(id)
	if err != nil {
		return nil, 1, err
	}
	if l.maxConcurrent > 0 && c.inFlight >= l.maxConcurrent {
		return nil, 1, engram.Errorf(engram.ETOOMANY, "%s has %d requests in flight, the most allowed (engram serve --max-concurrent); retry when one has finished", who, c.inFlight)
	}
	if c.bucket != nil {
		r := c.bucket.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			secs := max(1, int(math.Ceil(d.Seconds())))
			return nil, secs, engram.Errorf(engram.ETOOMANY, "%s sent more than %g requests a second (a burst of %d); retry in %ds (engram serve --rate-limit, --rate-burst)", who, float64(l.rate), l.burst, secs)
		}
	}
	c.inFlight++
	return func() {
		l.mu.Lock()
		c.inFlight--
		l.mu.Unlock()
	}, 0, nil
}

// client returns the state of id, remembering it, and forgetting the
// least recently seen idle client when the map is full. It is called with
// l.mu held.
func (l *limiter) client(id string) (*clientLimit, error) {
	if e, ok := l.clients[id]; ok {
		l.lru.MoveToFront(e)
		return e.Value.(*clientLimit), nil
	}
	if len(l.clients) >= l.max {
		e := l.lru.Back()
		for e != nil && e.Value.(*clientLimit).inFlight > 0 {
			e = e.Prev()
		}
		if e == nil {
			return nil, engram.Errorf(engram.ETOOMANY, "the server has requests in flight from %d clients, the most it tracks; retry shortly", len(l.clients))
		}
		l.lru.Remove(e)
		delete(l.clients, e.Value.(*clientLimit).id)
	}
	c := &clientLimit{id: id}
	if l.rate > 0 {
		c.bucket = rate.NewLimiter(l.rate, l.burst)
	}
	l.clients[id] = l.lru.PushFront(c)
	return c, nil
}

// limitClient returns the limiter's name for the client of r and how a
// message names it: the API key's id, or the remote IP address when the
// request carries no key.
func limitClient(r *http.Request) (id, who string) {
	if k := keyFrom(r.Context()); k != nil {
		return "key " + k.ID, fmt.Sprintf("API key %s", k.ID)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip " + host, fmt.Sprintf("client %s", host)
}

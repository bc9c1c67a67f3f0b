package http

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// TestLimiterBounded: the limiter remembers at most max clients, forgets
// the least recently seen idle one, and never one with a request in flight.
func TestLimiterBounded(t *testing.T) {
	l := newLimiter(1, 1, 1)
	l.max = 2
	now := time.Now()
	acquire := func(id string) (func(), error) {
		release, _, err := l.acquire(id, id, now)
		return release, err
	}
	relA, err := acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	relB, err := acquire("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acquire("c"); engram.ErrorCode(err) != engram.ETOOMANY {
		t.Fatalf("a third client with two in flight: err %v, want %s", err, engram.ETOOMANY)
	}
	relA()
	relC, err := acquire("c")
	if err != nil {
		t.Fatalf("a third client once a is idle: %v", err)
	}
	if got, want := len(l.clients), 2; got != want {
		t.Errorf("clients remembered: %d, want %d", got, want)
	}
	if _, ok := l.clients["a"]; ok {
		t.Error("the idle client a was kept; b, in flight, must be")
	}
	relB()
	relC()
	// b, forgotten or not, is within its limits again only if remembered:
	// its one token is spent.
	if _, err := acquire("b"); engram.ErrorCode(err) != engram.ETOOMANY {
		t.Errorf("b again within the second: err %v, want %s", err, engram.ETOOMANY)
	}
}

package llmformer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/engramhq/engram"
)

// Defaults of the call timeout and the circuit breaker.
const (
	DefaultCallTimeout     = 60 * time.Second
	DefaultBreakerFailures = 3
	DefaultBreakerOpen     = 5 * time.Second
	DefaultBreakerMaxOpen  = 5 * time.Minute
)

// Breaker states, as engram.BreakerStatus reports them.
const (
	breakerClosed   = "closed"
	breakerOpen     = "open"
	breakerHalfOpen = "half-open"
)

// breaker stops calls to a model that keeps failing: after threshold
// consecutive failed calls it opens and refuses calls for openFor, then
// lets one probe through (half-open); the probe's success closes it, its
// failure opens it again for twice as long, up to maxOpen. It is safe for
// concurrent use; a nil breaker lets every call through.
type breaker struct {
	threshold     int
	base, maxOpen time.Duration
	now           func() time.Time

	mu       sync.Mutex
	state    string
	fails    int           // consecutive failed calls
	openFor  time.Duration // the current open period
	until    time.Time     // when an open breaker lets a probe through
	probing  bool          // a half-open breaker's probe is in flight
	lastFail string
}

func newBreaker(cfg Config) *breaker {
	if cfg.BreakerFailures < 0 {
		return nil
	}
	return &breaker{threshold: cfg.BreakerFailures, base: cfg.BreakerOpen, maxOpen: cfg.BreakerMaxOpen,
		now: time.Now, state: breakerClosed}
}

// HeldOffError is the error of a formation that made no progress because
// the model is held off: the breaker refused the call, or the call failed
// and the breaker is open now. Its code is EUNAVAILABLE. The engine puts
// the job off for RetryIn without counting the attempt.
type HeldOffError struct {
	In  time.Duration // how long the breaker stays open
	err error
}

func heldOff(in time.Duration, cause string) *HeldOffError {
	return &HeldOffError{In: in, err: engram.Errorf(engram.EUNAVAILABLE,
		"llm former: the model is held off for %s after failing calls (circuit breaker open): %s", in.Round(time.Millisecond), cause)}
}

// Error implements error.
func (e *HeldOffError) Error() string { return e.err.Error() }

// Unwrap returns the EUNAVAILABLE *engram.Error.
func (e *HeldOffError) Unwrap() error { return e.err }

// RetryIn is how long to wait before asking the model again.
func (e *HeldOffError) RetryIn() time.Duration { return e.In }

// allow says whether a call may go out, and whether it is the probe of a
// half-open breaker; a refused call gets a *HeldOffError.
func (b *breaker) allow() (probe bool, err error) {
	if b == nil {
		return false, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	switch {
	case b.state == breakerClosed:
		return false, nil
	case b.state == breakerOpen && now.Before(b.until):
		return false, heldOff(b.until.Sub(now), b.lastFail)
	case b.probing:
		return false, heldOff(b.base, b.lastFail)
	}
	b.state, b.probing = breakerHalfOpen, true
	return true, nil
}

// record notes the outcome of a call allow let through: failed says the
// model failed it (nil err for success). A call whose caller gave up
// (abandoned) counts neither way. After a failure that leaves the breaker
// open it returns the *HeldOffError to report instead of err.
func (b *breaker) record(probe, abandoned bool, err error) error {
	if b == nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch {
	case abandoned:
		return err
	case err == nil:
		b.state, b.fails, b.openFor = breakerClosed, 0, 0
		return nil
	}
	b.fails++
	b.lastFail = engram.ErrorMessage(err)
	if !probe && b.fails < b.threshold && b.state == breakerClosed {
		return err
	}
	if b.state == breakerOpen {
		// Calls that went out before it opened fail after it: no new period.
		return heldOff(max(b.until.Sub(b.now()), 0), b.lastFail)
	}
	b.openFor = min(max(2*b.openFor, b.base), b.maxOpen)
	b.state, b.until = breakerOpen, b.now().Add(b.openFor)
	return heldOff(b.openFor, b.lastFail)
}

// status reports the breaker's state.
func (b *breaker) status() engram.BreakerStatus {
	if b == nil {
		return engram.BreakerStatus{State: breakerClosed}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := engram.BreakerStatus{State: b.state, Failures: b.fails}
	if b.state == breakerOpen {
		at := b.until.UTC()
		st.RetryAt = &at
	}
	return st
}

// upstreamFailure says whether err, from a call cut by cctx, is the
// model's fault: unreachable, answering 5xx until the client gave up, or
// not answering within the call timeout. A rejected request (4xx) or a
// reply that is not of the expected shape says the model is up.
func upstreamFailure(cctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return true
	}
	return engram.ErrorCode(err) == engram.EUNAVAILABLE
}

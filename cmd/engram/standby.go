package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// Reconnection backoff of a server whose store is unreachable at start.
const (
	firstRetry = 250 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// standby is the engramhttp.Backend of a server that started while its
// PostgreSQL store was unreachable. Until connect succeeds every call fails
// with EUNAVAILABLE and a sentence saying why, so the server can listen,
// answer /healthz and report not-ready instead of exiting; once connected,
// calls go to the engine. Outages after that are the engine's to report
// (its store maps them to EUNAVAILABLE too).
type standby struct {
	mu       sync.RWMutex
	eng      *engine.Engine
	closeEng func() error
	why      error // the last failed attempt, while eng is nil
}

// The server takes standby as its backend and its key service; the
// compiler checks that it forwards every method of both.
var (
	_ engramhttp.Backend = (*standby)(nil)
	_ engram.KeyService  = (*standby)(nil)
)

//go:generate go run ./internal/genstandby

// openFunc opens the engine over the store; the second value closes both.
type openFunc func(ctx context.Context) (*engine.Engine, func() error, error)

// connect calls open until it succeeds, waiting between attempts with a
// doubling backoff capped at maxRetry. It returns nil once the engine
// serves, ctx's error when ctx ends first, and open's error when that is not
// EUNAVAILABLE (a schema newer than the program, vectors of another
// embedder): retrying cannot fix those.
func (s *standby) connect(ctx context.Context, open openFunc, log *slog.Logger) error {
	wait := firstRetry
	for attempt := 1; ; attempt++ {
		eng, closeEng, err := open(ctx)
		if err == nil {
			s.mu.Lock()
			s.eng, s.closeEng, s.why = eng, closeEng, nil
			s.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if engram.ErrorCode(err) != engram.EUNAVAILABLE {
			return err
		}
		s.mu.Lock()
		s.why = err
		s.mu.Unlock()
		log.Warn("the store is unavailable; retrying", "attempt", attempt, "retry_in", wait, "err", engram.ErrorMessage(err))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, maxRetry)
	}
}

// firstOpen makes the first attempt to open the engine and reports
// whether it succeeded. An EUNAVAILABLE error (while ctx lasts) is kept
// for the calls made meanwhile and logged; any other error is returned,
// since retrying cannot fix it.
func (s *standby) firstOpen(ctx context.Context, open openFunc, log *slog.Logger, label string) (bool, error) {
	eng, closeEng, err := open(ctx)
	switch {
	case err == nil:
		s.mu.Lock()
		s.eng, s.closeEng = eng, closeEng
		s.mu.Unlock()
		return true, nil
	case engram.ErrorCode(err) == engram.EUNAVAILABLE && ctx.Err() == nil:
		s.setUnavailable(err)
		log.Warn("the store is unavailable; serving 503 until it can be reached", "store", label, "err", engram.ErrorMessage(err))
		return false, nil
	default:
		return false, fmt.Errorf("open the PostgreSQL store: %w", err)
	}
}

// reconnect runs connect in the background until ctx ends; an error
// retrying cannot fix calls stop, so the server shuts down. The returned
// wait blocks until connect has returned and gives that error (nil when
// connected or when ctx ended first).
func (s *standby) reconnect(ctx context.Context, stop context.CancelFunc, open openFunc, log *slog.Logger, label string) (wait func() error) {
	var fatal error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.connect(ctx, open, log); err == nil {
			log.Info("connected to the store; ready", "store", label)
		} else if ctx.Err() == nil {
			fatal = err
			stop()
		}
	}()
	return func() error {
		<-done
		return fatal
	}
}

// setUnavailable records why the store cannot be reached before connect
// runs, so that calls made meanwhile say so.
func (s *standby) setUnavailable(err error) {
	s.mu.Lock()
	s.why = err
	s.mu.Unlock()
}

// backend returns the engine, or an EUNAVAILABLE error when there is none
// yet. Every method of engramhttp.Backend forwards to it (standby_gen.go).
func (s *standby) backend() (engramhttp.Backend, error) {
	eng, err := s.engine()
	if err != nil {
		return nil, err // not a nil *engine.Engine in a non-nil interface
	}
	return eng, nil
}

// engine returns the engine, or an EUNAVAILABLE error when there is none
// yet.
func (s *standby) engine() (*engine.Engine, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.eng != nil {
		return s.eng, nil
	}
	reason := "it has not been reached yet"
	if s.why != nil {
		reason = engram.ErrorMessage(s.why)
	}
	return nil, engram.Errorf(engram.EUNAVAILABLE, "the server is not connected to its store (%s); it keeps trying, try again later", reason)
}

// Ready returns nil when the engine is open and its store answers, else an
// EUNAVAILABLE error.
func (s *standby) Ready(ctx context.Context) error {
	eng, err := s.engine()
	if err != nil {
		return err
	}
	return eng.Ready(ctx)
}

// Close closes the engine if connect opened one. Call it after connect has
// returned.
func (s *standby) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closeEng == nil {
		return nil
	}
	err := s.closeEng()
	s.eng, s.closeEng = nil, nil
	return err
}

// storeLabel names the store in logs: the SQLite file, or the PostgreSQL
// server and database without password or parameters (the query may carry
// a password too).
func storeLabel(dataDir, storeURL string) string {
	if storeURL == "" {
		return "sqlite:" + storeopen.File(dataDir)
	}
	u, err := url.Parse(storeURL)
	if err != nil {
		return "postgres (unparsable URL)"
	}
	user := ""
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username() + "@"
	}
	return fmt.Sprintf("postgres://%s%s%s", user, u.Host, u.EscapedPath())
}

// keys returns the key service over the engine's store, or EUNAVAILABLE
// while there is no engine: requests then answer 503, not 401.
func (s *standby) keys() (engram.KeyService, error) {
	eng, err := s.engine()
	if err != nil {
		return nil, err
	}
	return engram.Keys{Store: eng.Store()}, nil
}

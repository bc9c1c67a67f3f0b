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
	"github.com/engramhq/engram/storeopen"
)

// Reconnection backoff of a server whose store is unreachable at start.
const (
	firstRetry = 250 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// standby is the engram.Service of a server that started while its
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

var _ engram.Service = (*standby)(nil)

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

// readyChecker is a service that can say whether its store answers, as
// the engine can.
type readyChecker interface {
	Ready(ctx context.Context) error
}

// storeOwner is a service that hands out its store, where the API keys
// are kept, as the engine does.
type storeOwner interface {
	Store() engram.Store
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

// service returns the engine, or an EUNAVAILABLE error when there is none
// yet.
func (s *standby) service() (engram.Service, error) {
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
	svc, err := s.service()
	if err != nil {
		return err
	}
	return svc.(readyChecker).Ready(ctx)
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

func (s *standby) AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.AddEpisodes(ctx, req)
}

func (s *standby) AddMemories(ctx context.Context, req engram.AddMemoriesRequest) ([]engram.Memory, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.AddMemories(ctx, req)
}

func (s *standby) GetEpisode(ctx context.Context, sc engram.Scope, id string) (*engram.Episode, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.GetEpisode(ctx, sc, id)
}

func (s *standby) GetMemory(ctx context.Context, sc engram.Scope, id string) (*engram.Memory, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.GetMemory(ctx, sc, id)
}

// Profile implements engram.ProfileReader, so GET /v1/profile and the MCP
// profile resources work over PostgreSQL; EUNAVAILABLE while disconnected.
func (s *standby) Profile(ctx context.Context, sc engram.Scope) (*engram.Profile, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	pr, ok := svc.(engram.ProfileReader)
	if !ok {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "this service keeps no profiles")
	}
	return pr.Profile(ctx, sc)
}

func (s *standby) ListEpisodes(ctx context.Context, sc engram.Scope, f engram.EpisodeFilter) (*engram.EpisodePage, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.ListEpisodes(ctx, sc, f)
}

func (s *standby) ListMemories(ctx context.Context, sc engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.ListMemories(ctx, sc, f)
}

func (s *standby) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.Search(ctx, req)
}

func (s *standby) UpdateMemory(ctx context.Context, sc engram.Scope, id string, p engram.MemoryPatch) (*engram.Memory, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.UpdateMemory(ctx, sc, id, p)
}

func (s *standby) SupersedeMemory(ctx context.Context, sc engram.Scope, id string, req engram.SupersedeRequest) (*engram.SupersedeResult, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.SupersedeMemory(ctx, sc, id, req)
}

func (s *standby) DeleteMemory(ctx context.Context, sc engram.Scope, id string, o engram.DeleteOptions) error {
	svc, err := s.service()
	if err != nil {
		return err
	}
	return svc.DeleteMemory(ctx, sc, id, o)
}

func (s *standby) RestoreMemory(ctx context.Context, sc engram.Scope, id string, reason string) (*engram.Memory, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.RestoreMemory(ctx, sc, id, reason)
}

func (s *standby) History(ctx context.Context, sc engram.Scope, id string) ([]engram.Version, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.History(ctx, sc, id)
}

func (s *standby) Rollback(ctx context.Context, sc engram.Scope, id string, v int, reason string) (*engram.Memory, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.Rollback(ctx, sc, id, v, reason)
}

func (s *standby) DeleteEpisode(ctx context.Context, sc engram.Scope, id string) (*engram.EpisodeDeleteResult, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.DeleteEpisode(ctx, sc, id)
}

func (s *standby) DeleteScope(ctx context.Context, sc engram.Scope) (*engram.PurgeCounts, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.DeleteScope(ctx, sc)
}

func (s *standby) Export(ctx context.Context, sc engram.Scope, fn func(engram.Record) error) error {
	svc, err := s.service()
	if err != nil {
		return err
	}
	return svc.Export(ctx, sc, fn)
}

func (s *standby) Import(ctx context.Context, sc engram.Scope, recs []engram.Record) (*engram.ImportResult, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.Import(ctx, sc, recs)
}

func (s *standby) Audit(ctx context.Context, sc engram.Scope, f engram.AuditFilter) (*engram.AuditPage, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.Audit(ctx, sc, f)
}

func (s *standby) GetJob(ctx context.Context, sc engram.Scope, id string) (*engram.Job, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.GetJob(ctx, sc, id)
}

func (s *standby) ListJobs(ctx context.Context, sc engram.Scope, f engram.JobFilter) (*engram.JobPage, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return svc.ListJobs(ctx, sc, f)
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

var _ engram.KeyService = (*standby)(nil)

// keys returns the key service over the engine's store, or EUNAVAILABLE
// while there is no engine: requests then answer 503, not 401.
func (s *standby) keys() (engram.KeyService, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return engram.Keys{Store: svc.(storeOwner).Store()}, nil
}

func (s *standby) Authenticate(ctx context.Context, secret string) (*engram.APIKey, error) {
	ks, err := s.keys()
	if err != nil {
		return nil, err
	}
	return ks.Authenticate(ctx, secret)
}

func (s *standby) CreateKey(ctx context.Context, spec engram.KeySpec) (*engram.APIKey, string, error) {
	ks, err := s.keys()
	if err != nil {
		return nil, "", err
	}
	return ks.CreateKey(ctx, spec)
}

func (s *standby) ListKeys(ctx context.Context, org, project string) ([]engram.APIKey, error) {
	ks, err := s.keys()
	if err != nil {
		return nil, err
	}
	return ks.ListKeys(ctx, org, project)
}

func (s *standby) RevokeKey(ctx context.Context, org, project, id string) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	return ks.RevokeKey(ctx, org, project, id)
}

var _ engram.ConflictService = (*standby)(nil)

// conflicts returns the engine's conflict service, or EUNAVAILABLE while
// there is no engine.
func (s *standby) conflicts() (engram.ConflictService, error) {
	svc, err := s.service()
	if err != nil {
		return nil, err
	}
	return engram.Need[engram.ConflictService](svc, "listing and resolving conflicts")
}

func (s *standby) ListConflicts(ctx context.Context, sc engram.Scope) ([]engram.Conflict, error) {
	cs, err := s.conflicts()
	if err != nil {
		return nil, err
	}
	return cs.ListConflicts(ctx, sc)
}

func (s *standby) ResolveConflict(ctx context.Context, sc engram.Scope, id string, req engram.ResolveConflictRequest) (*engram.ConflictResolution, error) {
	cs, err := s.conflicts()
	if err != nil {
		return nil, err
	}
	return cs.ResolveConflict(ctx, sc, id, req)
}

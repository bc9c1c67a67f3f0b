package eval

import (
	"context"
	"log/slog"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/wordnet"
)

// DefaultEngine opens the engine with default options, frozen (see
// Freeze), over the store in dir, through storeopen: the SQLite store in
// that data directory. Each search writes the reads it recorded before it
// answers (see flushingService), so figures do not depend on the
// machine's speed.
func DefaultEngine(ctx context.Context, dir string) (engram.Service, func() error, error) {
	opts := engine.Options{Logger: slog.New(slog.DiscardHandler)}
	Freeze(&opts)
	e, err := storeopen.Engine(ctx, dir, opts)
	if err != nil {
		return nil, nil, err
	}
	return flushing(e), e.Close, nil
}

// GraphTune adds the graph channel, walking with walk and weighed weight
// in fusion, to engine options.
func GraphTune(walk func(map[string]float64, []retrieval.Edge) map[string]float64, weight float64) func(*engine.Options) {
	return func(o *engine.Options) { o.AddChannel(retrieval.Graph{Walk: walk}, weight) }
}

// WordNetConfig is the WordNet query-expansion channel that --wordnet adds.
type WordNetConfig struct {
	On     bool
	Weight float64
	Limits wordnet.Limits
	// WithQuery searches the related words with the query's own (see
	// retrieval.Expansion).
	WithQuery bool
}

// DefaultWordNet is what --wordnet adds unless other flags say otherwise.
var DefaultWordNet = WordNetConfig{
	Weight: retrieval.DefaultConfig().Weights[retrieval.ChannelThesaurus],
	Limits: wordnet.DefaultLimits,
}

// WordNetTune adds the query-expansion channel over the WordNet database
// in wordnet.DefaultDir, weighed c.Weight in fusion, to engine options. A
// database that cannot be read turns the channel into one that finds
// nothing (logged once).
func WordNetTune(c WordNetConfig) func(*engine.Options) {
	th := &wordnet.Thesaurus{DB: wordnet.Open(wordnet.DefaultDir()), Limits: c.Limits}
	return func(o *engine.Options) {
		o.AddChannel(retrieval.Expansion{Thesaurus: th, WithQuery: c.WithQuery}, c.Weight)
	}
}

// AgentTune returns the engine options change that --agent spec names:
// engine.DefaultAgentConfig with the listed fields set (see
// engine.ParseAgentConfig for the keys). It fails as ParseAgentConfig
// does.
func AgentTune(spec string) (func(*engine.Options), error) {
	cfg, err := engine.ParseAgentConfig(spec)
	if err != nil {
		return nil, err
	}
	return func(o *engine.Options) { o.Agent = &cfg }, nil
}

// GraphEngine returns a factory of the default engine with its options
// changed by tune. It fails as DefaultEngine does.
func GraphEngine(tune func(*engine.Options)) EngineFactory {
	return func(ctx context.Context, dir string) (engram.Service, func() error, error) {
		opts := engine.Options{Logger: slog.New(slog.DiscardHandler)}
		tune(&opts)
		Freeze(&opts)
		e, err := storeopen.Engine(ctx, dir, opts)
		if err != nil {
			return nil, nil, err
		}
		return flushing(e), e.Close, nil
	}
}

// Freeze stops the engine's background work that would change rankings
// with the machine's timing: recorded reads are written only when Run
// asks, after each search (see flushingService), not by a timer, and no
// communities are refreshed in the background. Every factory of an
// engine under test applies it, so two runs of one binary on one data
// set rank every question the same.
func Freeze(o *engine.Options) {
	o.AccessFlush = frozenFlush
	o.CommunityRefresh = 0
}

// frozenFlush is the access-flush interval of a frozen engine: longer
// than any run.
const frozenFlush = 365 * 24 * time.Hour

// flushing wraps svc in a flushingService when it records reads in the
// background, and returns it as it is otherwise.
func flushing(svc engram.Service) engram.Service {
	if f, ok := svc.(accessFlusher); ok {
		return flushingService{svc, f}
	}
	return svc
}

// accessFlusher is the capability of an engine that records reads in the
// background (engine.Engine.FlushAccess).
type accessFlusher interface {
	FlushAccess(ctx context.Context) error
}

// flushingService writes the reads each search recorded before it answers,
// so that what earlier questions read counts for the next one exactly as
// it would for a client that waits between questions, whatever the timing
// of the background flush: a run's figures do not depend on the machine's
// speed.
type flushingService struct {
	engram.Service
	f accessFlusher
}

func (s flushingService) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	res, err := s.Service.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	return res, s.f.FlushAccess(ctx)
}

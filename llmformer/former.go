package llmformer

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram"
)

// Config configures a Former. Zero fields take the defaults below.
type Config struct {
	// LLM is the chat model; required.
	LLM Completer
	// Context is how many turns stored before a batch are shown with it
	// (as context only; nothing is formed from them). Default 6.
	Context int
	// Neighbours is how many of the scope's nearest active memories a
	// candidate is compared with. Default 5.
	Neighbours int
	// Traits and States bound the profile: stable traits and transient
	// states kept. Defaults 12 and 6.
	Traits, States int
	// Logger receives one line per formation with calls and tokens.
	// Default slog.Default().
	Logger *slog.Logger
	// CallTimeout bounds each call to the model, the chat client's own
	// retries included; a call cut by it fails with EUNAVAILABLE and
	// counts as a failure of the model. Default DefaultCallTimeout.
	CallTimeout time.Duration
	// BreakerFailures is how many consecutive calls must fail for the
	// model's fault (unreachable, 5xx, no answer within CallTimeout) for
	// the circuit breaker to open: then calls are refused with a
	// *HeldOffError for BreakerOpen, after which one probe call goes out;
	// its failure opens the breaker again for twice as long, up to
	// BreakerMaxOpen, its success closes it. Defaults
	// DefaultBreakerFailures, DefaultBreakerOpen, DefaultBreakerMaxOpen;
	// a negative BreakerFailures turns the breaker off.
	BreakerFailures             int
	BreakerOpen, BreakerMaxOpen time.Duration
}

// Former is an engram.Former backed by a chat model that reads the scope
// it forms into. It is safe for concurrent use.
type Former struct {
	llm     Completer
	cfg     Config
	log     *slog.Logger
	mode    atomic.Int32
	count   counters
	breaker *breaker // nil when turned off
}

// New returns a Former for cfg, or an EINVALID error when cfg.LLM is nil
// or a bound or duration is negative. It makes no request.
func New(cfg Config) (*Former, error) {
	if cfg.LLM == nil {
		return nil, engram.Errorf(engram.EINVALID, "llm former: an LLM is required")
	}
	if cfg.Context < 0 || cfg.Neighbours < 0 || cfg.Traits < 0 || cfg.States < 0 {
		return nil, engram.Errorf(engram.EINVALID, "llm former: Context, Neighbours, Traits and States may not be negative")
	}
	if cfg.CallTimeout < 0 || cfg.BreakerOpen < 0 || cfg.BreakerMaxOpen < 0 {
		return nil, engram.Errorf(engram.EINVALID, "llm former: CallTimeout, BreakerOpen and BreakerMaxOpen may not be negative")
	}
	cfg.Context = orDefault(cfg.Context, 6)
	cfg.Neighbours = orDefault(cfg.Neighbours, 5)
	cfg.Traits = orDefault(cfg.Traits, 12)
	cfg.States = orDefault(cfg.States, 6)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.CallTimeout = orDefault(cfg.CallTimeout, DefaultCallTimeout)
	cfg.BreakerFailures = orDefault(cfg.BreakerFailures, DefaultBreakerFailures)
	cfg.BreakerOpen = orDefault(cfg.BreakerOpen, DefaultBreakerOpen)
	cfg.BreakerMaxOpen = max(orDefault(cfg.BreakerMaxOpen, DefaultBreakerMaxOpen), cfg.BreakerOpen)
	return &Former{llm: cfg.LLM, cfg: cfg, log: cfg.Logger, breaker: newBreaker(cfg)}, nil
}

func orDefault[T int | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// Needs implements engram.Former: a read view of the scope, and the
// actor "former:llm:<model>" the engine records as the author of its
// operations. It asks for no turn before: it reads earlier turns itself
// from the view (Config.Context).
func (f *Former) Needs() engram.FormNeeds {
	return engram.FormNeeds{Actor: "former:llm:" + f.llm.Model(), ReadsScope: true}
}

// BreakerStatus implements engram.BreakerReporter: the state of the
// circuit breaker around the model.
func (f *Former) BreakerStatus() engram.BreakerStatus { return f.breaker.status() }

// Stats returns the calls, tokens and turns counted so far.
func (f *Former) Stats() Stats { return f.count.stats() }

// Form implements engram.Former: extraction, then a decision per
// candidate against its neighbours in req.View, then the profile. Without
// a View every candidate is added. It fails with the chat client's error,
// an EUNAVAILABLE error naming what was wrong with a reply, or the View's
// errors; nothing is returned half-way.
func (f *Former) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	r, eps := req.View, req.Episodes
	if len(eps) == 0 {
		return nil, nil
	}
	start, before := time.Now(), f.count.stats()
	prior, err := f.priorTurns(ctx, r, eps)
	if err != nil {
		return nil, err
	}
	ex, err := f.extract(ctx, prior, eps)
	if err != nil {
		return nil, err
	}
	ops, err := f.consolidate(ctx, r, ex.candidates)
	if err != nil {
		return nil, err
	}
	ops = append(ops, ex.summaries...)
	pop, err := f.profile(ctx, r, eps[0].Namespace, ex.candidates)
	if err != nil {
		return nil, err
	}
	if pop != nil {
		ops = append(ops, *pop)
	}
	f.count.turns.Add(int64(len(eps)))
	f.logFormation(ctx, len(eps), len(ops), before, start)
	return ops, nil
}

func (f *Former) logFormation(ctx context.Context, turns, ops int, before Stats, start time.Time) {
	now := f.count.stats()
	f.log.LogAttrs(ctx, slog.LevelInfo, "llm formation",
		slog.Int("turns", turns), slog.Int("ops", ops),
		slog.Int64("calls", now.Calls-before.Calls),
		slog.Int64("prompt_tokens", now.PromptTokens-before.PromptTokens),
		slog.Int64("completion_tokens", now.CompletionTokens-before.CompletionTokens),
		slog.Duration("took", time.Since(start)))
}

// priorTurns returns up to Config.Context episodes stored in the batch's
// namespace just before its first turn, oldest first; none without r.
func (f *Former) priorTurns(ctx context.Context, r engram.ScopeReader, eps []engram.Episode) ([]engram.Episode, error) {
	if r == nil {
		return nil, nil
	}
	first := eps[0].OccurredAt
	for _, e := range eps {
		if e.OccurredAt.Before(first) {
			first = e.OccurredAt
		}
	}
	for _, w := range []time.Duration{time.Hour, 7 * 24 * time.Hour} {
		from := first.Add(-w)
		page, _, err := r.ListEpisodes(ctx, engram.EpisodeFilter{OccurredAfter: &from, OccurredBefore: &first, Limit: engram.MaxLimit})
		if err != nil {
			return nil, err
		}
		var same []engram.Episode
		for _, p := range page {
			if p.Namespace == eps[0].Namespace {
				same = append(same, p)
			}
		}
		if len(same) > 0 || w > time.Hour {
			return same[max(0, len(same)-f.cfg.Context):], nil
		}
	}
	return nil, nil
}

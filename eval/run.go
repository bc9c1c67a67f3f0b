package eval

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/schollz/progressbar/v3"
)

// System names, in report order.
const (
	SystemEngram = "engram"
	SystemBM25   = "bm25"
	SystemDense  = "dense"
	SystemFull   = "full"
)

// AllSystems lists every system Run knows, in report order.
var AllSystems = []string{SystemEngram, SystemBM25, SystemDense, SystemFull}

// Levels of scoring.
const (
	LevelTurn    = "turn"
	LevelSession = "session"
)

// EngineFactory opens a Service keeping its data under dir and returns it
// with the function that closes it.
type EngineFactory func(ctx context.Context, dir string) (engram.Service, func() error, error)

// Config configures Run. Zero fields take the defaults noted.
type Config struct {
	// Bench is "locomo" or "longmemeval". Required.
	Bench string
	// Data is the benchmark file as distributed, plain or gzip-compressed
	// JSON (detected by its first bytes, whatever its name). Required.
	Data string
	// Out, when set, is the directory Run writes report.json, report.md,
	// questions.jsonl and the SVG plots into (created if missing).
	Out string
	// Limit keeps the first Limit LoCoMo conversations or LongMemEval
	// questions; zero keeps all.
	Limit int
	// Only, when set, keeps the haystacks at these indexes of the file
	// (0-based, any order) and no others, to report on a held-out part of
	// a benchmark. It excludes Limit.
	Only []int
	// DataDir is where a fresh, run-private engine directory is made and
	// removed afterwards; default the system temp directory.
	DataDir string
	// Progress receives a progress bar; nil shows none.
	Progress io.Writer
	// NewEngine opens the engine under test; default DefaultEngine. An
	// engine that records reads in the background (FlushAccess) has them
	// written after every search; a factory should also Freeze it.
	NewEngine EngineFactory
	// Former, when set, forms memories in the default engine instead of
	// the rules (see FormerEngine); the report names it and, for the LLM
	// former, its calls and tokens per added turn.
	Former engram.Former
	// LLM, when set, also answers and judges every question (J metric).
	LLM *LLMConfig
	// Systems to run, in any order; default AllSystems.
	Systems []string
	// K is the depth of the ranked search (recall@K, NDCG, MRR); default
	// and minimum 20.
	K int
	// PoolK is the depth of the search whose hits fill the token budgets;
	// default engram.MaxK.
	PoolK int
	// Mode is the search mode of every question's searches
	// (engram.SearchRequest.Mode): "" or oneshot, or agentic.
	Mode string
	// TurnAtATime adds every turn in a call of its own, as a chat client
	// does, instead of a session per call.
	TurnAtATime bool
	// Logger receives a line per phase; default a discarding logger.
	Logger *slog.Logger
}

// DefaultCacheDir is a stable directory, under the user's cache directory,
// for data worth keeping between runs (an embedding cache); it falls back to
// the temp directory when the user has none.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "engram", "eval")
	}
	return filepath.Join(os.TempDir(), "engram-eval-cache")
}

func (cfg *Config) defaults() error {
	switch cfg.Bench {
	case BenchLoCoMo, BenchLongMemEval:
	default:
		return engram.Errorf(engram.EINVALID, "benchmark %q is not one of locomo, longmemeval", cfg.Bench)
	}
	if cfg.Data == "" {
		return engram.Errorf(engram.EINVALID, "a data file is required")
	}
	if cfg.Limit < 0 {
		return engram.Errorf(engram.EINVALID, "limit %d is negative", cfg.Limit)
	}
	if len(cfg.Only) > 0 {
		if cfg.Limit != 0 {
			return engram.Errorf(engram.EINVALID, "limit and only both select haystacks; give one")
		}
		only := slices.Clone(cfg.Only)
		slices.Sort(only)
		if only[0] < 0 {
			return engram.Errorf(engram.EINVALID, "only: haystack index %d is negative", only[0])
		}
		cfg.Only = slices.Compact(only)
	}
	if cfg.K == 0 {
		cfg.K = 20
	}
	if cfg.K < recallKs[len(recallKs)-1] || cfg.K > engram.MaxK {
		return engram.Errorf(engram.EINVALID, "k %d is outside %d..%d", cfg.K, recallKs[len(recallKs)-1], engram.MaxK)
	}
	if cfg.PoolK == 0 {
		cfg.PoolK = engram.MaxK
	}
	if cfg.PoolK < cfg.K || cfg.PoolK > engram.MaxK {
		return engram.Errorf(engram.EINVALID, "pool k %d is outside k (%d)..%d", cfg.PoolK, cfg.K, engram.MaxK)
	}
	if len(cfg.Systems) == 0 {
		cfg.Systems = AllSystems
	}
	for _, s := range cfg.Systems {
		if !slices.Contains(AllSystems, s) {
			return engram.Errorf(engram.EINVALID, "system %q is not one of %s", s, strings.Join(AllSystems, ", "))
		}
	}
	if cfg.NewEngine == nil {
		cfg.NewEngine = DefaultEngine
		if cfg.Former != nil {
			cfg.NewEngine = FormerEngine(cfg.Former)
		}
	}
	if cfg.DataDir == "" {
		cfg.DataDir = os.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LLM != nil {
		if err := cfg.LLM.defaults(cfg.Systems); err != nil {
			return err
		}
	}
	return nil
}

// searchSystem is a system answered by Search.
type searchSystem struct {
	name        string
	channels    []string // nil: every channel
	unavailable string
	latency     []float64 // ms, ranked searches
	poolLatency []float64 // ms, pool searches
	levels      map[string]*levelAcc
}

type runner struct {
	cfg    Config
	ds     *dataset
	svc    engram.Service
	tok    *tokenCounter
	bar    *progressbar.ProgressBar
	levels []string

	systems []*searchSystem
	full    map[string]*levelAcc // nil when "full" is not run
	probed  bool

	asked      int // questions asked so far
	episodes   int
	ingestTime time.Duration
	scored     map[string]int
	skipped    map[string]map[string]int
	questions  []QuestionResult
	llmJobs    []llmJob
}

// Run evaluates retrieval on one benchmark file and returns the report; with
// cfg.Out set it also writes the report's files. It fails with EINVALID for
// a bad config or data file, and with the engine's error when ingest or a
// search of the engram or bm25 system fails. A channel the engine refuses
// marks its system unavailable instead.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	data, sum, err := readData(cfg.Data)
	if err != nil {
		return nil, err
	}
	ds, err := parse(cfg.Bench, data, selection{limit: cfg.Limit, only: cfg.Only})
	if err != nil {
		return nil, err
	}
	tok, err := newTokenCounter()
	if err != nil {
		return nil, err
	}

	dir, err := engineDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	svc, closeSvc, err := cfg.NewEngine(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("open engine: %w", err)
	}
	svc = flushing(svc)
	defer func() {
		if closeSvc != nil {
			_ = closeSvc()
		}
	}()

	r := newRunner(cfg, ds, svc, tok)
	if err := r.askAll(ctx); err != nil {
		return nil, err
	}
	closeErr := closeSvc()
	closeSvc = nil
	if closeErr != nil {
		return nil, fmt.Errorf("close engine: %w", closeErr)
	}

	rep := r.report()
	if cfg.LLM != nil {
		if err := r.runLLM(ctx, rep); err != nil {
			return nil, err
		}
	}
	rep.Run = r.runInfo(start, sum)
	if cfg.Out != "" {
		if err := rep.WriteFiles(cfg.Out); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// engineDir makes a fresh directory for the engine under test in dataDir,
// creating dataDir when missing.
func engineDir(dataDir string) (string, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	dir, err := os.MkdirTemp(dataDir, "engram-eval-*")
	if err != nil {
		return "", fmt.Errorf("create engine directory: %w", err)
	}
	return dir, nil
}

// newRunner sets up the run of cfg's systems over ds against svc, with a
// progress bar when cfg.Progress is set.
func newRunner(cfg Config, ds *dataset, svc engram.Service, tok *tokenCounter) *runner {
	r := &runner{cfg: cfg, ds: ds, svc: svc, tok: tok,
		scored: map[string]int{}, skipped: map[string]map[string]int{}}
	r.levels = []string{LevelTurn}
	if cfg.Bench == BenchLongMemEval {
		r.levels = []string{LevelSession, LevelTurn}
	}
	for _, name := range cfg.Systems {
		switch name {
		case SystemFull:
			r.full = r.newLevels()
		case SystemEngram:
			r.systems = append(r.systems, &searchSystem{name: name, levels: r.newLevels()})
		default:
			r.systems = append(r.systems, &searchSystem{name: name, channels: []string{name}, levels: r.newLevels()})
		}
	}
	if cfg.Progress != nil {
		r.bar = progressbar.NewOptions(ds.questionCount(), progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription(cfg.Bench), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("questions"),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetPredictTime(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(cfg.Progress) }))
	}
	return r
}

// questionCount is the number of questions of every haystack.
func (ds *dataset) questionCount() int {
	nq := 0
	for _, h := range ds.haystacks {
		nq += len(h.questions)
	}
	return nq
}

// askAll ingests every haystack and asks its questions, in order, until
// ctx ends.
func (r *runner) askAll(ctx context.Context) error {
	ds := r.ds
	for i := range ds.haystacks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.haystack(ctx, &ds.haystacks[i]); err != nil {
			return fmt.Errorf("%s %s: %w", r.cfg.Bench, ds.haystacks[i].id, err)
		}
	}
	if r.bar != nil {
		_ = r.bar.Finish()
	}
	return nil
}

// runInfo describes the run that started at start over the data file of
// SHA-256 sum.
func (r *runner) runInfo(start time.Time, sum string) RunInfo {
	cfg, ds := &r.cfg, r.ds
	info := RunInfo{
		Date: start.UTC().Truncate(time.Second), DataFile: filepath.Base(cfg.Data), DataSHA256: sum,
		Limit: cfg.Limit, Only: cfg.Only, Mode: cfg.Mode, Now: ds.nowNote(), Haystacks: len(ds.haystacks), Episodes: r.episodes, Questions: ds.questionCount(),
		Scored: r.scored, Skipped: r.skipped, Parse: ds.notes,
		K: cfg.K, PoolK: cfg.PoolK, Ks: recallKs, Budgets: budgets, Tokenizer: "cl100k_base",
		Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH,
		DurationS: time.Since(start).Seconds(),
	}
	info.Former = formerInfo(cfg.Former)
	return info
}

func (r *runner) newLevels() map[string]*levelAcc {
	m := map[string]*levelAcc{}
	for _, l := range r.levels {
		m[l] = newLevelAcc()
	}
	return m
}

// namespace is where one haystack lives; its user is the haystack's id
// made opaque.
func (r *runner) namespace(h *haystack) engram.Namespace {
	return engram.Namespace{Org: "eval", Project: r.cfg.Bench, User: opaque(h.id)}
}

// ingest stores the haystack's turns, each session in the namespace's
// session of its opaque name (as a chat client files its conversations), in
// batches of at most engram.MaxBatch turns of one session (one turn with
// TurnAtATime), and returns the turn index of every stored episode id.
func (r *runner) ingest(ctx context.Context, ns engram.Namespace, h *haystack) (map[string]int, error) {
	byEpisode := make(map[string]int, len(h.turns))
	batch := engram.MaxBatch
	if r.cfg.TurnAtATime {
		batch = 1
	}
	start := time.Now()
	for lo := 0; lo < len(h.turns); {
		hi := lo + 1
		for hi < len(h.turns) && hi-lo < batch && h.turns[hi].session == h.turns[lo].session {
			hi++
		}
		in := make([]engram.EpisodeInput, 0, hi-lo)
		for i := lo; i < hi; i++ {
			t := &h.turns[i]
			at := t.at
			in = append(in, engram.EpisodeInput{Role: t.role, Speaker: t.speaker, Content: t.content, OccurredAt: &at, Metadata: t.metadata})
		}
		sns := ns
		sns.Session = opaque(h.turns[lo].session)
		res, err := r.svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: sns, Episodes: in})
		if err != nil {
			return nil, fmt.Errorf("ingest turns %d..%d: %w", lo, hi-1, err)
		}
		if len(res.Episodes) != len(in) {
			return nil, fmt.Errorf("ingest turns %d..%d: the engine returned %d episodes for %d", lo, hi-1, len(res.Episodes), len(in))
		}
		for i, e := range res.Episodes {
			byEpisode[e.ID] = lo + i
		}
		lo = hi
	}
	r.ingestTime += time.Since(start)
	r.episodes += len(h.turns)
	return byEpisode, nil
}

// probe asks each channel-restricted system one question with Explain
// (not counted as reads) and marks it unavailable when the engine refuses
// the channel or answers from other channels, so a missing channel is
// reported, not silently replaced.
func (r *runner) probe(ctx context.Context, ns engram.Namespace, q string, now time.Time) {
	for _, s := range r.systems {
		if s.channels == nil {
			continue
		}
		res, err := r.svc.Search(engram.WithoutAccess(ctx), engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: q, K: 5, Explain: true, Channels: s.channels, Now: &now})
		if err != nil {
			s.unavailable = engram.ErrorMessage(err)
			continue
		}
		for _, h := range res.Hits {
			for _, c := range h.Explain {
				if !slices.Contains(s.channels, c.Channel) {
					s.unavailable = fmt.Sprintf("the engine ignored channels %v: a hit came from channel %q", s.channels, c.Channel)
				}
			}
		}
	}
	r.probed = true
}

// haystack ingests one haystack and asks all of its questions.
func (r *runner) haystack(ctx context.Context, h *haystack) error {
	ns := r.namespace(h)
	if r.bar != nil {
		r.bar.Describe(fmt.Sprintf("%s %s: ingest", r.cfg.Bench, h.id))
	}
	byEpisode, err := r.ingest(ctx, ns, h)
	if err != nil {
		return err
	}
	if !r.probed && len(h.questions) > 0 {
		r.probe(ctx, ns, h.questions[0].text, h.now(h.questions[0]))
	}
	if len(h.questions) > 0 {
		// The first search after an ingest pays for cold caches; without
		// this untimed one it would land on whichever system goes first.
		// A client would not make it, so its hits are not counted as reads.
		now := h.now(h.questions[0])
		if _, err := r.svc.Search(engram.WithoutAccess(ctx), engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: h.questions[0].text, K: r.cfg.PoolK, Now: &now}); err != nil {
			return fmt.Errorf("warm-up search: %w", err)
		}
	}
	if r.bar != nil {
		r.bar.Describe(fmt.Sprintf("%s %s: search", r.cfg.Bench, h.id))
	}
	defer r.tok.forget()

	textOf := make(map[string]string, len(h.turns))
	sessionOf := make(map[string]string, len(h.turns))
	for _, t := range h.turns {
		textOf[t.key] = t.content
		sessionOf[t.key] = t.session
	}
	hc := &hayCtx{h: h, byEpisode: byEpisode, textOf: textOf, sessionOf: sessionOf}
	if r.full != nil {
		hc.fullPieces = make([]piece, len(h.turns))
		for i, t := range h.turns {
			text := render(t.at, name(t.speaker, t.role), t.content)
			hc.fullPieces[i] = piece{text: text, tokens: r.tok.count(text), turns: []string{t.key}}
			hc.fullTokens += hc.fullPieces[i].cost()
		}
	}

	for _, q := range h.questions {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.question(ctx, ns, hc, q); err != nil {
			return fmt.Errorf("question %s: %w", q.id, err)
		}
		if r.bar != nil {
			_ = r.bar.Add(1)
		}
	}
	return nil
}

// report assembles the retrieval part of the report.
func (r *runner) report() *Report {
	rep := &Report{Bench: r.cfg.Bench, Systems: map[string]*SystemReport{}, Questions: r.questions}
	ingestRate := 0.0
	if r.ingestTime > 0 {
		ingestRate = float64(r.episodes) / r.ingestTime.Seconds()
	}
	for _, s := range r.systems {
		sr := &SystemReport{}
		rep.Systems[s.name] = sr
		if s.unavailable != "" {
			sr.Unavailable = s.unavailable
			continue
		}
		sr.levels(s.levels)
		sr.LatencyMS = latencyOf(s.latency)
		sr.PoolLatencyMS = latencyOf(s.poolLatency)
		rate := ingestRate
		sr.IngestPerS = &rate
	}
	if r.full != nil {
		sr := &SystemReport{Note: "no search: the whole history, in order, is the context; at a budget it keeps the most recent turns that fit"}
		sr.levels(r.full)
		rep.Systems[SystemFull] = sr
	}
	return rep
}

func latencyOf(ms []float64) *Latency {
	return &Latency{P50: percentile(ms, 0.50), P95: percentile(ms, 0.95), P99: percentile(ms, 0.99), N: len(ms)}
}

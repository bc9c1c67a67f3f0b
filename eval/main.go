package eval

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

const usage = `usage: engram eval locomo|longmemeval --data FILE [--out DIR] [--limit N | --only RANGE]
                   [--data-dir DIR] [--systems engram,bm25,dense,full] [--turn-at-a-time]
                   [--graph pagerank|spread] [--wordnet [--wordnet-weight W]]
                   [--former rules|llm] [--mode oneshot|agentic [--agent K=V,...]]
                   [--llm-url URL --llm-model MODEL [--llm-key KEY] [--llm-systems engram]]

Ingests a benchmark (JSON or gzip-compressed JSON as distributed) into a
fresh engine, asks every question of each system and reports retrieval
recall, token cost, latency and ingest throughput. With --out it writes
report.json, report.md, questions.jsonl and SVG plots to DIR.

--mode agentic runs every search as an agentic one (see engram search).
--agent sets the rules' weights (engine.AgentConfig) for it, e.g.
"entity=0.5,relation=0.3,limit=3,neighbour=0.5,from=3,steps=2,mingain=0.02"
(keys: parts, anchors, from, neighbour, cue, cuelimit, entity, relation,
limit, steps, mingain, window).

--limit N keeps the first N haystacks (LoCoMo conversations, LongMemEval
questions). --only RANGE keeps the haystacks at the given 0-based indexes
of the file, e.g. "5-9", "0,2,4" or "0-3,10", to report on a held-out part.

Every search passes the question's date as its "now" (SearchRequest.Now);
where the benchmark gives none (LoCoMo) it passes the time of the
haystack's latest turn, and the report says which. Session names and
haystack ids reach the engine only as opaque hashes.
`

// Command runs `engram eval`. The zero value uses DefaultEngine.
type Command struct {
	// NewEngine opens the engine under test; nil means DefaultEngine.
	NewEngine EngineFactory
	// NewEngineWith opens the engine under test with its options changed
	// by tune (--graph); nil means the default engine so changed.
	NewEngineWith func(tune func(*engine.Options)) EngineFactory
}

// Main runs `engram eval` with the default engine; see Command.Main.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Command{}.Main(ctx, args, stdout, stderr)
}

// Main parses args (the words after "eval"), runs the evaluation with a
// progress bar on stderr, prints the summary table on stdout and returns
// the exit code: 0 on success, 2 for bad usage, 1 when the run fails.
func (c Command) Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	f := newMainFlags(fs)
	if len(args) == 0 {
		fs.Usage()
		return 2
	}
	f.cfg.Bench = args[0]
	if strings.HasPrefix(f.cfg.Bench, "-") {
		if err := fs.Parse(args); err != nil {
			return parseExit(err)
		}
		fmt.Fprintln(stderr, "engram eval: name the benchmark first: locomo or longmemeval")
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "engram eval: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg, err := c.config(f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "engram eval: %v\n", err)
		return 2
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "engram eval: %v\n", err)
		if engram.ErrorCode(err) == engram.EINVALID {
			return 2
		}
		return 1
	}
	fmt.Fprint(stdout, rep.Summary())
	if cfg.Out != "" {
		fmt.Fprintf(stdout, "\nreport written to %s\n", cfg.Out)
	}
	return 0
}

// mainFlags are the flags of engram eval, as parsed.
type mainFlags struct {
	cfg         Config
	systems     string
	llm         LLMConfig
	llmSystems  string
	quiet       bool
	only        string
	graph       string
	graphWeight float64
	former      string
	agent       string
	wn          WordNetConfig
	sensitive   string
}

// newMainFlags defines the flags of engram eval on fs.
func newMainFlags(fs *flag.FlagSet) *mainFlags {
	f := &mainFlags{wn: DefaultWordNet}
	cfg, llm, wn := &f.cfg, &f.llm, &f.wn
	fs.StringVar(&cfg.Data, "data", "", "benchmark file (.json or .json.gz)")
	fs.StringVar(&cfg.Out, "out", "", "directory for report.json, report.md, questions.jsonl and plots")
	fs.IntVar(&cfg.Limit, "limit", 0, "first N LoCoMo conversations or LongMemEval questions (0: all)")
	fs.StringVar(&f.only, "only", "", `haystacks to keep by 0-based index, e.g. "5-9" or "0,2,4"`)
	fs.StringVar(&cfg.DataDir, "data-dir", "", "where the run's temporary engine directory is made (default: the temp directory)")
	fs.StringVar(&f.systems, "systems", strings.Join(AllSystems, ","), "systems to run, comma-separated")
	fs.IntVar(&cfg.K, "k", 20, "depth of the ranked search (at least 20)")
	fs.IntVar(&cfg.PoolK, "pool-k", engram.MaxK, "depth of the search that fills token budgets")
	fs.StringVar(&llm.URL, "llm-url", "", "OpenAI-compatible endpoint for answering and judging (optional)")
	fs.StringVar(&llm.Key, "llm-key", "", "API key of the LLM endpoint")
	fs.StringVar(&llm.Model, "llm-model", "", "model of the LLM endpoint")
	fs.StringVar(&f.llmSystems, "llm-systems", SystemEngram, "systems whose contexts the LLM answers from, comma-separated")
	fs.IntVar(&llm.Budget, "llm-budget", 2000, "context tokens given to the LLM")
	fs.StringVar(&f.former, "former", "rules", "how memories are formed: rules, or llm (the --llm-* endpoint, else ENGRAM_LLM_URL, ENGRAM_LLM_MODEL, ENGRAM_LLM_KEY)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&cfg.Mode, "mode", "", "search mode: oneshot (default) or agentic")
	fs.StringVar(&f.graph, "graph", "", "add the entity-graph channel to the default engine: pagerank or spread (default: off)")
	fs.Float64Var(&f.graphWeight, "graph-weight", retrieval.DefaultConfig().Weights[retrieval.ChannelGraph], "the graph channel's weight in fusion")
	fs.StringVar(&f.agent, "agent", "", "the agentic rules' weights, K=V,... (see above)")
	fs.BoolVar(&wn.On, "wordnet", false, "add the WordNet query-expansion channel to the default engine (database in $ENGRAM_WORDNET_DIR or the default directory)")
	fs.Float64Var(&wn.Weight, "wordnet-weight", DefaultWordNet.Weight, "the WordNet channel's weight in fusion")
	fs.IntVar(&wn.Limits.Hyponyms, "wordnet-hyponyms", DefaultWordNet.Limits.Hyponyms, "levels of more specific words the WordNet channel adds")
	fs.IntVar(&wn.Limits.Hypernyms, "wordnet-hypernyms", DefaultWordNet.Limits.Hypernyms, "levels of more general words the WordNet channel adds")
	fs.IntVar(&wn.Limits.Senses, "wordnet-senses", DefaultWordNet.Limits.Senses, "senses of each word the WordNet channel follows")
	fs.IntVar(&wn.Limits.Broad, "wordnet-broad", DefaultWordNet.Limits.Broad, "the most more specific senses a sense may have and still be followed down (0: no limit)")
	fs.IntVar(&wn.Limits.Max, "wordnet-max", DefaultWordNet.Limits.Max, "the most related words the WordNet channel adds for one word (0: no limit)")
	fs.BoolVar(&wn.WithQuery, "wordnet-with-query", false, "the WordNet channel searches the related words together with the query's own")
	fs.StringVar(&f.sensitive, "sensitive", "", "the engine's policy for secrets and personal data, as engram serve's --sensitive; off: no detection (default: the server's default)")
	fs.BoolVar(&cfg.TurnAtATime, "turn-at-a-time", false, "add each turn in its own call, as a chat client does (default: a session per call)")
	return f
}

// config checks the parsed flags and makes the run's configuration; an
// error is a usage error.
func (c Command) config(f *mainFlags, stderr io.Writer) (Config, error) {
	cfg := f.cfg
	if err := f.check(); err != nil {
		return cfg, err
	}
	if f.only != "" {
		idx, err := parseRange(f.only)
		if err != nil {
			return cfg, fmt.Errorf("--only: %v", err)
		}
		cfg.Only = idx
	}
	cfg.Systems = splitList(f.systems)
	if f.llm.URL != "" || f.llm.Model != "" {
		llm := f.llm
		llm.Systems = splitList(f.llmSystems)
		cfg.LLM = &llm
	}
	if !f.quiet {
		cfg.Progress = stderr
	}
	newEngine, err := c.engine(f)
	if err != nil {
		return cfg, err
	}
	cfg.NewEngine = newEngine
	if cfg.Former, err = f.newFormer(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// check refuses an unknown benchmark or search mode and a missing --data.
func (f *mainFlags) check() error {
	switch cfg := &f.cfg; {
	case cfg.Bench != BenchLoCoMo && cfg.Bench != BenchLongMemEval:
		return fmt.Errorf("benchmark %q is not one of locomo, longmemeval", cfg.Bench)
	case cfg.Data == "":
		return errors.New("--data FILE is required")
	case cfg.Mode != "" && cfg.Mode != engram.ModeOneShot && cfg.Mode != engram.ModeAgentic:
		return fmt.Errorf("--mode %q is not one of oneshot, agentic", cfg.Mode)
	}
	return nil
}

// engine is the factory of the engine under test: c's, changed by the
// tunings of --graph, --agent, --wordnet and --sensitive when any is
// given.
func (c Command) engine(f *mainFlags) (EngineFactory, error) {
	var tunes []func(*engine.Options)
	if f.graph != "" {
		walk, ok := retrieval.GraphWalk(f.graph)
		if !ok {
			return nil, fmt.Errorf("--graph %q is not one of pagerank, spread", f.graph)
		}
		tunes = append(tunes, GraphTune(walk, f.graphWeight))
	}
	if f.agent != "" {
		t, err := AgentTune(f.agent)
		if err != nil {
			return nil, fmt.Errorf("--agent: %v", err)
		}
		tunes = append(tunes, t)
	}
	if f.wn.On {
		tunes = append(tunes, WordNetTune(f.wn))
	}
	if f.sensitive != "" {
		t, err := engine.SensitiveTune(f.sensitive)
		if err != nil {
			return nil, fmt.Errorf("--sensitive: %v", engram.ErrorMessage(err))
		}
		tunes = append(tunes, t)
	}
	if len(tunes) == 0 {
		return c.NewEngine, nil
	}
	tune := func(o *engine.Options) {
		for _, t := range tunes {
			t(o)
		}
	}
	if c.NewEngineWith != nil {
		return c.NewEngineWith(tune), nil
	}
	return GraphEngine(tune), nil
}

// newFormer is the former of --former: nil for the rules, else the LLM
// former of the --llm-* endpoint or the environment.
func (f *mainFlags) newFormer() (engram.Former, error) {
	switch f.former {
	case "rules":
		return nil, nil
	case "llm":
		ff, err := NewLLMFormer(envOr(f.llm.URL, "ENGRAM_LLM_URL"), envOr(f.llm.Key, "ENGRAM_LLM_KEY"), envOr(f.llm.Model, "ENGRAM_LLM_MODEL"))
		if err != nil {
			return nil, errors.New(engram.ErrorMessage(err))
		}
		return ff, nil
	default:
		return nil, fmt.Errorf("--former %q is not one of rules, llm", f.former)
	}
}

// envOr returns v, or the environment variable key when v is empty.
func envOr(v, key string) string {
	if v != "" {
		return v
	}
	return os.Getenv(key)
}

func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// maxOnly bounds one range of --only, far above any benchmark's size, so a
// typo like "0-99999999" fails instead of allocating.
const maxOnly = 100_000

// parseRange reads a list of indexes and inclusive ranges, "0,2,4" or
// "5-9" or "0-3,10", into ascending indexes without repeats.
func parseRange(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not an index or a range like 5-9", part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
			if err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range like 5-9", part)
			}
			if b-a >= maxOnly {
				return nil, fmt.Errorf("%q spans more than %d haystacks", part, maxOnly)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

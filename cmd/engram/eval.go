package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/eval"
)

var evalCommand = &Command{
	Name:     "eval",
	Synopsis: "measure retrieval on LoCoMo or LongMemEval",
	Usage: `
Usage: engram eval locomo|longmemeval --data FILE [--out DIR] [--limit N] [flags]

Ingests the benchmark (the JSON as distributed, plain or gzip) into fresh
namespaces through the public API, runs every question through engram's
retrieval and the BM25-only, dense-only and full-history baselines, and
reports recall@k, all@k, NDCG@10, MRR, recall within token budgets, context
tokens, search latency and ingest throughput. With --out DIR it writes
report.json, report.md and SVG plots. The embedder flags (--embedder, ...)
choose the embedder as for serve; embeddings are cached across runs.`,
	Run: runEval,
}

func runEval(ctx context.Context, m *Main, cmd *Command, args []string) error {
	var ef embedFlags
	ef.register(flag.NewFlagSet("eval", flag.ContinueOnError), m.Getenv) // environment only: eval parses its own flags
	with := func(tune func(*engine.Options)) eval.EngineFactory {
		return func(ctx context.Context, dir string) (engram.Service, func() error, error) {
			logger := slog.New(slog.DiscardHandler)
			eng, closeFn, err := openEngineAt(ctx, dir, "", eval.DefaultCacheDir(), &ef, logger, tune, eval.Freeze)
			if err != nil {
				return nil, nil, err
			}
			return eng, closeFn, nil
		}
	}
	c := eval.Command{NewEngine: with(func(*engine.Options) {}), NewEngineWith: with}
	if code := c.Main(ctx, args, m.Stdout, m.Stderr); code != 0 {
		return exitCode(code)
	}
	return nil
}

package eval_test

import (
	"context"
	"log/slog"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/eval"
	"github.com/engramhq/engram/storeopen"
)

// countingEngine counts the successful searches and access flushes Run makes of an
// engine a factory returned as it is, as the CLI's factory does.
type countingEngine struct {
	*engine.Engine
	searches, flushes *atomic.Int64
}

func (c countingEngine) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	res, err := c.Engine.Search(ctx, req)
	if err == nil {
		c.searches.Add(1) // a failed one (a system the engine lacks) records no reads
	}
	return res, err
}

func (c countingEngine) FlushAccess(ctx context.Context) error {
	c.flushes.Add(1)
	return c.Engine.FlushAccess(ctx)
}

// timedEngine is a factory of engines whose reads a timer flushes every
// few milliseconds, unless freeze is set, counting into searches and
// flushes.
func timedEngine(freeze bool, searches, flushes *atomic.Int64) eval.EngineFactory {
	return func(ctx context.Context, dir string) (engram.Service, func() error, error) {
		opts := engine.Options{Logger: slog.New(slog.DiscardHandler), AccessFlush: 3 * time.Millisecond}
		if freeze {
			eval.Freeze(&opts)
		}
		e, err := storeopen.Engine(ctx, dir, opts)
		if err != nil {
			return nil, nil, err
		}
		return countingEngine{e, searches, flushes}, e.Close, nil
	}
}

// TestRunFlushesAfterEverySearch checks that Run writes the reads of
// every search before the next, for an engine its factory did not wrap.
func TestRunFlushesAfterEverySearch(t *testing.T) {
	var searches, flushes atomic.Int64
	run(t, eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, NewEngine: timedEngine(true, &searches, &flushes)})
	if searches.Load() == 0 || flushes.Load() != searches.Load() {
		t.Errorf("%d searches, %d access flushes; want one flush per search", searches.Load(), flushes.Load())
	}
}

// TestRunReproducible checks that two runs of one engine on one data set
// rank every question the same, even with a background flush timer that
// fires within the runs.
func TestRunReproducible(t *testing.T) {
	var searches, flushes atomic.Int64
	rankings := func() map[string]map[string][][]string {
		rep := run(t, eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, NewEngine: timedEngine(false, &searches, &flushes)})
		out := map[string]map[string][][]string{}
		for _, q := range rep.Questions {
			out[q.ID] = map[string][][]string{}
			for sys, qs := range q.Systems {
				out[q.ID][sys] = qs.Ranked
			}
		}
		return out
	}
	a, b := rankings(), rankings()
	if len(a) == 0 {
		t.Fatal("no questions")
	}
	for id, sys := range a {
		for name, ranked := range sys {
			if !reflect.DeepEqual(ranked, b[id][name]) {
				t.Errorf("question %s, system %s: rankings differ between runs:\n%v\n%v", id, name, ranked, b[id][name])
			}
		}
	}
}

// TestSystemsDoNotShareReads checks that the ablations' searches do not
// count as reads: engram ranks every question the same whether or not
// other systems are asked beside it, and each ablation ranks the same
// alone with engram as beside the others.
func TestSystemsDoNotShareReads(t *testing.T) {
	for _, bench := range []string{eval.BenchLoCoMo, eval.BenchLongMemEval} {
		data := map[string]string{eval.BenchLoCoMo: locomoMini, eval.BenchLongMemEval: lmeMini}[bench]
		all := rankings(run(t, eval.Config{Bench: bench, Data: data, Systems: eval.AllSystems}), eval.AllSystems)
		alone := rankings(run(t, eval.Config{Bench: bench, Data: data, Systems: []string{eval.SystemEngram}}), eval.AllSystems)
		pair := rankings(run(t, eval.Config{Bench: bench, Data: data, Systems: []string{eval.SystemDense, eval.SystemEngram}}), eval.AllSystems)
		if len(all) == 0 {
			t.Fatalf("%s: no questions", bench)
		}
		for id, m := range all {
			if !reflect.DeepEqual(m[eval.SystemEngram], alone[id][eval.SystemEngram]) {
				t.Errorf("%s %s: engram ranks differently with the ablations beside it:\n%v\n%v", bench, id, m[eval.SystemEngram], alone[id][eval.SystemEngram])
			}
			if !reflect.DeepEqual(m[eval.SystemDense], pair[id][eval.SystemDense]) {
				t.Errorf("%s %s: dense ranks differently with bm25 beside it", bench, id)
			}
		}
	}
}

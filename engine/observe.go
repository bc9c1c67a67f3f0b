package engine

import (
	"context"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Observer is told what the engine does, for metrics and operation logs
// (package metrics implements it for engram serve). Its methods run on the
// engine's paths, after the fact, and must return quickly; what they are
// given never holds memory content, queries or keys.
type Observer interface {
	// MemoryOps is told of the memory operations of one write once its
	// transaction has ended: err is nil when it committed, else the
	// write's error (nothing of it was kept).
	MemoryOps(ctx context.Context, ops []OpRecord, err error)
	// SearchStage is told how long one stage of a search took (the
	// Stage* constants).
	SearchStage(stage string, d time.Duration)
	// SearchChannel is told how long one retrieval channel took to gather
	// its candidates.
	SearchChannel(channel string, d time.Duration)
	// Job is told of a background job of kind reaching state (the
	// JobState* constants).
	Job(kind engram.JobKind, state string)
	// Embed is told of one call to the embedder: how many texts, how long
	// it took and its error.
	Embed(texts int, d time.Duration, err error)
}

// Stages of a search an Observer is told of.
const (
	StageAnalyze  = "analyze"  // the query read: names, dates, language
	StageGather   = "gather"   // the channels' candidates, in one read transaction
	StageFuse     = "fuse"     // rankings fused
	StageRerank   = "rerank"   // reranked and spread
	StageAssemble = "assemble" // cut to k or assembled within the budget
	StageAgentic  = "agentic"  // a whole agentic search, its steps included
)

// States of a background job an Observer is told of.
const (
	JobStateQueued   = "queued"   // enqueued by an add
	JobStateDone     = "done"     // ran and completed
	JobStateRetrying = "retrying" // failed a run and waits to run again
	JobStateDeferred = "deferred" // put off: its model is held off
	JobStateFailed   = "failed"   // failed for good
	JobStateLost     = "lost"     // taken over by another worker
)

// Triggers of a memory operation: what caused it.
const (
	TriggerAPI    = "api"    // a client's request changing a memory itself
	TriggerFormer = "former" // formation of the episodes a request added
	TriggerJob    = "job"    // a background job (formation, embedding)
	TriggerImport = "import" // an import
)

// OpRecord is one memory operation as an Observer sees it. Namespace
// says whose memory it is, for logs; it never becomes a metric label.
type OpRecord struct {
	Namespace engram.Namespace
	MemoryID  string    // the memory written; "" for NOOP
	TargetID  string    // the memory an UPDATE, MERGE, SUPERSEDE, DELETE or CONFLICT names
	Op        engram.Op // ADD, UPDATE, SUPERSEDE, DELETE, MERGE, CONFLICT, NOOP, RESTORE
	Trigger   string    // one of the Trigger* constants
	// Former is the kind of former that decided the operation: "rules",
	// "llm" or "other"; "" when a client asked for it.
	Former string
}

// FormerKind returns the bounded name of the former an actor is: "rules",
// "llm", "other" for another former, "" for an actor that is no former.
func FormerKind(actor string) string {
	rest, ok := strings.CutPrefix(actor, "former:")
	switch {
	case !ok:
		return ""
	case rest == "rules":
		return "rules"
	case rest == "llm" || strings.HasPrefix(rest, "llm:"):
		return "llm"
	}
	return "other"
}

// nopObserver is the Observer of an engine given none.
type nopObserver struct{}

func (nopObserver) MemoryOps(context.Context, []OpRecord, error) {}
func (nopObserver) SearchStage(string, time.Duration)            {}
func (nopObserver) SearchChannel(string, time.Duration)          {}
func (nopObserver) Job(engram.JobKind, string)                   {}
func (nopObserver) Embed(int, time.Duration, error)              {}

// opTrail collects the memory operations of one write, to report them
// once its transaction's outcome is known.
type opTrail struct {
	trigger string
	recs    []OpRecord
}

type trailKey struct{}

// withTrail returns ctx carrying a new trail of trigger, and the trail;
// ctx unchanged and nil when the engine observes nothing.
func (e *core) withTrail(ctx context.Context, trigger string) (context.Context, *opTrail) {
	if !e.observed {
		return ctx, nil
	}
	t := &opTrail{trigger: trigger}
	return context.WithValue(ctx, trailKey{}, t), t
}

// note adds the operation op of actor on memory id (target: the memory
// it names) in ns to the trail of ctx, if it carries one.
func note(ctx context.Context, ns engram.Namespace, op engram.Op, id, target, actor string) {
	t, _ := ctx.Value(trailKey{}).(*opTrail)
	if t == nil {
		return
	}
	if op == "" {
		op = engram.OpNoop
	}
	t.recs = append(t.recs, OpRecord{Namespace: ns, MemoryID: id, TargetID: target, Op: op, Trigger: t.trigger, Former: FormerKind(actor)})
}

// report tells the observer of a trail's operations and the outcome err of
// their write. A nil trail or one without operations reports nothing.
func (e *core) report(ctx context.Context, t *opTrail, err error) {
	if t == nil || len(t.recs) == 0 {
		return
	}
	e.obs.MemoryOps(ctx, t.recs, err)
}

// since tells the observer how long a stage took since start.
func (e *core) stageDone(stage string, start time.Time) {
	if e.observed {
		e.obs.SearchStage(stage, time.Since(start))
	}
}

// noteOp notes an operation of the decision model and the memories ms it
// wrote: the one written (the successor of a SUPERSEDE, the new side of a
// CONFLICT) and the one it names.
func noteOp(ctx context.Context, ns engram.Namespace, op engram.MemoryOp, ms []engram.Memory, actor string) {
	id, target := "", op.TargetID
	switch {
	case len(ms) == 1:
		id = ms[0].ID
	case len(ms) == 2:
		id, target = ms[1].ID, ms[0].ID
	}
	note(ctx, ns, op.Op, id, target, actor)
}

// reportOne tells the observer of one operation a client asked for on the
// memory id, and its outcome err.
func (e *core) reportOne(ctx context.Context, ns engram.Namespace, op engram.Op, id string, err error) {
	if e.observed {
		e.obs.MemoryOps(ctx, []OpRecord{{Namespace: ns, MemoryID: id, TargetID: id, Op: op, Trigger: TriggerAPI}}, err)
	}
}

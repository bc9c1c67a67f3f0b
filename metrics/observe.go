package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// ObserveRequest implements http.RequestObserver.
func (m *Metrics) ObserveRequest(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestTime.WithLabelValues(route, method).Observe(d.Seconds())
}

// MemoryOps implements engine.Observer: it counts the operations and logs
// one line for each, with the request id of ctx when there is one, the
// namespace, the memory's id, the operation, its trigger and former, and
// the result. It never logs content.
func (m *Metrics) MemoryOps(ctx context.Context, ops []engine.OpRecord, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	for _, op := range ops {
		former := op.Former
		if former == "" {
			former = "none"
		}
		m.memoryOps.WithLabelValues(string(op.Op), former, op.Trigger, result).Inc()
		m.logOp(ctx, op, former, err)
	}
}

// logOp writes the log line of one memory operation.
func (m *Metrics) logOp(ctx context.Context, op engine.OpRecord, former string, err error) {
	if m.log == nil || !m.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	if id := engram.RequestIDFrom(ctx); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	n := op.Namespace
	attrs = append(attrs, slog.String("org", n.Org), slog.String("project", n.Project))
	for _, f := range [...][2]string{{"user", n.User}, {"agent", n.Agent}, {"session", n.Session}, {"memory_id", op.MemoryID}} {
		if f[1] != "" {
			attrs = append(attrs, slog.String(f[0], f[1]))
		}
	}
	if op.TargetID != "" && op.TargetID != op.MemoryID {
		attrs = append(attrs, slog.String("target_id", op.TargetID))
	}
	attrs = append(attrs, slog.String("operation", string(op.Op)), slog.String("trigger", op.Trigger), slog.String("former", former))
	if err != nil {
		attrs = append(attrs, slog.String("result", "failed"), slog.String("code", engram.ErrorCode(err)))
	} else {
		attrs = append(attrs, slog.String("result", "ok"))
	}
	m.log.LogAttrs(ctx, slog.LevelInfo, "memory operation", attrs...)
}

// SearchStage implements engine.Observer.
func (m *Metrics) SearchStage(stage string, d time.Duration) {
	m.stageTime.get(stage).Observe(d.Seconds())
}

// SearchChannel implements engine.Observer.
func (m *Metrics) SearchChannel(channel string, d time.Duration) {
	m.channelTime.get(channel).Observe(d.Seconds())
}

// observers keeps the histogram of each value of a histogram vector's one
// label, so that a search, which observes ten of them, does not hash its
// labels each time. Its values are bounded as the label's are.
type observers struct {
	vec *prometheus.HistogramVec
	m   sync.Map // label value -> prometheus.Observer
}

func (o *observers) get(label string) prometheus.Observer {
	if h, ok := o.m.Load(label); ok {
		return h.(prometheus.Observer)
	}
	h, _ := o.m.LoadOrStore(label, o.vec.WithLabelValues(label))
	return h.(prometheus.Observer)
}

// Job implements engine.Observer.
func (m *Metrics) Job(kind engram.JobKind, state string) {
	m.jobs.WithLabelValues(string(kind), state).Inc()
}

// Embed implements engine.Observer.
func (m *Metrics) Embed(texts int, d time.Duration, err error) {
	m.embedCalls.WithLabelValues(resultOf(err)).Inc()
	m.embedTexts.Add(float64(texts))
	m.embedTime.Observe(d.Seconds())
}

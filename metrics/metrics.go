package metrics

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
)

// Buckets of the latency histograms, in seconds.
var (
	requestBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	stageBuckets   = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}
	modelBuckets   = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// Metrics holds engram's collectors in a registry of its own, with the Go
// runtime's and the process's. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger // the operation log; nil logs nothing

	requests     *prometheus.CounterVec
	requestTime  *prometheus.HistogramVec
	memoryOps    *prometheus.CounterVec
	stageTime    *observers
	channelTime  *observers
	jobs         *prometheus.CounterVec
	embedCalls   *prometheus.CounterVec
	embedTexts   prometheus.Counter
	embedTime    prometheus.Histogram
	modelCalls   *prometheus.CounterVec
	modelTime    *prometheus.HistogramVec
	modelRetries *prometheus.CounterVec
}

var (
	_ engine.Observer            = (*Metrics)(nil)
	_ engramhttp.RequestObserver = (*Metrics)(nil)
)

// New returns a Metrics whose operation log goes to log at level info (nil:
// no operation log).
func New(log *slog.Logger) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	m.requests = m.counterVec("engram_http_requests_total", "HTTP requests answered, by route pattern, method and status.", "route", "method", "status")
	m.requestTime = m.histogramVec("engram_http_request_duration_seconds", "Time to answer an HTTP request, by route pattern and method.", requestBuckets, "route", "method")
	m.memoryOps = m.counterVec("engram_memory_operations_total", "Memory operations, by operation, former (rules, llm, other, none), trigger (api, former, job, import) and result (ok, failed).", "op", "former", "trigger", "result")
	m.stageTime = &observers{vec: m.histogramVec("engram_search_stage_duration_seconds", "Time of one stage of a search (analyze, gather, fuse, rerank, assemble, agentic).", stageBuckets, "stage")}
	m.channelTime = &observers{vec: m.histogramVec("engram_search_channel_duration_seconds", "Time one retrieval channel took to gather its candidates.", stageBuckets, "channel")}
	m.jobs = m.counterVec("engram_jobs_total", "Background jobs reaching a state (queued, done, retrying, deferred, failed, lost), by kind.", "kind", "state")
	m.embedCalls = m.counterVec("engram_embedder_calls_total", "Calls to the embedder, by result (ok or an error code).", "result")
	m.embedTexts = prometheus.NewCounter(prometheus.CounterOpts{Name: "engram_embedder_texts_total", Help: "Texts given to the embedder."})
	m.embedTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "engram_embedder_call_duration_seconds", Help: "Time of one call to the embedder.", Buckets: stageBuckets})
	m.modelCalls = m.counterVec("engram_llm_calls_total", "Calls to an OpenAI-compatible model server (chat, embeddings, transcriptions), by endpoint and result (ok or an error code).", "endpoint", "result")
	m.modelTime = m.histogramVec("engram_llm_call_duration_seconds", "Time of one call to a model server, its retries included, by endpoint.", modelBuckets, "endpoint")
	m.modelRetries = m.counterVec("engram_llm_retries_total", "Attempts at a model server that were retried, by endpoint.", "endpoint")
	m.reg.MustRegister(m.embedTexts, m.embedTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	m.reg.MustRegister(c)
	return c
}

func (m *Metrics) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	m.reg.MustRegister(h)
	return h
}

// Handler serves the metrics in Prometheus' text format (or OpenMetrics
// when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the registry the metrics are in, for more collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// resultOf is the result label of an error: "ok", or its engram code when
// it is one of the known codes, else "internal".
func resultOf(err error) string {
	if err == nil {
		return "ok"
	}
	switch c := engram.ErrorCode(err); c {
	case engram.ECONFLICT, engram.EINVALID, engram.ENOTFOUND, engram.ETOOLARGE, engram.EUNAVAILABLE,
		engram.EMISMATCH, engram.EUNAUTHORIZED, engram.EFORBIDDEN, engram.EMEDIATYPE, engram.ETOOMANY:
		return c
	}
	return engram.EINTERNAL
}

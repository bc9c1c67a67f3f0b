package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
)

var _ openai.CallObserver = (*Metrics)(nil)

// ObserveCall implements openai.CallObserver: a call to a model server at
// endpoint ("chat/completions", "embeddings", "audio/transcriptions").
func (m *Metrics) ObserveCall(endpoint string, attempts int, d time.Duration, err error) {
	m.modelCalls.WithLabelValues(endpoint, resultOf(err)).Inc()
	m.modelTime.WithLabelValues(endpoint).Observe(d.Seconds())
	if attempts > 1 {
		m.modelRetries.WithLabelValues(endpoint).Add(float64(attempts - 1))
	}
}

// breakerStates are the states a circuit breaker reports, each a series of
// engram_llm_breaker_state.
var breakerStates = []string{"closed", "open", "half-open"}

// WatchBreaker adds engram_llm_breaker_state{state}, 1 for the state b is
// in at each scrape and 0 for the others, and
// engram_llm_breaker_failures, its failures in a row. Call it once.
func (m *Metrics) WatchBreaker(b engram.BreakerReporter) {
	for _, st := range breakerStates {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "engram_llm_breaker_state",
			Help:        "1 for the state the LLM former's circuit breaker is in (closed, open, half-open), 0 for the others.",
			ConstLabels: prometheus.Labels{"state": st},
		}, func() float64 {
			if b.BreakerStatus().State == st {
				return 1
			}
			return 0
		}))
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "engram_llm_breaker_failures",
		Help: "Failed calls in a row the LLM former's circuit breaker has counted.",
	}, func() float64 { return float64(b.BreakerStatus().Failures) }))
}

package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engramhq/engram"
)

// BacklogFunc reads the job backlog (engine.Engine.JobBacklog); it may
// return nil and no error when there is nothing to read yet (a database
// not reached).
type BacklogFunc func(ctx context.Context) ([]engram.JobBacklog, error)

// backlogTimeout bounds one read of the backlog at a scrape.
const backlogTimeout = 5 * time.Second

// backlog collects, at each scrape, the unfinished jobs by kind and state
// and the age of the oldest pending (queued or retrying) job of each kind.
type backlog struct {
	read      BacklogFunc
	now       func() time.Time
	open, age *prometheus.Desc
	failures  prometheus.Counter
}

// WatchBacklog adds engram_jobs_open{kind,state} and
// engram_job_oldest_pending_age_seconds{kind}, read with read at each
// scrape; a read that fails counts in engram_job_backlog_read_errors_total
// and leaves both out of that scrape. Call it once.
func (m *Metrics) WatchBacklog(read BacklogFunc) {
	b := &backlog{
		read: read, now: time.Now,
		open: prometheus.NewDesc("engram_jobs_open", "Unfinished background jobs of every tenant, by kind and state (queued, retrying, running).", []string{"kind", "state"}, nil),
		age:  prometheus.NewDesc("engram_job_oldest_pending_age_seconds", "Age of the oldest queued or retrying background job of a kind; 0 when none waits.", []string{"kind"}, nil),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "engram_job_backlog_read_errors_total",
			Help: "Scrapes that could not read the job backlog from the store."}),
	}
	m.reg.MustRegister(b, b.failures)
}

// Describe implements prometheus.Collector.
func (b *backlog) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.open
	ch <- b.age
}

// Collect implements prometheus.Collector: every kind and state is
// reported, 0 when it has no job, so the series stay the same.
func (b *backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	rows, err := b.read(ctx)
	if err != nil {
		b.failures.Inc()
		return
	}
	now := b.now()
	for _, kind := range []engram.JobKind{engram.JobForm, engram.JobEmbed} {
		var oldest time.Time
		for _, state := range []engram.JobState{engram.JobQueued, engram.JobRetrying, engram.JobRunning} {
			n := 0
			for _, r := range rows {
				if r.Kind != kind || r.State != state {
					continue
				}
				n += r.Count
				if state != engram.JobRunning && (oldest.IsZero() || r.Oldest.Before(oldest)) {
					oldest = r.Oldest
				}
			}
			ch <- prometheus.MustNewConstMetric(b.open, prometheus.GaugeValue, float64(n), string(kind), string(state))
		}
		age := 0.0
		if !oldest.IsZero() {
			age = max(now.Sub(oldest).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(b.age, prometheus.GaugeValue, age, string(kind))
	}
}

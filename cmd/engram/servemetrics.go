package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/metrics"
)

// telemetryFlags choose the format of the server's log and where its
// metrics are served besides GET /metrics on the API's address.
type telemetryFlags struct {
	logFormat, metricsAddr *string
}

func (f *telemetryFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.logFormat = fs.String("log-format", envOr(getenv, "ENGRAM_LOG_FORMAT", "text"),
		"log `format`: text (key=value lines) or json (one JSON object a line) (env ENGRAM_LOG_FORMAT)")
	f.metricsAddr = fs.String("metrics-addr", getenv("ENGRAM_METRICS_ADDR"),
		"also serve GET /metrics, without an API key, on this `HOST:PORT` (keep it off the public network); /metrics on --addr needs an admin key where keys are required (env ENGRAM_METRICS_ADDR)")
}

// check refuses a format that is neither text nor json, and a metrics
// address that is not HOST:PORT.
func (f *telemetryFlags) check(cmd *Command) error {
	if *f.logFormat != "text" && *f.logFormat != "json" {
		return cmdUsageErrorf(cmd, "--log-format (env ENGRAM_LOG_FORMAT) %q is not one of text, json", *f.logFormat)
	}
	if a := *f.metricsAddr; a != "" {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return cmdUsageErrorf(cmd, "--metrics-addr (env ENGRAM_METRICS_ADDR) %q is not HOST:PORT like 127.0.0.1:9090", a)
		}
	}
	return nil
}

// logger returns the server's logger writing to w at level in the format
// of the flags.
func (f *telemetryFlags) logger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if *f.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// instrument makes the server's metrics and hooks them into r: the HTTP
// server's request observer, GET /metrics (role admin where keys are
// required), the engine's observer, the model clients' call observer and
// the LLM former's breaker. Call it before the models are connected.
func (f *serveCommandFlags) instrument(r *serveRun, logger *slog.Logger) *metrics.Metrics {
	m := metrics.New(logger)
	r.opts.Observer = m
	r.opts.Mounts = append(r.opts.Mounts, engramhttp.Mount{Pattern: "GET /metrics", Handler: m.Handler(), Role: engram.RoleAdmin})
	f.lf.observer, f.ef.observer = m, m
	return m
}

// observeEngine makes r's engines report to m, and m read the LLM
// former's breaker and the serving engine's job backlog; call it after the
// models are connected.
func (f *serveCommandFlags) observeEngine(r *serveRun, m *metrics.Metrics) {
	tune := r.tune
	r.tune = func(o *engine.Options) {
		tune(o)
		o.Observer = m
	}
	if f.lf.breaker != nil {
		m.WatchBreaker(f.lf.breaker)
	}
	m.WatchBacklog(func(ctx context.Context) ([]engram.JobBacklog, error) {
		if eng := r.engine.Load(); eng != nil {
			return eng.JobBacklog(ctx)
		}
		return nil, nil // no database reached yet
	})
}

// serveMetrics serves m at GET /metrics on addr until ctx ends; "" serves
// nothing. It fails when addr cannot be listened on.
func serveMetrics(ctx context.Context, addr string, m *metrics.Metrics, logger *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener failed", "err", err)
		}
	}()
	logger.Info("serving metrics on http://" + ln.Addr().String() + "/metrics")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}

package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// servePprof serves Go's profiler at addr (loopback only, on its own
// listener, apart from the API and its keys) when addr is not empty. It is
// for measuring the server under load (ENGRAM_PPROF, undocumented in the
// usage on purpose); a failure to listen is logged and ignored.
func servePprof(addr string, logger *slog.Logger) {
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		logger.Warn("ENGRAM_PPROF must be a loopback HOST:PORT; profiler off", "addr", addr)
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Warn("profiler off", "addr", addr, "err", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	logger.Info("profiler on http://" + ln.Addr().String() + "/debug/pprof/")
	go func() { _ = http.Serve(ln, mux) }()
}

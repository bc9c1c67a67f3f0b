package http

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// RequestIDHeader carries a request's id: a client may send one, and every
// answer returns the id the request was logged under.
const RequestIDHeader = "X-Request-ID"

// MaxRequestIDBytes is the longest request id a client may send; a longer
// one, or one with other characters than printable ASCII, is replaced by
// a new id.
const MaxRequestIDBytes = 128

// RequestObserver is told of every request a Server answers, for metrics.
// route is the pattern of the route or mount it matched without its method
// ("/v1/memories/{id}", never the path asked for), "unmatched" when none
// did; method is one of the standard methods or "OTHER".
type RequestObserver interface {
	ObserveRequest(route, method string, status int, d time.Duration)
}

// requestInfo is what the request log learns of a request while it is
// served: its id and the tenant it names.
type requestInfo struct {
	id     string
	tenant engram.Namespace // org and project only
}

type requestInfoKey struct{}

// requestIDOf returns the request id r brings in RequestIDHeader when it
// is sane (1 to MaxRequestIDBytes printable ASCII characters), else a new
// random one.
func requestIDOf(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); id != "" && len(id) <= MaxRequestIDBytes && printableASCII(id) {
		return id
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// noteTenant records the org and project of n as the tenant of the request
// ctx serves, unless one is recorded already.
func noteTenant(ctx context.Context, n engram.Namespace) {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	if info != nil && info.tenant.Org == "" && n.Org != "" {
		info.tenant = engram.Namespace{Org: n.Org, Project: n.Project}
	}
}

// noteBodyTenant records the tenant of a decoded request body: the first
// namespace or scope among the fields of the struct v points to.
func noteBodyTenant(ctx context.Context, v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return
	}
	rv = rv.Elem()
	for i := range rv.NumField() {
		switch f := rv.Field(i).Interface().(type) {
		case engram.Namespace:
			noteTenant(ctx, f)
			return
		case engram.Scope:
			noteTenant(ctx, f.Namespace())
			return
		}
	}
}

// routeOf returns the route label of a mux pattern: the pattern without
// its method, "unmatched" for none.
func routeOf(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

// methodOf returns the method label of r: a standard method or "OTHER".
func methodOf(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return r.Method
	}
	return "OTHER"
}

// logRequest writes the request's log line and tells the observer: its id,
// route, method, status, duration and tenant. The path's ids, the query,
// the body and the Authorization header are never logged.
func (s *Server) logRequest(r *http.Request, info *requestInfo, pattern string, status int, d time.Duration) {
	route, method := routeOf(pattern), methodOf(r)
	if status == 0 {
		status = http.StatusOK // the handler wrote nothing: net/http answers 200
	}
	if s.observer != nil {
		s.observer.ObserveRequest(route, method, status, d)
	}
	if !s.logger.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{
		slog.String("request_id", info.id), slog.String("route", route), slog.String("method", method),
		slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	}
	if info.tenant.Org != "" {
		attrs = append(attrs, slog.String("org", info.tenant.Org), slog.String("project", info.tenant.Project))
	}
	s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

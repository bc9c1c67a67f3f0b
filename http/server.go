package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// Default limits of a Server.
const (
	DefaultMaxBodyBytes    = 8 << 20
	DefaultMaxImportBytes  = 256 << 20
	DefaultShutdownTimeout = 10 * time.Second
	DefaultMaxEmbedBytes   = 1 << 20

	// Connection timeouts. A request's headers must arrive within
	// DefaultReadHeaderTimeout and its body within DefaultReadTimeout of
	// the start; the answer must be written within DefaultWriteTimeout of
	// the end of the headers (export extends it for every piece it
	// writes); an idle keep-alive connection is closed after
	// DefaultIdleTimeout.
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultWriteTimeout      = 5 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
)

// ActorHeader names the request header that attributes writes to an actor
// in history and the audit log. Without it writes are attributed to
// DefaultActor.
const (
	ActorHeader  = "X-Engram-Actor"
	DefaultActor = "api"
)

// ServerOptions configure a Server. The zero value is usable.
type ServerOptions struct {
	// Ready reports whether the service can serve; GET /readyz answers 503
	// with its error's message when it fails. Nil means always ready.
	Ready func(ctx context.Context) error
	// Logger receives internal errors and a debug line per request;
	// slog.Default() when nil.
	Logger *slog.Logger
	// MaxBodyBytes bounds JSON request bodies; DefaultMaxBodyBytes when 0.
	MaxBodyBytes int64
	// MaxImportBytes bounds the NDJSON body of POST /v1/import;
	// DefaultMaxImportBytes when 0.
	MaxImportBytes int64
	// MaxImportRecords bounds the records of one POST /v1/import, which are
	// held in memory until they are stored together;
	// DefaultMaxImportRecords when 0. More is ETOOLARGE (413), and so is
	// one record longer than MaxBodyBytes.
	MaxImportRecords int
	// MaxEmbedBytes bounds the text one request may ask to embed: the
	// contents of the episodes or values of the memories it adds, or the
	// inputs of POST /v1/embeddings. More is ETOOLARGE (413), so that a body
	// of MaxBodyBytes cannot ask for a hundred 64 KiB embeddings.
	// DefaultMaxEmbedBytes when 0.
	MaxEmbedBytes int64
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// after its context is cancelled; DefaultShutdownTimeout when 0.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// the connections Serve accepts, as the fields of http.Server do; the
	// Default* constants when 0. A body that does not arrive in time is an
	// EINVALID answer, or a closed connection. GET /v1/export extends the
	// write deadline by WriteTimeout for every piece it writes, so a long
	// export finishes while a client that stops reading is cut off.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Embedder backs POST /v1/embeddings, which serves it in the shape of
	// OpenAI's embeddings API. Without one that route answers 503.
	Embedder engram.Embedder
	// AllowedHosts are Host header values accepted besides the address
	// Serve listens on and localhost, 127.0.0.1 and [::1] at its port: "name"
	// at any port, "name:port" at one, "*" any host. Requests naming another
	// host (a DNS rebinding attack, or a name the operator did not list) get
	// 403, except GET /healthz and /readyz, which probes reach by address.
	AllowedHosts []string
	// AllowedOrigins are the browser origins ("https://app.example.com")
	// that may call the API and get CORS headers; "*" allows every origin.
	// A request with any other Origin header gets 403.
	AllowedOrigins []string
	// Keys turns authentication on: every request but GET /healthz and
	// /readyz must carry one of its API keys, whose role and binding limit
	// what the request may do (see the Security section of the README), and
	// /v1/keys manages them. Nil serves without authentication, which the
	// engram command allows only on a loopback address.
	Keys engram.KeyService
	// RateLimit is the requests a second each client may send, with bursts
	// of RateBurst (RateLimit rounded up when 0); MaxConcurrent is the
	// requests each client may have in flight. A client is an API key, or
	// the remote IP address without authentication (behind a proxy, every
	// client shares the proxy's). More gets 429 (ETOOMANY) with
	// Retry-After. GET /healthz and /readyz are not limited. 0 turns a
	// limit off; the engram command defaults to DefaultRateLimit,
	// DefaultRateBurst and DefaultMaxConcurrent.
	RateLimit     float64
	RateBurst     int
	MaxConcurrent int
	// TLS, when set, makes Serve speak HTTPS with its certificates; a
	// client speaking plain HTTP to it gets 400. Nil serves plain HTTP.
	TLS *tls.Config
	// Mounts are handlers served beside the REST API, such as the MCP
	// endpoint or a compatibility API. NewServer panics when two share a
	// pattern or one clashes with a route.
	Mounts []Mount
	// MaxResourceBytes is the largest body of an upload to POST
	// /v1/resources; default DefaultMaxResourceBytes. A tenant's quota is
	// the service's (engine.Options.ResourceQuota).
	MaxResourceBytes int64
	// Observer, when set, is told of every request answered (see
	// RequestObserver); Logger gets one line per request at level info
	// either way (see requestlog.go).
	Observer RequestObserver
}

// Mount is a handler served by a Server under a ServeMux pattern ("/mcp",
// "/mem0/", "POST /v1/chat/completions"). A request to it gets the checks
// every request gets first: the Host and Origin checks, the API key, the
// client's limits, the key's role against Role, the X-Engram-Actor header
// (put in the context with engram.WithActor) and the body limit
// (ServerOptions.MaxBodyBytes unless MaxBody is set). A failed check is
// answered in the REST API's error shape before Handler runs. Handler finds
// the request's key with KeyFrom and must keep every namespace it reads or
// writes inside the key's binding (CheckBinding).
type Mount struct {
	Pattern string
	Handler http.Handler
	// Role is the least role of the key; "" means read for GET and write
	// for the other methods. A handler serving both reads and writes on
	// one method sets RoleRead and checks writes itself with APIKey.Allows.
	Role    string
	MaxBody int64
	// Static marks a handler of static files that hold no data (the
	// dashboard's pages): its GET and HEAD requests are served without an
	// API key, so a browser can load the sign-in page. Never set it on a
	// handler that reads the store.
	Static bool
}

// Default limits per client of the engram command; see ServerOptions.RateLimit.
const (
	DefaultRateLimit     = 50
	DefaultRateBurst     = 100
	DefaultMaxConcurrent = 16
)

// Server serves the engram REST API over a Backend. It implements
// http.Handler; Serve and ListenAndServe run it on a listener.
type Server struct {
	svc             Backend
	ready           func(ctx context.Context) error
	logger          *slog.Logger
	maxBody         int64
	maxImport       int64
	maxRecords      int
	maxEmbed        int64
	maxResource     int64
	shutdownTimeout time.Duration
	timeouts        [4]time.Duration // read header, read, write, idle
	embedder        engram.Embedder
	allowedHosts    []string
	allowedOrigins  []string
	keys            engram.KeyService
	limiter         *limiter    // nil: no limits
	tls             *tls.Config // nil: plain HTTP
	observer        RequestObserver

	mux    *http.ServeMux
	routes []route
	static map[string]bool // patterns of Static mounts
}

// route is one endpoint. The table of routes is data so that tests can
// check it against the OpenAPI document.
type route struct {
	method  string
	path    string
	params  []param
	maxBody int64    // 0: the server's MaxBodyBytes
	body    []string // media types the body may have; nil: no body is read
	handle  func(w http.ResponseWriter, r *http.Request, q query) error
	// role is the least role of an API key that may call the route; ""
	// means read for GET and write for the other methods.
	role string
}

// Media types request bodies may have. A JSON route refuses every other
// type, text/plain in particular: that is what a cross-origin form or
// fetch can send without asking the browser's permission first.
var (
	jsonBody   = []string{"application/json"}
	ndjsonBody = []string{NDJSONType, "application/json"}
	// multipartBody is an upload's: a form with a file part.
	multipartBody = []string{"multipart/form-data"}
)

// NewServer returns a Server serving svc.
func NewServer(svc Backend, opts ServerOptions) *Server {
	s := &Server{
		svc:             svc,
		ready:           opts.Ready,
		logger:          opts.Logger,
		maxBody:         opts.MaxBodyBytes,
		maxImport:       opts.MaxImportBytes,
		maxRecords:      opts.MaxImportRecords,
		maxEmbed:        opts.MaxEmbedBytes,
		maxResource:     opts.MaxResourceBytes,
		shutdownTimeout: opts.ShutdownTimeout,
		embedder:        opts.Embedder,
		allowedHosts:    opts.AllowedHosts,
		allowedOrigins:  opts.AllowedOrigins,
		keys:            opts.Keys,
		tls:             opts.TLS,
		observer:        opts.Observer,
		limiter:         newLimiter(opts.RateLimit, opts.RateBurst, opts.MaxConcurrent),
		mux:             http.NewServeMux(),
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.maxImport <= 0 {
		s.maxImport = DefaultMaxImportBytes
	}
	if s.maxRecords <= 0 {
		s.maxRecords = DefaultMaxImportRecords
	}
	if s.maxEmbed <= 0 {
		s.maxEmbed = DefaultMaxEmbedBytes
	}
	if s.maxResource <= 0 {
		s.maxResource = DefaultMaxResourceBytes
	}
	if s.shutdownTimeout <= 0 {
		s.shutdownTimeout = DefaultShutdownTimeout
	}
	s.timeouts = [4]time.Duration{opts.ReadHeaderTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.IdleTimeout}
	for i, d := range [4]time.Duration{DefaultReadHeaderTimeout, DefaultReadTimeout, DefaultWriteTimeout, DefaultIdleTimeout} {
		if s.timeouts[i] <= 0 {
			s.timeouts[i] = d
		}
	}
	s.routes = s.routeTable()
	for i, rt := range s.routes {
		if rt.role == "" {
			rt.role = engram.RoleWrite
			if rt.method == http.MethodGet {
				rt.role = engram.RoleRead
			}
			s.routes[i].role = rt.role
		}
		s.mux.Handle(rt.method+" "+rt.path, s.endpoint(rt))
	}
	s.static = make(map[string]bool)
	for _, m := range opts.Mounts {
		s.mux.Handle(m.Pattern, s.mounted(m))
		s.static[m.Pattern] = m.Static
	}
	return s
}

// mounted wraps a Mount's handler with the checks endpoint gives a route.
func (s *Server) mounted(m Mount) http.Handler {
	limit := m.MaxBody
	if limit <= 0 {
		limit = s.maxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := route{method: r.Method, path: r.URL.Path, role: m.Role}
		if rt.role == "" {
			rt.role = engram.RoleWrite
			if r.Method == http.MethodGet {
				rt.role = engram.RoleRead
			}
		}
		if err := authorize(r, rt); err != nil {
			s.writeError(w, r, err)
			return
		}
		actor, err := actorOf(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r = r.WithContext(engram.WithActor(r.Context(), actor))
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		m.Handler.ServeHTTP(w, r)
	})
}

// Query parameters shared by many endpoints.
var (
	scopeParams = []param{
		{name: "org"}, {name: "project"}, {name: "user"}, {name: "agent"}, {name: "session"}, {name: "include_shared"},
	}
	pageParams = []param{{name: "limit"}, {name: "cursor"}}
)

func withScope(ps ...param) []param {
	return append(append([]param(nil), scopeParams...), ps...)
}

// routeTable lists every route, in the order the OpenAPI document shows
// them: each capability's group contributes its own.
func (s *Server) routeTable() []route {
	rec, media, graph := &recordRoutes{s}, &mediaRoutes{s}, &graphRoutes{s}
	return slices.Concat(s.probeRoutes(), rec.routes(), s.scopeRoutes(), media.resourceRoutes(),
		s.embeddingRoutes(), graph.routes(), media.identityRoutes(), s.keyRoutes())
}

// probeRoutes are the liveness and readiness probes and the OpenAPI
// document.
func (s *Server) probeRoutes() []route {
	return []route{
		{method: "GET", path: "/healthz", handle: s.handleHealth},
		{method: "GET", path: "/readyz", handle: s.handleReady},
		{method: "GET", path: "/v1/openapi.json", handle: s.handleOpenAPI},
	}
}

// scopeRoutes search, read profiles and conflicts, and work on a whole
// scope: purge, export, import, audit, the scopes of a tenant.
func (s *Server) scopeRoutes() []route {
	auditList := withScope(append([]param{
		{name: "op", repeated: true}, {name: "after"}, {name: "before"},
	}, pageParams...)...)

	return []route{
		{method: "POST", path: "/v1/search", body: jsonBody, role: engram.RoleRead, handle: s.handleSearch},
		{method: "GET", path: "/v1/profile", params: withScope(), handle: s.handleProfile},

		{method: "GET", path: "/v1/conflicts", params: withScope(), handle: s.handleListConflicts},
		{method: "POST", path: "/v1/conflicts/{id}/resolve", params: withScope(), body: jsonBody, handle: s.handleResolveConflict},

		{method: "DELETE", path: "/v1/scope", params: withScope(), role: engram.RoleAdmin, handle: s.handleDeleteScope},
		{method: "GET", path: "/v1/export", params: withScope(vaultParam), handle: s.handleExport},
		{method: "POST", path: "/v1/import", params: withScope(), maxBody: s.maxImport, body: ndjsonBody, handle: s.handleImport},
		{method: "GET", path: "/v1/audit", params: auditList, handle: s.handleAudit},
		{method: "GET", path: "/v1/scopes", params: scopesParams, handle: s.handleScopes},
	}
}

// embeddingRoutes serve the OpenAI-compatible embeddings.
func (s *Server) embeddingRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/embeddings", body: jsonBody, role: engram.RoleRead, handle: s.handleEmbeddings},
	}
}

// keyRoutes manage API keys (admin only).
func (s *Server) keyRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/keys", body: jsonBody, role: engram.RoleAdmin, handle: s.handleCreateKey},
		{method: "GET", path: "/v1/keys", params: keyParams, role: engram.RoleAdmin, handle: s.handleListKeys},
		{method: "DELETE", path: "/v1/keys/{id}", params: keyParams, role: engram.RoleAdmin, handle: s.handleRevokeKey},
	}
}

// endpoint wraps a route's handler with the checks every request gets
// (the key's role, query parameters, actor, body size) and error writing.
func (s *Server) endpoint(rt route) http.Handler {
	limit := rt.maxBody
	if limit == 0 {
		limit = s.maxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := authorize(r, rt); err != nil {
			s.writeError(w, r, err)
			return
		}
		q, err := parseQuery(r.URL.RawQuery, rt.params)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		q.key = keyFrom(r.Context())
		noteTenant(r.Context(), engram.Namespace{Org: q.str("org"), Project: q.str("project")})
		if r, err = withVault(r, q); err != nil {
			s.writeError(w, r, err)
			return
		}
		actor, err := actorOf(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := checkContentType(r, rt.body); err != nil {
			s.writeError(w, r, err)
			return
		}
		r = r.WithContext(engram.WithActor(r.Context(), actor))
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := rt.handle(w, r, q); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// checkContentType returns an EMEDIATYPE error naming the Content-Type
// header when a route that reads a body gets one of another media type, or
// a body without the header. A charset other than UTF-8 is refused too.
// Routes that read no body accept anything.
func checkContentType(r *http.Request, accepted []string) error {
	if accepted == nil {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		if r.ContentLength == 0 {
			return nil // no body: the handler says whether it needs one
		}
		return engram.Errorf(engram.EMEDIATYPE, "the request has a body but no Content-Type header; send the body as %s", accepted[0])
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return engram.Errorf(engram.EMEDIATYPE, "header Content-Type %q is malformed; send the body as %s", ct, accepted[0])
	}
	if !slices.Contains(accepted, mt) {
		return engram.Errorf(engram.EMEDIATYPE, "header Content-Type is %q; %s %s reads %s", mt, r.Method, r.URL.Path, strings.Join(accepted, " or "))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return engram.Errorf(engram.EMEDIATYPE, "header Content-Type names charset %q; bodies must be UTF-8", cs)
	}
	return nil
}

// checkEmbedBytes returns an ETOOLARGE error naming the limit when the
// texts of one request, which the service will embed, are more than
// MaxEmbedBytes together.
func (s *Server) checkEmbedBytes(what string, texts []string) error {
	var n int64
	for _, t := range texts {
		n += int64(len(t))
	}
	if n > s.maxEmbed {
		return engram.Errorf(engram.ETOOLARGE, "request body: the %s to embed total %d bytes, more than the limit of %d bytes per request (engram serve --max-embed-bytes); send them in smaller batches", what, n, s.maxEmbed)
	}
	return nil
}

// MaxActorBytes is the longest actor name the X-Engram-Actor header may carry.
const MaxActorBytes = engram.MaxNameLen

func actorOf(r *http.Request) (string, error) {
	vals := r.Header.Values(ActorHeader)
	if len(vals) == 0 || vals[0] == "" {
		return DefaultActor, nil
	}
	if len(vals) > 1 {
		return "", engram.Errorf(engram.EINVALID, "header %s is given %d times; it takes one value", ActorHeader, len(vals))
	}
	a := vals[0]
	if len(a) > MaxActorBytes {
		return "", engram.Errorf(engram.EINVALID, "header %s is %d bytes, longer than the limit of %d", ActorHeader, len(a), MaxActorBytes)
	}
	if !utf8.ValidString(a) {
		return "", engram.Errorf(engram.EINVALID, "header %s is not valid UTF-8", ActorHeader)
	}
	for _, c := range a {
		if c < 0x20 || c == 0x7f {
			return "", engram.Errorf(engram.EINVALID, "header %s may not contain control characters", ActorHeader)
		}
	}
	return a, nil
}

// ServeHTTP implements http.Handler. Requests that match no route, or
// match a path with another method, get 404 or 405 in the error shape.
// Not knowing the address it is served on, it accepts localhost,
// 127.0.0.1 and [::1] at any port in the Host header; see
// ServerOptions.AllowedHosts.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(w, r, "") }

// serve answers one request to the server listening on bound ("" when
// unknown): the Host and Origin checks, authentication, the client's
// limits, then routing.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, bound string) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	info := &requestInfo{id: requestIDOf(r)}
	sw.Header().Set(RequestIDHeader, info.id)
	r = r.WithContext(engram.WithRequestID(context.WithValue(r.Context(), requestInfoKey{}, info), info.id))
	h, pattern := s.mux.Handler(r)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("panic serving request", "request_id", info.id, "route", routeOf(pattern), "method", methodOf(r), "panic", v)
			if !sw.wrote {
				s.writeError(sw, r, fmt.Errorf("panic: %v", v))
			}
		}
		s.logRequest(r, info, pattern, sw.status, time.Since(start))
	}()

	probe := r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
	if !probe {
		if err := s.checkHost(r, bound); err != nil {
			s.writeError(sw, r, err)
			return
		}
	}
	if done, err := s.checkOrigin(sw, r); err != nil {
		s.writeError(sw, r, err)
		return
	} else if done {
		return
	}
	if s.keys != nil && !probe && !(s.static[pattern] && readsOnly(r)) {
		ar, err := s.authenticate(r)
		if err != nil {
			s.writeError(sw, r, err)
			return
		}
		r = ar
		k := keyFrom(r.Context())
		noteTenant(r.Context(), engram.Namespace{Org: k.Org, Project: k.Project})
	}
	if s.limiter != nil && !probe {
		r = prefetchBody(sw, r, readDeadline(s.timeouts[1], start))
		id, who := limitClient(r)
		release, retryAfter, err := s.limiter.acquire(id, who, time.Now())
		if err != nil {
			sw.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			s.writeError(sw, r, err)
			return
		}
		defer release()
	}
	if pattern == "" {
		s.serveUnrouted(sw, r, h)
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// readsOnly reports whether r is a GET or HEAD request, which a Static
// mount serves without a key.
func readsOnly(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead
}

// serveUnrouted lets the mux decide between 404 and 405 (it knows which
// methods a path has) and rewrites its plain-text answer into the error
// shape, keeping the Allow header.
func (s *Server) serveUnrouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := &headerRecorder{header: make(http.Header)}
	h.ServeHTTP(rec, r)
	status := rec.status
	if status == 0 {
		status = http.StatusNotFound
	}
	if allow := rec.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	var code, msg string
	switch status {
	case http.StatusMethodNotAllowed:
		code = engram.EMETHOD
		msg = fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, rec.header.Get("Allow"))
	default:
		code = engram.ENOTFOUND
		msg = fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path)
	}
	writeJSON(w, status, errorResponse{Error: errorDetail{Code: code, Message: msg}})
}

// headerRecorder captures the status and headers of the mux's own 404 and
// 405 handlers and drops their plain-text body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}
func (h *headerRecorder) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return len(b), nil
}

// statusWriter remembers the status for the request log and whether
// anything was written, so a panic after the header is not answered twice.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ListenAndServe listens on the TCP address addr and serves until ctx is
// cancelled; see Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("http: listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves requests on ln until ctx is cancelled, then stops accepting
// connections and waits up to ShutdownTimeout for requests in flight to
// finish. With ServerOptions.TLS it speaks HTTPS. It returns nil after a
// clean shutdown, an error if serving fails or requests were still running
// at the deadline (they are cut off). Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	bound := ln.Addr().String()
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, bound) }),
		ReadHeaderTimeout: s.timeouts[0],
		ReadTimeout:       s.timeouts[1],
		WriteTimeout:      s.timeouts[2],
		IdleTimeout:       s.timeouts[3],
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	if s.tls != nil {
		srv.TLSConfig = s.tls.Clone()
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}

	select {
	case err := <-errc:
		return fmt.Errorf("http: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("http: shutdown: %w", err)
	}
	return nil
}

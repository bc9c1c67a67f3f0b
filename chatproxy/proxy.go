package chatproxy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// UserHeader names the user whose memories a request uses; it wins over the
// request body's "user" field, which OpenAI clients may fill with an id of
// their own.
const UserHeader = "X-Engram-User"

// Defaults for zero Config fields.
const (
	DefaultBudget  = 1000
	DefaultTimeout = 5 * time.Minute
	// MaxReplyBytes bounds what the proxy reads of an upstream reply, a
	// whole stream included.
	MaxReplyBytes = 16 << 20
)

// Service is what the proxy needs of engram: searching the memories it
// recalls, and adding the turns it stores (see engram.Service for how
// they fail). *engine.Engine and *http.Client implement it.
type Service interface {
	engram.SearchService
	// AddEpisodes is engram.EpisodeService's.
	AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error)
}

// Config configures a Handler.
type Config struct {
	// Service searches memories and stores turns. Required.
	Service Service
	// Upstream is the base URL of the OpenAI-compatible API requests go
	// to ("http://host:11434/v1"; a bare server root gets "/v1"). Empty:
	// every request is answered 503 with Unconfigured.
	Upstream string
	// Unconfigured is the message of that 503, naming how to set Upstream.
	Unconfigured string
	// APIKey is sent upstream as "Authorization: Bearer <key>"; empty sends
	// none. The caller's own key never goes upstream.
	APIKey string
	// Budget is the most tokens (cl100k_base) of recalled context put into
	// the system message. Default DefaultBudget.
	Budget int
	// Org and Project are the tenant of requests without an API key
	// (a server with authentication off); with a key, its binding decides.
	Org, Project string
	// Timeout bounds one request's exchange with the upstream, a stream
	// included, and, apart, the storing of its turn. Default
	// DefaultTimeout.
	Timeout time.Duration
	// HTTPClient sends upstream requests. Default: a client with dial,
	// TLS and response-header timeouts.
	HTTPClient *http.Client
	// Logger receives a warning per failed upstream call or store.
	// Default slog.Default().
	Logger *slog.Logger
	// Now is the clock recall and stored turns use. Default time.Now.
	Now func() time.Time
}

// Handler serves POST /v1/chat/completions; see the package comment.
type Handler struct {
	cfg      Config
	endpoint string // upstream chat completions URL; "" when unconfigured
}

// New returns a Handler. It returns an EINVALID error when Service is nil,
// Budget or Timeout is negative or Budget above engram.MaxBudget, or
// Upstream is not an http(s) URL with a host.
func New(cfg Config) (*Handler, error) {
	if cfg.Service == nil {
		return nil, engram.Errorf(engram.EINVALID, "chatproxy: Service is required")
	}
	if cfg.Budget < 0 || cfg.Budget > engram.MaxBudget {
		return nil, engram.Errorf(engram.EINVALID, "chatproxy: Budget %d is outside 0..%d tokens", cfg.Budget, engram.MaxBudget)
	}
	if cfg.Timeout < 0 {
		return nil, engram.Errorf(engram.EINVALID, "chatproxy: Timeout %s is negative", cfg.Timeout)
	}
	h := &Handler{cfg: cfg}
	if cfg.Upstream != "" {
		var err error
		if h.endpoint, err = Endpoint(cfg.Upstream); err != nil {
			return nil, err
		}
	}
	h.withDefaults()
	return h, nil
}

// Endpoint returns the chat completions URL of the upstream API at base
// ("http://host:11434" and "http://host:11434/v1" both give
// "http://host:11434/v1/chat/completions"), or an EINVALID error when base
// is not an http or https URL with a host and no query.
func Endpoint(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", engram.Errorf(engram.EINVALID, "upstream URL %q is not an http or https URL with a host and no query", base)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if u.Path == "" {
		u.Path = "/v1"
	}
	return u.String() + "/chat/completions", nil
}

func (h *Handler) withDefaults() {
	c := &h.cfg
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Unconfigured == "" {
		c.Unconfigured = "the memory proxy has no upstream LLM configured"
	}
	if c.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = 10 * time.Second
		t.ResponseHeaderTimeout = c.Timeout
		t.MaxIdleConnsPerHost = 16
		c.HTTPClient = &http.Client{Transport: t}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// exchange is one request on its way through the proxy.
type exchange struct {
	req   *chatRequest
	ns    engram.Namespace
	asked time.Time
}

// ServeHTTP answers one chat completion request: decode it, find the
// user, recall, forward, relay the reply and store the turn. Errors before
// the upstream answers are in the REST API's error shape; the upstream's
// own errors reach the client as it sent them.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.endpoint == "" {
		engramhttp.WriteError(w, r, engram.Errorf(engram.EUNAVAILABLE, "%s", h.cfg.Unconfigured))
		return
	}
	x, err := h.decode(r)
	if err != nil {
		engramhttp.WriteError(w, r, err)
		return
	}
	body, err := h.recall(r.Context(), x)
	if err != nil {
		engramhttp.WriteError(w, r, err)
		return
	}
	// The server's write timeout is made for quick answers; a model may
	// take minutes, and then the turn is stored.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(2*h.cfg.Timeout + time.Minute))
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	resp, err := h.forward(ctx, body, x.req.stream)
	if err != nil {
		h.cfg.Logger.Warn("chatproxy: upstream call failed", "err", err)
		writeUpstreamFailure(w, ctx, err)
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 != 2:
		passError(w, resp)
	case isEventStream(resp.Header.Get("Content-Type")):
		h.relayStream(w, ctx, resp, x)
	default:
		h.relayJSON(w, r, resp, x)
	}
}

// decode reads and checks the request and finds its namespace. Errors
// are EMEDIATYPE, ETOOLARGE, EINVALID (naming the field) or EFORBIDDEN.
func (h *Handler) decode(r *http.Request) (*exchange, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return nil, engram.Errorf(engram.EMEDIATYPE, "Content-Type must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if tooLong := (*http.MaxBytesError)(nil); errors.As(err, &tooLong) {
			return nil, engram.Errorf(engram.ETOOLARGE, "request body is longer than the limit of %d bytes", tooLong.Limit)
		}
		return nil, engram.Errorf(engram.EINVALID, "read request body: %v", err)
	}
	req, err := parseRequest(body)
	if err != nil {
		return nil, err
	}
	ns, err := h.namespace(r, req.user)
	if err != nil {
		return nil, err
	}
	return &exchange{req: req, ns: ns, asked: h.cfg.Now()}, nil
}

// namespace is the namespace whose memories the request uses: the tenant
// of the API key (Config.Org and Project without one) and the user of
// UserHeader, else of the body's user field, else of the key's binding.
// It returns EINVALID when no user is named or the name is not valid, and
// EFORBIDDEN when the user is outside the key's binding.
func (h *Handler) namespace(r *http.Request, bodyUser string) (engram.Namespace, error) {
	key := engramhttp.KeyFrom(r.Context())
	user, field := r.Header.Get(UserHeader), "header "+UserHeader
	if user == "" {
		user, field = bodyUser, "user"
	}
	ns := engram.Namespace{Org: h.cfg.Org, Project: h.cfg.Project, User: user}
	if key != nil {
		ns.Org, ns.Project = key.Org, key.Project
		if ns.User == "" {
			ns.User = key.User
		}
	}
	if ns.User == "" {
		return ns, engram.Errorf(engram.EINVALID, "user is required: name whose memories to use in the request's user field or the header %s", UserHeader)
	}
	ns = ns.Normalize()
	if err := ns.Validate(); err != nil {
		return ns, engram.Errorf(engram.EINVALID, "%s: %s", field, engram.ErrorMessage(err))
	}
	return ns, engramhttp.CheckBinding(key, ns)
}

// recall searches the user's memories with the last user message and
// returns the body to send upstream: the request with the assembled
// context in its system message, or unchanged when nothing was found.
func (h *Handler) recall(ctx context.Context, x *exchange) ([]byte, error) {
	now := x.asked
	res, err := h.cfg.Service.Search(ctx, engram.SearchRequest{
		Scope: engram.ScopeOf(x.ns), Query: x.req.query(), Budget: h.cfg.Budget, Now: &now,
	})
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(res.Context) == "" {
		return x.req.body, nil
	}
	return x.req.withMemories(memoryBlock(res.Context))
}

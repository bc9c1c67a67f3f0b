package openai

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Defaults used for zero Config fields.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultBatchSize  = 64
	DefaultTimeout    = 60 * time.Second
	DefaultMaxRetries = 4
	DefaultRetryBase  = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// Config configures an Embedder or a Chat. Zero fields take the defaults
// above.
type Config struct {
	// BaseURL is the server's root or API prefix: "http://host:11434" and
	// "http://host:11434/v1" are equivalent. Default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; when empty (Ollama,
	// a local vLLM) no Authorization header is sent.
	APIKey string
	// Model is the model name sent with every request. Required.
	Model string
	// Dimensions, when positive, asks the server for vectors of this length
	// (models that support shortening, e.g. text-embedding-3-*) and becomes
	// part of the Embedder's Name. When zero the length is learnt from the
	// first response. Embedder only.
	Dimensions int
	// BatchSize is the most texts sent in one embeddings request. Default 64.
	BatchSize int
	// Timeout bounds each HTTP attempt, not the whole call with its
	// retries; bound that with the context. Default 60s.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried. Zero means
	// DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// RetryBase is the first backoff; it doubles per retry up to MaxBackoff,
	// and each wait is jittered down by up to half. Default 500ms.
	RetryBase time.Duration
	// MaxBackoff caps a backoff, and is the longest Retry-After the client
	// will honour: a server asking for a longer wait fails the call at once.
	// Default 30s.
	MaxBackoff time.Duration
	// HTTPClient sends the requests. Default: a client of its own with a
	// clone of http.DefaultTransport. Its Timeout, if any, also applies.
	HTTPClient *http.Client
	// Logger receives a warning per retried attempt. Default slog.Default().
	Logger *slog.Logger
	// Observer, when set, is told of every call once it ends, for metrics.
	Observer CallObserver
}

// CallObserver is told of each call a client makes: the API path without
// its leading slash ("chat/completions", "embeddings",
// "audio/transcriptions"), the attempts it took, its time with the
// retries, and its error (nil when it succeeded). It must return quickly.
type CallObserver interface {
	ObserveCall(endpoint string, attempts int, d time.Duration, err error)
}

// withDefaults validates cfg and fills zero fields. It returns an EINVALID
// error naming the first bad field.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Model == "" {
		return cfg, engram.Errorf(engram.EINVALID, "openai: Model is required")
	}
	if cfg.Dimensions < 0 {
		return cfg, engram.Errorf(engram.EINVALID, "openai: Dimensions %d is negative", cfg.Dimensions)
	}
	if cfg.BatchSize < 0 {
		return cfg, engram.Errorf(engram.EINVALID, "openai: BatchSize %d is negative", cfg.BatchSize)
	}
	if cfg.Timeout < 0 || cfg.RetryBase < 0 || cfg.MaxBackoff < 0 {
		return cfg, engram.Errorf(engram.EINVALID, "openai: Timeout, RetryBase and MaxBackoff may not be negative")
	}
	base, err := normalizeBaseURL(cfg.BaseURL)
	if err != nil {
		return cfg, err
	}
	cfg.BaseURL = base
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Concurrent embedders share one host; the default of 2 idle
		// connections would make most requests dial anew.
		t.MaxIdleConnsPerHost = 16
		cfg.HTTPClient = &http.Client{Transport: t}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}

// normalizeBaseURL returns the API prefix without a trailing slash, adding
// "/v1" to a bare server root.
func normalizeBaseURL(raw string) (string, error) {
	if raw == "" {
		return DefaultBaseURL, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", engram.Errorf(engram.EINVALID, "openai: BaseURL %q is not an http or https URL with a host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", engram.Errorf(engram.EINVALID, "openai: BaseURL %q may not have a query or fragment", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if u.Path == "" {
		u.Path = "/v1"
	}
	return u.String(), nil
}

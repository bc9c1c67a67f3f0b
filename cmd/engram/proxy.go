package main

import (
	"flag"
	"log/slog"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/chatproxy"
	engramhttp "github.com/engramhq/engram/http"
)

// proxyFlags configure the memory proxy for OpenAI clients that engram
// serve mounts at POST /v1/chat/completions. Its upstream is separate from
// --llm-url because setting that also turns on LLM formation; it defaults
// to it, so one LLM can serve both.
type proxyFlags struct {
	url, key, org, project, timeout string
	budget                          int64
}

func (p *proxyFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&p.url, "proxy-url", getenv("ENGRAM_PROXY_URL"),
		"base `URL` of the OpenAI-compatible LLM that POST /v1/chat/completions forwards to, with memories; default --llm-url; unset: the route answers 503 (env ENGRAM_PROXY_URL)")
	fs.StringVar(&p.key, "proxy-key", getenv("ENGRAM_PROXY_KEY"),
		"API `key` of --proxy-url (--llm-key when the two URLs are the same); prefer the env ENGRAM_PROXY_KEY, which no process listing shows")
	fs.Int64Var(&p.budget, "proxy-budget", envInt64(getenv, "ENGRAM_PROXY_BUDGET", chatproxy.DefaultBudget),
		"most `tokens` of recalled memories the proxy puts into the system message (env ENGRAM_PROXY_BUDGET)")
	fs.StringVar(&p.timeout, "proxy-timeout", envOr(getenv, "ENGRAM_PROXY_TIMEOUT", chatproxy.DefaultTimeout.String()),
		"time one proxied request may take upstream, a streamed reply included (`duration`, env ENGRAM_PROXY_TIMEOUT)")
	fs.StringVar(&p.org, "proxy-org", envOr(getenv, "ENGRAM_ORG", "default"),
		"organisation of proxied requests under --no-auth; with API keys the key's binding decides (env ENGRAM_ORG)")
	fs.StringVar(&p.project, "proxy-project", envOr(getenv, "ENGRAM_PROJECT", "default"),
		"project of proxied requests under --no-auth (env ENGRAM_PROJECT)")
}

// config checks the flags and returns the proxy's configuration without
// its service; a bad value is a usage error naming the flag.
func (p *proxyFlags) config(cmd *Command, lf *llmFlags, logger *slog.Logger) (chatproxy.Config, error) {
	cfg := chatproxy.Config{
		Upstream: p.url, APIKey: p.key, Budget: int(p.budget), Org: p.org, Project: p.project, Logger: logger,
		Unconfigured: "the memory proxy has no upstream LLM: start engram serve with --proxy-url (env ENGRAM_PROXY_URL) or --llm-url",
	}
	if cfg.Upstream == "" {
		cfg.Upstream = lf.url
	}
	if cfg.APIKey == "" && cfg.Upstream == lf.url {
		cfg.APIKey = lf.key // never sent to a host other than the one it is for
	}
	if cfg.Upstream != "" {
		if _, err := chatproxy.Endpoint(cfg.Upstream); err != nil {
			return cfg, cmdUsageErrorf(cmd, "--proxy-url (env ENGRAM_PROXY_URL, default --llm-url): %s", engram.ErrorMessage(err))
		}
	}
	if p.budget < 1 || p.budget > engram.MaxBudget {
		return cfg, cmdUsageErrorf(cmd, "--proxy-budget (env ENGRAM_PROXY_BUDGET) must be a number of tokens from 1 to %d", engram.MaxBudget)
	}
	d, err := time.ParseDuration(p.timeout)
	if err != nil || d <= 0 {
		return cfg, cmdUsageErrorf(cmd, "--proxy-timeout (env ENGRAM_PROXY_TIMEOUT) %q is not a positive duration like 5m", p.timeout)
	}
	cfg.Timeout = d
	if err := (engram.Namespace{Org: p.org, Project: p.project}).Validate(); err != nil {
		return cfg, cmdUsageErrorf(cmd, "--proxy-org, --proxy-project: %s", engram.ErrorMessage(err))
	}
	return cfg, nil
}

// proxyMounts returns a function giving the proxy's mount over a service;
// write keys may call it.
func proxyMounts(cfg chatproxy.Config) func(engram.Service) ([]engramhttp.Mount, error) {
	return func(svc engram.Service) ([]engramhttp.Mount, error) {
		cfg.Service = svc
		h, err := chatproxy.New(cfg)
		if err != nil {
			return nil, err
		}
		return []engramhttp.Mount{{Pattern: "POST /v1/chat/completions", Handler: h, Role: engram.RoleWrite}}, nil
	}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/vault"

	engramhttp "github.com/engramhq/engram/http"
)

var serveCommand = &Command{
	Name:     "serve",
	Synopsis: "serve the HTTP API over a data directory or PostgreSQL",
	Usage: `
Usage: engram serve [--addr HOST:PORT] [--data DIR] [--store URL] [flags]

Opens the data directory (or, with --store, the PostgreSQL database at URL)
and serves the HTTP API until interrupted, over HTTPS with --tls-cert and
--tls-key (PEM files; both or neither). On start it logs "listening on
http://HOST:PORT" (https:// with TLS) with the port actually bound, so
--addr 127.0.0.1:0 picks a free port, and names the store. SIGINT or SIGTERM shuts down gracefully:
requests in flight finish, then the store is closed and the command exits 0.

A PostgreSQL database that cannot be reached does not stop the server: it
listens anyway, GET /healthz answers 200, GET /readyz and every API call
answer 503 with the reason, and it reconnects in the background (backing
off up to 5s between attempts), applying the migrations once the database
answers. The same holds when the database goes away later; nothing is
half-written. Errors retrying cannot fix (a schema newer than this program,
vectors made by another embedder) end it with exit status 1.

The server answers only requests whose Host header names it: the address
it listens on, or localhost, 127.0.0.1 or [::1] at its port. When clients
reach it by another name or address (0.0.0.0 in --addr, a container name,
a proxy), list those in --allowed-hosts. Requests from web pages (with an
Origin header) are refused unless the origin is in --allowed-origins.

Every request but GET /healthz and /readyz must carry an API key
(Authorization: Bearer KEY, or Token KEY), made with engram keys create;
with none yet the server starts and logs how to make the first. --no-auth
(ENGRAM_NO_AUTH=1) serves without keys, and is refused unless --addr is a
loopback address.

Each API key (each client IP with --no-auth) may send --rate-limit requests
a second with bursts of --rate-burst, and have --max-concurrent in flight;
more gets 429 with Retry-After. 0 turns a limit off.

It serves the MCP tools of engram mcp over streamable HTTP at /mcp, with
the same keys: a read key may call recall, get, list and history; remember,
update and forget need the role write. A call's default scope is its key's
binding (with --no-auth: --mcp-org, --mcp-project, --mcp-user).

Memories of kind vault are stored encrypted under a master key given in
ENGRAM_VAULT_KEY or --vault-key-file (32 bytes as hex or base64; make one
with openssl rand -base64 32). Without one, adding a vault memory answers
503; with a key other than the vault's, the server refuses to start.

POST /v1/chat/completions is a memory proxy for OpenAI clients: it recalls
the user's memories into the system message, forwards the request to the
LLM at --proxy-url (default --llm-url; unset, it answers 503) and stores
the turn. It needs a write key; see
docs/integrations.md#memory-proxy-for-openai-clients.

GET /metrics serves Prometheus metrics: to an admin key where keys are
required, to anyone on a loopback server without keys; --metrics-addr
serves them on a second address without a key. Every request and every
memory operation is logged at level info, as JSON lines with --log-format
json; content, queries and keys never are.

Episodes may carry media (images, audio, video stored as resources). With
--llm-url, media that come without a caption or transcript are described
in the background job that forms them: images by --llm-model (a chat
request with the picture), audio and video by --transcription-model at
POST /audio/transcriptions. Without --llm-url such media are stored and
not formed, and the add's answer lists them under unformed.`,
	Run: runServe,
}

func runServe(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var f serveCommandFlags
	f.register(fs, m.Getenv)
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "serve takes no arguments, got %q", pos[0])
	}
	r, err := f.check(cmd, m.Getenv)
	if err != nil {
		return err
	}
	logger := f.tf.logger(m.Stderr, r.level)
	slog.SetDefault(logger) // for packages that log through the default logger
	r.opts.Logger = logger
	servePprof(m.Getenv("ENGRAM_PPROF"), logger)
	met := f.instrument(r, logger)
	if err := f.connectModels(cmd, r, logger); err != nil {
		return err
	}
	f.observeEngine(r, met)
	stop, err := serveMetrics(ctx, *f.tf.metricsAddr, met, logger)
	if err != nil {
		return err
	}
	defer stop()
	if r.store != "" {
		return servePostgres(ctx, r)
	}
	return serveDataDir(ctx, r)
}

// serveCommandFlags are all the flags of engram serve.
type serveCommandFlags struct {
	addr, data, store *string
	ef                embedFlags
	sf                serveFlags
	lf                llmFlags
	mf                mem0Flags
	pf                proxyFlags
	tf                telemetryFlags
	level             *string
	sweepEvery        *string
	communityEvery    *string
}

func (f *serveCommandFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.addr = fs.String("addr", envOr(getenv, "ENGRAM_ADDR", "127.0.0.1:8080"), "`HOST:PORT` to listen on (env ENGRAM_ADDR)")
	f.data = fs.String("data", envOr(getenv, "ENGRAM_DATA", defaultDataDir(getenv)), "data `directory` (env ENGRAM_DATA)")
	f.store = fs.String("store", getenv("ENGRAM_STORE"), "serve the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	f.ef.register(fs, getenv)
	f.sf.register(fs, getenv)
	f.lf.register(fs, getenv)
	f.lf.registerMedia(fs, getenv)
	f.mf.register(fs, getenv)
	f.pf.register(fs, getenv)
	f.level = fs.String("log-level", envOr(getenv, "ENGRAM_LOG_LEVEL", "info"), "log `level`: debug, info, warn or error (env ENGRAM_LOG_LEVEL)")
	f.tf.register(fs, getenv)
	f.sweepEvery = fs.String("sweep-every", envOr(getenv, "ENGRAM_SWEEP_EVERY", "1m"),
		"how often memories past their expires_at are marked expired, in batches; 0 turns the sweeper off (`duration`, env ENGRAM_SWEEP_EVERY)")
	f.communityEvery = fs.String("community-refresh", envOr(getenv, "ENGRAM_COMMUNITY_REFRESH", "1m"),
		"how often the communities of users whose entity graph changed are recomputed; 0 turns it off (`duration`, env ENGRAM_COMMUNITY_REFRESH)")
}

// serveRun is what a server is started with once its flags are checked.
type serveRun struct {
	addr, data, store string
	ef                *embedFlags
	opts              engramhttp.ServerOptions // carries the logger and the server's limits
	noAuth            bool
	level             slog.Level
	sweep             time.Duration // interval of the TTL sweeper (0: none)
	communities       time.Duration // interval of the community refresh (0: none)
	tune              func(*engine.Options)
	// mounts gives the handlers served beside the API over the service.
	mounts func(engramhttp.Backend) ([]engramhttp.Mount, error)
	// engine is the engine serving now, for the metrics read at a scrape.
	engine atomic.Pointer[engine.Engine]
}

// check validates the flags in the order their errors are reported and
// opens the vault's master key; every error is a usage error.
func (f *serveCommandFlags) check(cmd *Command, getenv func(string) string) (*serveRun, error) {
	r := &serveRun{addr: *f.addr, data: *f.data, store: *f.store, ef: &f.ef, noAuth: *f.sf.noAuth}
	if err := r.level.UnmarshalText([]byte(*f.level)); err != nil {
		return nil, cmdUsageErrorf(cmd, "--log-level %q is not one of debug, info, warn, error", *f.level)
	}
	if err := f.tf.check(cmd); err != nil {
		return nil, err
	}
	opts, err := f.sf.options(cmd)
	if err != nil {
		return nil, err
	}
	r.opts = opts
	f.sf.resolveIndexDir(r.data, r.store)
	r.sweep, err = time.ParseDuration(*f.sweepEvery)
	if err != nil || r.sweep < 0 {
		return nil, cmdUsageErrorf(cmd, "--sweep-every (env ENGRAM_SWEEP_EVERY) %q is not a duration like 30s or 5m, or 0 for no sweeper", *f.sweepEvery)
	}
	r.communities, err = time.ParseDuration(*f.communityEvery)
	if err != nil || r.communities < 0 {
		return nil, cmdUsageErrorf(cmd, "--community-refresh (env ENGRAM_COMMUNITY_REFRESH) %q is not a duration like 30s or 5m, or 0 for none", *f.communityEvery)
	}
	if err := f.sf.checkAuth(cmd, r.addr); err != nil {
		return nil, err
	}
	if err := f.mf.check(cmd); err != nil {
		return nil, err
	}
	if f.ef.vault, err = openVault(getenv(vault.EnvKey), *f.sf.vaultKeyFile); err != nil {
		return nil, cmdUsageErrorf(cmd, "%v", err)
	}
	return r, nil
}

// connectModels makes the clients of the model endpoints (the former, the
// media describer, the chat proxy and the engine's chat model) and from
// them the engine's tuning and the mounts of r; a client that cannot be
// made is a usage error.
func (f *serveCommandFlags) connectModels(cmd *Command, r *serveRun, logger *slog.Logger) error {
	var err error
	if f.ef.former, err = f.lf.former(logger); err != nil {
		return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
	}
	describer, err := f.lf.describer(logger)
	if err != nil {
		return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
	}
	proxyCfg, err := f.pf.config(cmd, &f.lf, logger)
	if err != nil {
		return err
	}
	if f.ef.former != nil {
		chat, err := f.lf.chat(logger)
		if err != nil {
			return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
		}
		f.ef.llm = chat
	}
	r.tune = f.engineTune(r.communities, describer)
	r.mounts = f.mounts(proxyMounts(proxyCfg))
	return nil
}

// engineTune sets the engine's options from the flags.
func (f *serveCommandFlags) engineTune(communities time.Duration, describer engram.MediaDescriber) func(*engine.Options) {
	return func(o *engine.Options) {
		f.sf.tuneEngine(o)
		o.CommunityRefresh = communities
		// A model call takes seconds and can fail: episodes are stored at
		// once and formed by the background jobs, which retry.
		if f.ef.former != nil {
			o.AsyncByDefault = true
			// Until a job's model call succeeds, the rules' memories of its
			// episodes stand in, so search finds them meanwhile.
			o.Provisional = engine.DefaultFormer()
		}
		if describer != nil {
			// Media without a caption or transcript are described by the
			// background jobs, never in a request.
			o.Describer = describer
		}
	}
}

// mounts are the handlers served beside the REST API: MCP at /mcp, the
// Mem0-compatible API at /mem0/ and the chat proxy at
// /v1/chat/completions.
func (f *serveCommandFlags) mounts(proxy func(engram.Service) ([]engramhttp.Mount, error)) func(engramhttp.Backend) ([]engramhttp.Mount, error) {
	return func(svc engramhttp.Backend) ([]engramhttp.Mount, error) {
		ms := append(f.sf.mounts(svc), f.mf.mount(svc))
		pm, err := proxy(svc)
		return append(ms, pm...), err
	}
}

// serveDataDir serves over the SQLite store of the data directory until
// ctx ends, then closes it.
func serveDataDir(ctx context.Context, r *serveRun) (err error) {
	logger := r.opts.Logger
	ln, err := listen(r.addr)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this covers an error before
	eng, closeEng, err := openEngineAt(ctx, r.data, "", "", r.ef, logger, r.tune)
	if err != nil {
		return fmt.Errorf("open data directory %s: %w", r.data, err)
	}
	eng.StartSweeper(r.sweep, engine.DefaultSweepBatch) // stopped when the engine closes
	r.engine.Store(eng)
	defer func() {
		if cerr := closeEng(); err == nil && cerr != nil {
			err = fmt.Errorf("close data directory: %w", cerr)
		}
	}()

	r.opts.Ready, r.opts.Embedder = eng.Ready, eng.Embedder()
	r.opts.Mounts = append(r.opts.Mounts, tenantsMount(eng))
	r.opts.Mounts = append(r.opts.Mounts, sensitiveMounts(eng)...)
	keys := engram.Keys{Store: eng.Store()}
	srv, err := r.server(ctx, eng, keys, "--data "+r.data)
	if err != nil {
		return err
	}
	logger.Info("listening on "+listenURL(r.opts, ln), "store", storeLabel(r.data, ""))
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("shut down")
	return nil
}

// server makes the HTTP server of svc with r's options and mounts,
// authenticating with keys unless --no-auth. With where set it logs how to
// make the first key when none works yet (where says which store).
func (r *serveRun) server(ctx context.Context, svc engramhttp.Backend, keys engram.KeyService, where string) (*engramhttp.Server, error) {
	if r.noAuth {
		warnNoAuth(r.opts.Logger)
	} else {
		r.opts.Keys = keys
		if where != "" {
			adviseFirstKey(ctx, r.opts.Logger, keys, where)
		}
	}
	ms, err := r.mounts(svc)
	if err != nil {
		return nil, err
	}
	r.opts.Mounts = append(r.opts.Mounts, ms...)
	srv := engramhttp.NewServer(svc, r.opts)
	for _, p := range srv.Patterns() {
		r.opts.Logger.Debug("serving", "pattern", p)
	}
	return srv, nil
}

// servePostgres serves over the PostgreSQL store at r.store. A database
// that cannot be reached at start does not stop the server: it listens,
// reports not-ready and answers every call with EUNAVAILABLE while it
// reconnects in the background, then applies the migrations and serves. An
// error retrying cannot fix (a malformed URL, a schema newer than this
// program, vectors of another embedder) ends it, before or after listening.
func servePostgres(ctx context.Context, r *serveRun) (err error) {
	logger := r.opts.Logger
	ln, err := listen(r.addr)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this covers an error before
	if err := os.MkdirAll(r.data, 0o700); err != nil {
		return fmt.Errorf("create data directory %s: %w", r.data, err)
	}
	emb, closeEmb, err := r.ef.open(ctx, cacheFile(r.data), logger)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeEmb(); err == nil && cerr != nil {
			err = fmt.Errorf("close the embedding cache: %w", cerr)
		}
	}()
	open := r.postgresOpener(emb)
	label := storeLabel(r.data, r.store)

	sb := &standby{}
	defer func() {
		if cerr := sb.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close the PostgreSQL store: %w", cerr)
		}
	}()
	connected, err := sb.firstOpen(ctx, open, logger, label)
	if err != nil {
		return err
	}

	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	wait := func() error { return nil }
	if !connected {
		wait = sb.reconnect(serveCtx, stop, open, logger, label)
	}

	r.opts.Ready, r.opts.Embedder = sb.Ready, emb
	r.opts.Mounts = append(r.opts.Mounts, tenantsMount(sb))
	r.opts.Mounts = append(r.opts.Mounts, sensitiveMounts(sb)...)
	where := ""
	if connected {
		where = "--store URL"
	}
	srv, err := r.server(ctx, sb, sb, where)
	if err != nil {
		return err
	}
	logger.Info("listening on "+listenURL(r.opts, ln), "store", label)
	serr := srv.Serve(serveCtx, ln)
	stop()
	if fatal := wait(); fatal != nil {
		return fmt.Errorf("open the PostgreSQL store: %w", fatal)
	}
	if serr != nil {
		return fmt.Errorf("serve: %w", serr)
	}
	logger.Info("shut down")
	return nil
}

// postgresOpener opens the engine over the PostgreSQL store with the
// embedder emb and starts its TTL sweeper.
func (r *serveRun) postgresOpener(emb engram.Embedder) openFunc {
	return func(ctx context.Context) (*engine.Engine, func() error, error) {
		eo := engine.Options{Logger: r.opts.Logger, Embedder: emb, Former: r.ef.former, Vault: r.ef.vault, LLM: r.ef.llm}
		r.tune(&eo)
		eng, closeEng, err := openEngineOn(ctx, r.store, eo)
		if err == nil {
			eng.StartSweeper(r.sweep, engine.DefaultSweepBatch) // stopped when the engine closes
			r.engine.Store(eng)
		}
		return eng, closeEng, err
	}
}

// listen binds addr before the store is opened, so that a port in use
// ends the command before it creates or migrates anything.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// listenURL is the base URL of the server listening on ln.
func listenURL(opts engramhttp.ServerOptions, ln net.Listener) string {
	if opts.TLS != nil {
		return "https://" + ln.Addr().String()
	}
	return "http://" + ln.Addr().String()
}

// warnNoAuth says at start that the server authenticates no one.
func warnNoAuth(logger *slog.Logger) {
	logger.Warn("authentication is off (--no-auth): every local program can read and write the memories of every tenant; serve with API keys (engram keys create) unless this machine is yours alone")
}

// adviseFirstKey logs how to create a key when the store has none that
// works yet: the server runs, but answers every request with 401.
func adviseFirstKey(ctx context.Context, logger *slog.Logger, keys engram.KeyService, where string) {
	all, err := keys.ListKeys(ctx, "", "")
	if err != nil {
		logger.Warn("cannot read the API keys", "err", err)
		return
	}
	for _, k := range all {
		if k.RevokedAt == nil {
			return
		}
	}
	logger.Warn("authentication is on and no API key exists yet, so every request will answer 401; create the first with: engram keys create " +
		where + " --org ORG --project PROJECT --role admin (or serve on a loopback address with --no-auth)")
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/mem0api"
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
the turn. It needs a write key; see the README.

Episodes may carry media (images, audio, video stored as resources). With
--llm-url, media that come without a caption or transcript are described
in the background job that forms them: images by --llm-model (a chat
request with the picture), audio and video by --transcription-model at
POST /audio/transcriptions. Without --llm-url such media are stored and
not formed, and the add's answer lists them under unformed.`,
	Run: runServe,
}

func runServe(ctx context.Context, m *Main, cmd *Command, args []string) (err error) {
	fs := m.flagSet(cmd)
	addr := fs.String("addr", envOr(m.Getenv, "ENGRAM_ADDR", "127.0.0.1:8080"), "`HOST:PORT` to listen on (env ENGRAM_ADDR)")
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` (env ENGRAM_DATA)")
	store := fs.String("store", m.Getenv("ENGRAM_STORE"), "serve the PostgreSQL database at this `URL` instead of the data directory (env ENGRAM_STORE)")
	var ef embedFlags
	ef.register(fs, m.Getenv)
	var sf serveFlags
	sf.register(fs, m.Getenv)
	var lf llmFlags
	lf.register(fs, m.Getenv)
	lf.registerMedia(fs, m.Getenv)
	var mf mem0Flags
	mf.register(fs, m.Getenv)
	var pf proxyFlags
	pf.register(fs, m.Getenv)
	level := fs.String("log-level", envOr(m.Getenv, "ENGRAM_LOG_LEVEL", "info"), "log `level`: debug, info, warn or error (env ENGRAM_LOG_LEVEL)")
	sweepEvery := fs.String("sweep-every", envOr(m.Getenv, "ENGRAM_SWEEP_EVERY", "1m"),
		"how often memories past their expires_at are marked expired, in batches; 0 turns the sweeper off (`duration`, env ENGRAM_SWEEP_EVERY)")
	communityEvery := fs.String("community-refresh", envOr(m.Getenv, "ENGRAM_COMMUNITY_REFRESH", "1m"),
		"how often the communities of users whose entity graph changed are recomputed; 0 turns it off (`duration`, env ENGRAM_COMMUNITY_REFRESH)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "serve takes no arguments, got %q", pos[0])
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return cmdUsageErrorf(cmd, "--log-level %q is not one of debug, info, warn, error", *level)
	}
	opts, err := sf.options(cmd)
	if err != nil {
		return err
	}
	sf.resolveIndexDir(*data, *store)
	sweep, err := time.ParseDuration(*sweepEvery)
	if err != nil || sweep < 0 {
		return cmdUsageErrorf(cmd, "--sweep-every (env ENGRAM_SWEEP_EVERY) %q is not a duration like 30s or 5m, or 0 for no sweeper", *sweepEvery)
	}
	communities, err := time.ParseDuration(*communityEvery)
	if err != nil || communities < 0 {
		return cmdUsageErrorf(cmd, "--community-refresh (env ENGRAM_COMMUNITY_REFRESH) %q is not a duration like 30s or 5m, or 0 for none", *communityEvery)
	}
	if err := sf.checkAuth(cmd, *addr); err != nil {
		return err
	}
	if err := mf.check(cmd); err != nil {
		return err
	}
	if ef.vault, err = openVault(m.Getenv(vault.EnvKey), *sf.vaultKeyFile); err != nil {
		return cmdUsageErrorf(cmd, "%v", err)
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(logger) // for packages that log through the default logger
	opts.Logger = logger
	servePprof(m.Getenv("ENGRAM_PPROF"), logger)
	if ef.former, err = lf.former(logger); err != nil {
		return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
	}
	describer, err := lf.describer(logger)
	if err != nil {
		return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
	}
	proxyCfg, err := pf.config(cmd, &lf, logger)
	if err != nil {
		return err
	}
	proxy := proxyMounts(proxyCfg)
	if ef.former != nil {
		chat, err := lf.chat(logger)
		if err != nil {
			return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
		}
		ef.llm = chat
	}

	tune := func(o *engine.Options) {
		sf.tuneEngine(o)
		o.CommunityRefresh = communities
		// A model call takes seconds and can fail: episodes are stored at
		// once and formed by the background jobs, which retry.
		if ef.former != nil {
			o.AsyncByDefault = true
		}
	}
	if describer != nil {
		// Media without a caption or transcript are described by the
		// background jobs, never in a request.
		base := tune
		tune = func(o *engine.Options) {
			base(o)
			o.Describer = describer
		}
	}
	// mounts are the handlers served beside the REST API: MCP at /mcp,
	// the Mem0-compatible API at /mem0/ (both the engine and the
	// PostgreSQL standby can locate a memory by id, which it needs) and
	// the chat proxy at /v1/chat/completions.
	mounts := func(svc engram.Service) ([]engramhttp.Mount, error) {
		ms := sf.mounts(svc)
		if m0, ok := svc.(mem0api.Service); ok {
			ms = append(ms, mf.mount(m0))
		}
		pm, err := proxy(svc)
		return append(ms, pm...), err
	}
	if *store != "" {
		return servePostgres(ctx, *addr, *data, *store, &ef, opts, *sf.noAuth, sweep, tune, mounts)
	}
	eng, closeEng, err := openEngineAt(ctx, *data, "", "", &ef, logger, tune)
	if err != nil {
		return fmt.Errorf("open data directory %s: %w", *data, err)
	}
	eng.StartSweeper(sweep, engine.DefaultSweepBatch) // stopped when the engine closes
	defer func() {
		if cerr := closeEng(); err == nil && cerr != nil {
			err = fmt.Errorf("close data directory: %w", cerr)
		}
	}()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	opts.Ready, opts.Embedder = eng.Ready, eng.Embedder()
	keys := engram.Keys{Store: eng.Store()}
	if *sf.noAuth {
		warnNoAuth(logger)
	} else {
		opts.Keys = keys
		adviseFirstKey(ctx, logger, keys, "--data "+*data)
	}
	ms, err := mounts(eng)
	if err != nil {
		return err
	}
	opts.Mounts = append(opts.Mounts, ms...)
	srv := engramhttp.NewServer(eng, opts)
	logger.Info("listening on "+listenURL(opts, ln), "store", storeLabel(*data, ""))
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("shut down")
	return nil
}

// servePostgres serves over the PostgreSQL store at storeURL. A database
// that cannot be reached at start does not stop the server: it listens,
// reports not-ready and answers every call with EUNAVAILABLE while it
// reconnects in the background, then applies the migrations and serves. An
// error retrying cannot fix (a malformed URL, a schema newer than this
// program, vectors of another embedder) ends it, before or after listening.
// opts carries the logger and the server's limits; sweep is the interval
// of the TTL sweeper (0: none); tune sets the engine's options; mounts
// gives the handlers served beside the API over the service.
func servePostgres(ctx context.Context, addr, data, storeURL string, ef *embedFlags, opts engramhttp.ServerOptions, noAuth bool, sweep time.Duration, tune func(*engine.Options), mounts func(engram.Service) ([]engramhttp.Mount, error)) (err error) {
	logger := opts.Logger
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("create data directory %s: %w", data, err)
	}
	emb, closeEmb, err := ef.open(ctx, cacheFile(data), logger)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeEmb(); err == nil && cerr != nil {
			err = fmt.Errorf("close the embedding cache: %w", cerr)
		}
	}()
	open := func(ctx context.Context) (*engine.Engine, func() error, error) {
		eo := engine.Options{Logger: logger, Embedder: emb, Former: ef.former, Vault: ef.vault, LLM: ef.llm}
		tune(&eo)
		eng, closeEng, err := openEngineOn(ctx, storeURL, eo)
		if err == nil {
			eng.StartSweeper(sweep, engine.DefaultSweepBatch) // stopped when the engine closes
		}
		return eng, closeEng, err
	}
	label := storeLabel(data, storeURL)

	sb := &standby{}
	defer func() {
		if cerr := sb.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close the PostgreSQL store: %w", cerr)
		}
	}()
	eng, closeEng, err := open(ctx)
	switch {
	case err == nil:
		sb.eng, sb.closeEng = eng, closeEng
	case engram.ErrorCode(err) == engram.EUNAVAILABLE && ctx.Err() == nil:
		sb.setUnavailable(err)
		logger.Warn("the store is unavailable; serving 503 until it can be reached", "store", label, "err", engram.ErrorMessage(err))
	default:
		return fmt.Errorf("open the PostgreSQL store: %w", err)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	var fatal error
	done := make(chan struct{})
	if eng == nil {
		go func() {
			defer close(done)
			if err := sb.connect(serveCtx, open, logger); err == nil {
				logger.Info("connected to the store; ready", "store", label)
			} else if serveCtx.Err() == nil {
				fatal = err
				stop()
			}
		}()
	} else {
		close(done)
	}

	opts.Ready, opts.Embedder = sb.Ready, emb
	if noAuth {
		warnNoAuth(logger)
	} else {
		opts.Keys = sb
		if eng != nil {
			adviseFirstKey(ctx, logger, sb, "--store URL")
		}
	}
	ms, err := mounts(sb)
	if err != nil {
		return err
	}
	opts.Mounts = append(opts.Mounts, ms...)
	srv := engramhttp.NewServer(sb, opts)
	logger.Info("listening on "+listenURL(opts, ln), "store", label)
	serr := srv.Serve(serveCtx, ln)
	stop()
	<-done
	if fatal != nil {
		return fmt.Errorf("open the PostgreSQL store: %w", fatal)
	}
	if serr != nil {
		return fmt.Errorf("serve: %w", serr)
	}
	logger.Info("shut down")
	return nil
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

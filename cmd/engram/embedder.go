package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedbatch"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/uselite"
	"github.com/engramhq/engram/vault"
)

// Embedder kinds.
const (
	embedUSELite = "use-lite"
	embedOpenAI  = "openai"
	embedNone    = "none"
)

// embedFlags choose the embedder an engine opened in this process uses.
// The API key is read from ENGRAM_EMBED_KEY only, so it never shows in a
// process listing.
type embedFlags struct {
	kind, url, model, dims string
	key                    string
	// batch coalesces concurrent calls to the embedded model into one
	// (embedbatch); --embed-batch=false embeds each call on its own.
	batch bool
	// encoder is use-lite's arithmetic, int8 or fp32 (uselite.Precision).
	encoder string
	// former, when set (engram serve --llm-url), forms memories instead
	// of the rule-based default.
	former engram.Former
	// vault, when set (ENGRAM_VAULT_KEY or --vault-key-file), is the
	// engine's vault.
	vault *vault.Vault
	// llm, when set (engram serve --llm-url), is the chat model agentic
	// searches ask to choose their steps.
	llm engine.Chat
	// observer, when set (engram serve), is told of every call to an
	// OpenAI-compatible embeddings endpoint.
	observer openai.CallObserver
}

func (c *embedFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.kind, "embedder", envOr(getenv, "ENGRAM_EMBEDDER", embedUSELite), "embedder: use-lite (embedded model), openai (any OpenAI-compatible endpoint) or none (env ENGRAM_EMBEDDER)")
	fs.StringVar(&c.url, "embed-url", getenv("ENGRAM_EMBED_URL"), "base `URL` of the OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (env ENGRAM_EMBED_URL)")
	fs.StringVar(&c.model, "embed-model", getenv("ENGRAM_EMBED_MODEL"), "embedding `model` name at that endpoint (env ENGRAM_EMBED_MODEL)")
	fs.StringVar(&c.dims, "embed-dims", getenv("ENGRAM_EMBED_DIMS"), "requested embedding dimensions, if the model supports it (env ENGRAM_EMBED_DIMS)")
	fs.BoolVar(&c.batch, "embed-batch", envOr(getenv, "ENGRAM_EMBED_BATCH", "true") != "false",
		"embed concurrent requests' texts together in one call of the embedded model (env ENGRAM_EMBED_BATCH)")
	fs.StringVar(&c.encoder, "encoder", envOr(getenv, "ENGRAM_ENCODER", string(uselite.Int8)), "use-lite arithmetic: int8 (quantized, about twice as fast, cosine >= 0.999 to fp32 on average) or fp32 (the reference numbers) (env ENGRAM_ENCODER)")
	c.key = getenv("ENGRAM_EMBED_KEY")
}

// open returns the configured embedder (nil for "none") wrapped in a cache
// kept in the file cachePath, and a function that releases it.
func (c *embedFlags) open(ctx context.Context, cachePath string, logger *slog.Logger) (engram.Embedder, func() error, error) {
	var inner engram.Embedder
	variant := ""
	switch c.kind {
	case embedNone:
		return nil, func() error { return nil }, nil
	case embedUSELite:
		prec, err := uselite.ParsePrecision(c.encoder)
		if err != nil {
			return nil, nil, usageErrorf("--encoder %q is not one of int8, fp32", c.encoder)
		}
		m, err := uselite.LoadPrecision(uselite.DefaultDir(), prec)
		if err != nil {
			return nil, nil, err
		}
		// Both encoders' vectors carry the name use-lite, so stores take
		// either; the cache keeps them apart so that switching the
		// encoder gives its own numbers (fp32 keeps the keys of before).
		if prec != uselite.FP32 {
			variant = string(prec)
		}
		inner = c.batched(m)
	case embedOpenAI:
		dims := 0
		if c.dims != "" {
			n, err := strconv.Atoi(c.dims)
			if err != nil || n <= 0 {
				return nil, nil, usageErrorf("--embed-dims %q is not a positive whole number", c.dims)
			}
			dims = n
		}
		e, err := openai.NewEmbedder(openai.Config{BaseURL: c.url, APIKey: c.key, Model: c.model, Dimensions: dims, Logger: logger, Observer: c.observer})
		if err != nil {
			return nil, nil, err
		}
		if e.Dim() == 0 {
			if _, err := e.Probe(ctx); err != nil {
				return nil, nil, fmt.Errorf("learn the embedding size from %s: %w", c.url, err)
			}
		}
		inner = e
	default:
		return nil, nil, usageErrorf("--embedder %q is not one of use-lite, openai, none", c.kind)
	}
	cache, err := embedcache.New(inner, embedcache.Options{Path: cachePath, Logger: logger, Variant: variant})
	if err != nil {
		return nil, nil, err
	}
	return cache, cache.Close, nil
}

// batched wraps the embedded model m in a batcher unless --embed-batch
// is off: concurrent adds and searches each embed a text or two, and the
// model embeds them together for about half the processor time.
func (c *embedFlags) batched(m engram.Embedder) engram.Embedder {
	if !c.batch {
		return m
	}
	return embedbatch.New(m)
}

// cacheFile is the embedding cache inside a directory.
func cacheFile(dir string) string { return filepath.Join(dir, "embeddings-cache.db") }

// openEngine opens the engine over dataDir with the configured embedder,
// caching embeddings in cacheDir (the data directory when empty).
func openEngine(ctx context.Context, dataDir, cacheDir string, ef *embedFlags, logger *slog.Logger) (*engine.Engine, func() error, error) {
	return openEngineAt(ctx, dataDir, "", cacheDir, ef, logger)
}

// openEngineAt is openEngine over the PostgreSQL store at storeURL when it
// is set; dataDir then holds only the embedding cache. tune, if given,
// changes the engine options before the engine opens.
func openEngineAt(ctx context.Context, dataDir, storeURL, cacheDir string, ef *embedFlags, logger *slog.Logger, tune ...func(*engine.Options)) (*engine.Engine, func() error, error) {
	if cacheDir == "" {
		cacheDir = dataDir
	}
	for _, d := range []string{dataDir, cacheDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, fmt.Errorf("create directory: %w", err)
		}
	}
	emb, closeEmb, err := ef.open(ctx, cacheFile(cacheDir), logger)
	if err != nil {
		return nil, nil, err
	}
	opts := engine.Options{Logger: logger, Embedder: emb, Former: ef.former, Vault: ef.vault, LLM: ef.llm}
	for _, t := range tune {
		t(&opts)
	}
	eng, closeEng, err := openEngineOn(ctx, storeLocation(dataDir, storeURL), opts)
	if err != nil {
		closeEmb()
		return nil, nil, err
	}
	return eng, func() error { return errors.Join(closeEng(), closeEmb()) }, nil
}

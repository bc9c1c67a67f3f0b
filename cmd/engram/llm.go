package main

import (
	"flag"
	"log/slog"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
)

// llmFlags choose the chat model that forms and consolidates memories
// and chooses the steps of agentic searches; without --llm-url the
// rule-based former is used and rules choose the steps.
type llmFlags struct {
	url, model, key string
	transcription   string
	timeout         string
	// observer, when set (engram serve), is told of every model call.
	observer openai.CallObserver
	// breaker is the former's circuit breaker once former made one.
	breaker engram.BreakerReporter
}

func (c *llmFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.url, "llm-url", getenv("ENGRAM_LLM_URL"), "base `URL` of an OpenAI-compatible chat endpoint that forms memories; unset: rule-based formation (env ENGRAM_LLM_URL)")
	fs.StringVar(&c.model, "llm-model", getenv("ENGRAM_LLM_MODEL"), "chat `model` at --llm-url (env ENGRAM_LLM_MODEL)")
	fs.StringVar(&c.key, "llm-key", getenv("ENGRAM_LLM_KEY"), "API `key` of --llm-url; prefer the env ENGRAM_LLM_KEY, which no process listing shows")
	fs.StringVar(&c.timeout, "llm-timeout", envOr(getenv, "ENGRAM_LLM_TIMEOUT", llmformer.DefaultCallTimeout.String()),
		"most time one call to --llm-url may take while forming memories, its retries included (`duration`, env ENGRAM_LLM_TIMEOUT)")
}

// registerMedia adds the flag of the model that transcribes the audio of
// episodes' media; images are captioned by --llm-model.
func (c *llmFlags) registerMedia(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.transcription, "transcription-model", envOr(getenv, "ENGRAM_TRANSCRIPTION_MODEL", openai.DefaultTranscriptionModel),
		"`model` at --llm-url that transcribes audio and video an episode brings without a transcript (env ENGRAM_TRANSCRIPTION_MODEL)")
}

// describer returns what captions and transcribes episodes' media at
// --llm-url (captions by --llm-model), nil without --llm-url, or the
// client's EINVALID error.
func (c *llmFlags) describer(logger *slog.Logger) (engram.MediaDescriber, error) {
	if c.url == "" {
		return nil, nil
	}
	return openai.NewDescriber(openai.Config{BaseURL: c.url, Model: c.model, APIKey: c.key, Logger: logger, Observer: c.observer}, c.transcription)
}

// former returns the LLM former the flags configure, nil without
// --llm-url, or an EINVALID error when the model is missing, the URL
// unusable or the timeout not a positive duration.
func (c *llmFlags) former(logger *slog.Logger) (engram.Former, error) {
	if c.url == "" {
		return nil, nil
	}
	if c.model == "" {
		return nil, engram.Errorf(engram.EINVALID, "--llm-url needs --llm-model (env ENGRAM_LLM_MODEL)")
	}
	timeout, err := time.ParseDuration(c.timeout)
	if err != nil || timeout <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "--llm-timeout (env ENGRAM_LLM_TIMEOUT) %q is not a positive duration like 60s", c.timeout)
	}
	chat, err := c.chat(logger)
	if err != nil {
		return nil, err
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, Logger: logger, CallTimeout: timeout})
	if err != nil {
		return nil, err
	}
	c.breaker = f
	return f, nil
}

// chat returns the chat client of --llm-url and --llm-model, which also
// chooses the steps of agentic searches, or the client's EINVALID error.
func (c *llmFlags) chat(logger *slog.Logger) (*openai.Chat, error) {
	return openai.NewChat(openai.Config{BaseURL: c.url, Model: c.model, APIKey: c.key, Logger: logger, Observer: c.observer})
}

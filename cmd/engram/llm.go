package main

import (
	"flag"
	"log/slog"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
)

// llmFlags choose the chat model that forms and consolidates memories
// and chooses the steps of agentic searches; without --llm-url the
// rule-based former is used and rules choose the steps.
type llmFlags struct {
	url, model, key string
}

func (c *llmFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.url, "llm-url", getenv("ENGRAM_LLM_URL"), "base `URL` of an OpenAI-compatible chat endpoint that forms memories; unset: rule-based formation (env ENGRAM_LLM_URL)")
	fs.StringVar(&c.model, "llm-model", getenv("ENGRAM_LLM_MODEL"), "chat `model` at --llm-url (env ENGRAM_LLM_MODEL)")
	fs.StringVar(&c.key, "llm-key", getenv("ENGRAM_LLM_KEY"), "API `key` of --llm-url; prefer the env ENGRAM_LLM_KEY, which no process listing shows")
}

// former returns the LLM former the flags configure, nil without
// --llm-url, or an EINVALID error when the model is missing or the URL
// unusable.
func (c *llmFlags) former(logger *slog.Logger) (engram.Former, error) {
	if c.url == "" {
		return nil, nil
	}
	if c.model == "" {
		return nil, engram.Errorf(engram.EINVALID, "--llm-url needs --llm-model (env ENGRAM_LLM_MODEL)")
	}
	chat, err := c.chat(logger)
	if err != nil {
		return nil, err
	}
	return llmformer.New(llmformer.Config{LLM: chat, Logger: logger})
}

// chat returns the chat client of --llm-url and --llm-model, which also
// chooses the steps of agentic searches, or the client's EINVALID error.
func (c *llmFlags) chat(logger *slog.Logger) (*openai.Chat, error) {
	return openai.NewChat(openai.Config{BaseURL: c.url, Model: c.model, APIKey: c.key, Logger: logger})
}

package eval

import (
	"context"
	"log/slog"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/storeopen"
)

// FormerInfo names the former of a run and, for the LLM former, counts
// its chat calls and tokens per added turn.
type FormerInfo struct {
	Name          string           `json:"name"` // e.g. "former:llm:gpt-4o-mini"
	LLM           *llmformer.Stats `json:"llm,omitempty"`
	CallsPerTurn  float64          `json:"calls_per_turn,omitempty"`
	TokensPerTurn float64          `json:"tokens_per_turn,omitempty"`
}

// FormerEngine is DefaultEngine with f forming memories.
func FormerEngine(f engram.Former) EngineFactory {
	return func(ctx context.Context, dir string) (engram.Service, func() error, error) {
		opts := engine.Options{Logger: slog.New(slog.DiscardHandler), Former: f}
		Freeze(&opts)
		e, err := storeopen.Engine(ctx, dir, opts)
		if err != nil {
			return nil, nil, err
		}
		return flushing(e), e.Close, nil
	}
}

// NewLLMFormer returns the LLM former for an OpenAI-compatible endpoint,
// or an EINVALID error when url or model is missing.
func NewLLMFormer(url, key, model string) (*llmformer.Former, error) {
	if url == "" || model == "" {
		return nil, engram.Errorf(engram.EINVALID, "--former llm needs an endpoint URL and a model (--llm-url and --llm-model, or ENGRAM_LLM_URL and ENGRAM_LLM_MODEL)")
	}
	chat, err := openai.NewChat(openai.Config{BaseURL: url, APIKey: key, Model: model})
	if err != nil {
		return nil, err
	}
	return llmformer.New(llmformer.Config{LLM: chat, Logger: slog.New(slog.DiscardHandler)})
}

func formerInfo(f engram.Former) *FormerInfo {
	if f == nil {
		return nil
	}
	info := &FormerInfo{Name: "custom"}
	if a := f.Needs().Actor; a != "" {
		info.Name = a
	}
	if lf, ok := f.(*llmformer.Former); ok {
		st := lf.Stats()
		info.LLM, info.CallsPerTurn, info.TokensPerTurn = &st, st.CallsPerTurn(), st.TokensPerTurn()
	}
	return info
}

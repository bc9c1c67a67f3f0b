package entity

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
)

// The costlier stages of resolution, after the rules of Same: embedding
// similarity of name and summary, and confirmation by a language model.
// Both are optional and sit behind small interfaces so that tests run
// them against fakes.
const (
	StageEmbed Stage = "embed" // name and summary embed close together
	StageLLM   Stage = "llm"   // a language model confirmed the pair
)

// Confirmer decides whether two names are one entity; a language model
// behind it (LLMConfirmer) is the last stage of resolution.
type Confirmer interface {
	// Confirm reports whether a and b name one entity, or fails with the
	// model's error.
	Confirm(ctx context.Context, a, b Name) (bool, error)
}

// Resolver runs the stages of resolution, cheapest first: the rules of
// Same; then, with an Embedder, cosine similarity of "name: summary" (a
// pair at or above Join is one entity); then, with a Confirmer, the model
// decides the pairs the embedding puts between Ask and Join (every pair
// the rules leave when there is no Embedder) and vets the spelling-variant
// joins of the rules (StageEdit), the rule most often wrong. Types that
// are both known and differ, and differing titles, never join, whatever
// the later stages say.
type Resolver struct {
	Embedder  engram.Embedder
	Join, Ask float64
	Confirmer Confirmer
}

// Same reports whether a and b name one entity and the stage that
// decided. It fails with the embedder's or the model's error.
func (r *Resolver) Same(ctx context.Context, a, b Name) (bool, Stage, error) {
	ok, st := Same(a, b)
	switch {
	case ok && st == StageEdit && r.Confirmer != nil:
		yes, err := r.Confirmer.Confirm(ctx, a, b)
		if err != nil || !yes {
			return false, StageNone, err
		}
		return true, StageLLM, nil
	case ok:
		return true, st, nil
	case a.Norm == "" || b.Norm == "" || !compatible(a.Type, b.Type) || titlesDiffer(a.Norm, b.Norm):
		return false, StageNone, nil
	}
	ask := r.Confirmer != nil
	if r.Embedder != nil {
		vs, err := r.Embedder.Embed(ctx, []string{embedText(a), embedText(b)})
		if err != nil {
			return false, StageNone, err
		}
		cos := dot(vs[0], vs[1])
		if cos >= r.Join {
			return true, StageEmbed, nil
		}
		ask = ask && cos >= r.Ask
	}
	if !ask {
		return false, StageNone, nil
	}
	yes, err := r.Confirmer.Confirm(ctx, a, b)
	if err != nil || !yes {
		return false, StageNone, err
	}
	return true, StageLLM, nil
}

// embedText is what the embedding stage compares: the name, and its
// summary when it has one.
func embedText(n Name) string {
	if n.Summary == "" {
		return n.Norm
	}
	return n.Norm + ": " + n.Summary
}

// dot is the cosine of two L2-normalised vectors.
func dot(a, b []float32) float64 {
	var s float64
	for i := range min(len(a), len(b)) {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Completer is the chat model a LLMConfirmer asks; *openai.Chat is one.
type Completer interface {
	Complete(ctx context.Context, messages []openai.Message, opts ...openai.ChatOption) (string, error)
}

// LLMConfirmer asks a chat model whether two names are one entity.
type LLMConfirmer struct{ LLM Completer }

const confirmSystem = `You decide whether two names found in one person's notes refer to the same real-world entity (person, place, work or thing).
Names may be in English, German, Spanish, Chinese or other languages; translations, transliterations, nicknames and spelling variants of the same entity are the same.
Different people who share a given name, or two related but different places, are not the same.
Answer with a JSON object {"same": true} or {"same": false}.`

// Confirm implements Confirmer. A reply without a JSON object holding a
// boolean "same" is an EUNAVAILABLE error.
func (c LLMConfirmer) Confirm(ctx context.Context, a, b Name) (bool, error) {
	describe := func(n Name) string {
		s := n.Norm
		if n.Type != "" {
			s += " (" + n.Type + ")"
		}
		if len(n.Aliases) > 0 {
			s += ", also called " + strings.Join(n.Aliases, ", ")
		}
		if n.Summary != "" {
			s += ": " + n.Summary
		}
		return s
	}
	msgs := []openai.Message{{Role: "system", Content: confirmSystem},
		{Role: "user", Content: "A: " + describe(a) + "\nB: " + describe(b)}}
	reply, err := c.LLM.Complete(ctx, msgs, openai.Temperature(0), openai.JSONMode())
	if err != nil {
		return false, fmt.Errorf("confirm entity pair: %w", err)
	}
	obj, ok := openai.ExtractObject(reply)
	var out struct {
		Same *bool `json:"same"`
	}
	if !ok || json.Unmarshal([]byte(obj), &out) != nil || out.Same == nil {
		return false, engram.Errorf(engram.EUNAVAILABLE, "confirm entity pair: the model's reply holds no {\"same\": true|false}: %.200q", reply)
	}
	return *out.Same, nil
}

// DefaultEmbedJoin is the cosine at or above which the embedding stage
// joins two names without a model. USE-lite over bare names adds false
// joins faster than true ones at every lower threshold on the labelled
// pairs (TestResolutionStagesEmbedding), so by default it joins nothing
// the rules do not; its use is as the gate of the model stage.
const DefaultEmbedJoin = 0.95

// DefaultEmbedAsk is the cosine at or above which a pair the rules leave
// is put to the model when there is one.
const DefaultEmbedAsk = 0.6

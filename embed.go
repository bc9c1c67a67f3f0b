package engram

import "context"

// Embedder turns texts into vectors. Implementations: the embedded USE-lite
// model (package uselite) and any OpenAI-compatible endpoint (package
// openai).
type Embedder interface {
	// Embed returns one L2-normalised vector of length Dim() per text, in
	// order. It fails as a whole: no partial result with a nil error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Name identifies the model, e.g. "use-lite" or "openai:text-embedding-3-small";
	// stores record it with the vectors and refuse vectors of another name.
	Name() string
	// Dim is the length of every vector Embed returns.
	Dim() int
}

// LanguageCoverer is an optional Embedder capability: the languages (BCP 47
// base tags, "en", "de") its model was trained on. The search pipeline
// weighs the dense channel down for a query or memory in another language.
// An embedder without it is taken to cover every language.
type LanguageCoverer interface {
	Languages() []string
}

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

type embedPartitionKey struct{}

// WithEmbedPartition returns a context whose Embed calls an embedder that
// keeps what it embeds (a cache) files under the partition of n: its org,
// project and user (agent and session are ignored). What one partition
// embedded never answers another's call, so how fast a text is embedded
// tells nothing about other tenants' or users' texts.
func WithEmbedPartition(ctx context.Context, n Namespace) context.Context {
	return context.WithValue(ctx, embedPartitionKey{}, Namespace{Org: n.Org, Project: n.Project, User: n.User})
}

// EmbedPartitionFrom returns the partition set by WithEmbedPartition, or the
// zero Namespace (the partition of calls that name none).
func EmbedPartitionFrom(ctx context.Context) Namespace {
	n, _ := ctx.Value(embedPartitionKey{}).(Namespace)
	return n
}

// EmbedForgetter is an optional Embedder capability of embedders that keep
// what they embedded (embedcache). The engine calls it after a hard delete
// or a purge so that a deleted text leaves no trace in the cache; an
// embedder that keeps nothing lacks it and is not asked.
type EmbedForgetter interface {
	// ForgetTexts removes what was kept for texts in the partition of n
	// (org, project, user) and in its tenant's partition without a user. It
	// fails only when the removal could not be made durable.
	ForgetTexts(ctx context.Context, n Namespace, texts []string) error
	// ForgetTenant removes everything kept for every partition of n's
	// tenant (org, project). It fails like ForgetTexts.
	ForgetTenant(ctx context.Context, n Namespace) error
}

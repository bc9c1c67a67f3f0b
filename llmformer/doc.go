// Package llmformer forms and consolidates memories with an
// OpenAI-compatible chat model. For a batch of turns (and the last turns
// stored before it) one extraction call proposes memory candidates, groups
// the turns into episodes with a narrative summary, and marks plans as
// foresight with a validity window; then, for each candidate that has
// neighbours in the scope, one decision call chooses ADD, MERGE, UPDATE,
// SUPERSEDE, DELETE, NOOP or CONFLICT against them, shown to the model by
// small integers rather than ids; finally, when candidates bear on the
// user's profile, one call rewrites the capacity-bounded profile memory.
//
// Every reply is parsed tolerantly (code fences, leading prose) and then
// validated field by field; an invalid or failed reply fails the whole
// formation with the reason, so the engine stores nothing half-way and its
// caller (or job queue) retries. The former only reads, through the
// engine's scope reader; the engine applies its operations.
package llmformer

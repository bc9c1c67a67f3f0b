// Package finetune turns one user's memories into training data for a
// personal model, after Second Me's idea of training a model on a person's
// memories: chat-format supervised examples (SFT), one or more questions
// each current memory answers with the answer in the user's own voice, and
// preference pairs (DPO) that prefer a fact's current value to the values
// it replaced and the current profile to an earlier one.
//
// It reads through engram.Service's Export, so it works the same over a
// local engine and over a server (where the API key's binding limits what
// is read). Questions and answers come from templates per memory kind and
// per fact attribute in English, German, Spanish and French (Chinese for
// the generic kinds), or, when a chat model is configured, from the model,
// falling back to the templates for any reply that is not usable.
//
// Only current memories are taught as current: deleted, expired, lapsed,
// superseded and no-longer-valid memories are never an SFT answer nor a
// chosen reply, and vault memories are never read at all.
package finetune

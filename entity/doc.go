// Package entity finds the entities a memory names and resolves them
// against the entities a user already has, without an LLM: names from the
// memory's speaker, its cue anchors and the proper names of its text
// (package lang, with its German rule), typed where a word around them
// says so cheaply (a speaker is a person, a name after "in", "nach", "en"
// or "à" a place, a quoted title a work). Resolution runs in stages,
// cheapest first: the same normalised name or alias, then fuzzy rules (a
// German transliteration, a known short form of a given name, a given name
// or surname alone for a person's full name, a small edit distance for
// long names), each refusing to join entities of incompatible types. Data
// flows one way: memories in, candidate entities out; the engine stores
// them.
//
// The costlier stages (Resolver) follow when configured: cosine
// similarity of name and summary under an engram.Embedder, and a chat
// model's confirmation (LLMConfirmer). Tried and not kept as a joining
// stage: USE-lite over bare names, which at cosine 0.90 adds one false
// join and no true one, and at 0.80 one true join for six false ones
// (TestResolutionStagesEmbedding); it gates the model stage instead.
// FromFormer reads the typed entities and labelled relations the LLM
// former leaves on a memory.
//
// Measured on testdata/pairs.tsv (English, German and Spanish mention
// pairs labelled by hand, hard negatives included): see TestResolutionQuality
// for the precision and recall it asserts.
package entity

// Package retrieval is the query side of engram's search. Analyze reads a
// question (terms, names, its language, the period it names, the kind of
// answer it wants, whom it asks about). Channels (Channel: BM25, Temporal,
// and the engine's dense channel) gather candidates within a scope and
// filter through an engram.Reader, each handing back its ranked finds
// (Find), which the Gathering merges into candidates. Fuse combines their
// verdicts (weighted
// z-scores of the channel scores; scores relative to each channel's best
// when the pool is too small for z-scores; plus neighbour and
// conversation smoothing), Rerank applies the query's hints and the MIRaS
// signals, Spread gives the first places of a gathering question to
// different conversations, Current orders the states of one changing
// thing by when they became true (latest first for a question about the
// present, earliest for one about the past), Collapse gives each source
// turn one place (a hit that repeats a turn of a higher one collapses into
// it), and Assembler builds a token-budgeted context with citations.
// Package engine registers the channels and runs these steps.
//
// The pipeline's parts are general: a boost or a channel is kept only when
// it helps on data it was not tuned on (held-out LoCoMo conversations, the
// everyday assistant conversations in eval/testdata, other languages), and
// no feature is keyed to one benchmark's phrasing, question types, labels
// or file names. docs/retrieval-tuning.md records what was measured, what
// was kept and what was not.
package retrieval

// Package retrieval is the query side of engram's search: it reads a
// question (Analyze: terms, names, the period it names, the kind of answer
// it wants, whom it asks about), fuses the rankings of the channels that
// found candidates (Fuse: weighted z-scores of the channel scores, falling
// back to reciprocal rank fusion when the pool is small, plus the
// neighbour and conversation smoothing below), reranks them with the
// query's hints and the MIRaS signals (Rerank), diversifies (MMR), expands
// hits to their neighbouring turns (Expand), drops turns whose episodes
// higher hits already cite (Dedup) and assembles a token-budgeted context
// with citations (Assemble). It does no I/O: package engine runs the
// channels against the store and the vector index and calls these steps.
//
// DefaultConfig was tuned with `engram eval` on LoCoMo (1,536 questions of
// categories 1-4) and the LongMemEval_S development split (96 questions),
// by kind of question, never by particular questions. What helped (turn
// recall@10 on LoCoMo, session recall@5 on LongMemEval): z-score fusion
// instead of RRF (RRF let the weak embedding drown BM25's confident top
// hits); indexing each turn with the other party's turn before and after
// it (a question and its answer explain each other); leaving the names of
// speakers out of the full-text query and boosting their lines instead;
// the conversation boost Scene (LoCoMo 0.771 to 0.789, LongMemEval 0.927 to
// 0.905: casual conversations keep to a topic, while an assistant chat
// mentions personal facts in passing, so it is kept small). What did not:
// pseudo-relevance feedback (a second full-text pass with the words the
// first hits share: 0.785, twice the latency), equal channel weights,
// diversity across conversations by MMR (0.789, and LongMemEval's session
// recall fell further), the neighbouring turns as cues instead of in the
// abstraction, expanding each of the top 3 hits with its neighbouring turns
// (Expand: 0.736, the neighbours push evidence out of the top 10; it is
// off by default), a pool of 200 candidates per channel (0.791, 1.5 ms
// more), giving every candidate its real dense similarity instead of the
// dense channel's weakest when only BM25 found it (LoCoMo 0.792,
// LongMemEval 0.880). Around the defaults the speaker, time, period,
// smoothing and channel weights move LoCoMo recall@10 by less than 0.003.
package retrieval

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
// mentions personal facts in passing, so it is kept small); telling
// conversations apart by the client's session rather than by pauses (the
// harness files each session in the namespace's session, as a chat client
// does); for questions that gather their answer from several occasions
// ("how many", "in total", "which ... first", "currently"), filling the
// first five places from different conversations (Spread: LongMemEval
// 0.905 to 0.946, LoCoMo unchanged at 0.789, its category 1 0.462 to
// 0.465; spreading across all the first 50 places instead cost LoCoMo
// 0.02); ranking the temporal channel's memories by the words they share
// with the query (LoCoMo 0.789 to 0.791); embedding the query in four
// phrasings, the question stripped and as typed, each with and without the
// names it holds, and searching with their mean (LoCoMo 0.791 to 0.803,
// within 1,000 tokens 0.845 to 0.856, every category up; the dense
// channel alone, queried so, 0.488 to 0.499; LongMemEval session recall@5 0.954 to 0.949: the first-person
// questions there hold no names, and the question form adds little);
// searching the dense channel for each occasion a comparison names ("which
// came first, A or B?", "between A and B") as well as for the whole
// question (LongMemEval back to 0.954, LoCoMo unchanged); spreading the
// first places of questions placed by a past relative period ("two months
// ago", "last month"; LongMemEval 0.946 to 0.954, LoCoMo unchanged). Of the
// phrasings, the stripped question with and without names alone gave
// LoCoMo 0.796 and LongMemEval 0.954, the stripped question without names
// alone LoCoMo 0.791 (temporal questions fell 0.857 to 0.841), and adding
// the query's bare terms 0.792. With sessions told apart the
// conversation boost no longer moves LongMemEval (0.946 at Scene 0, 0.15,
// 0.3; 0.941 at 0.5) and 0.5 gives LoCoMo nothing. Spreading the first
// places of every question too (SpreadOther) trades one benchmark for the
// other: 0.2 gives LongMemEval 0.949 and LoCoMo 0.789, 0.3 gives 0.952 and
// 0.785, with LoCoMo recall@5 falling from 0.705 to 0.661; it is off. What
// did not:
// embedding each sentence of a memory's value as a vector of its own
// (dense alone 0.488 to 0.476, fused unchanged at 0.791), bm25() column
// weights other than 1, 2, 1.5 for value, abstraction and cues (0.787 to
// 0.792),
// pseudo-relevance feedback (a second full-text pass with the words the
// first hits share: 0.785, twice the latency), equal channel weights,
// diversity across conversations by MMR (0.789, and LongMemEval's session
// recall fell further), the neighbouring turns as cues instead of in the
// abstraction, expanding each of the top 3 hits with its neighbouring turns
// (Expand: 0.736, the neighbours push evidence out of the top 10; it is
// off by default), a pool of 200 candidates per channel (0.791, 1.5 ms
// more), giving every candidate its real dense similarity instead of the
// dense channel's weakest when only BM25 found it (LoCoMo 0.792,
// LongMemEval 0.880), a boost for the share of the query's words a memory
// holds (LoCoMo 0.793, LongMemEval turn recall within 2,000 tokens 0.976 to
// 0.948), widening relative periods in questions by a day to a week (no
// change on either), the temporal channel at weight 1 or 2 (0.791 either
// way), and a logistic-regression reranker over the channel ranks and
// boosts, fitted on five LoCoMo conversations and tested on the other five
// (0.747 and 0.759 against the hand-tuned 0.775 and 0.800). Around the
// defaults the speaker, time, period, smoothing and channel weights move
// LoCoMo recall@10 by less than 0.003.
package retrieval

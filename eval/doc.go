// Package eval is the retrieval evaluation harness behind `engram eval`: it
// loads a public long-term-memory benchmark (LoCoMo or LongMemEval), ingests
// each conversation or haystack into its own namespace through the public
// engram.Service API (each session in the namespace's session of that name,
// a session per call, or a turn per call with Config.TurnAtATime), asks
// every question of several retrieval systems, and scores where the
// evidence turned up.
//
// Labels never reach the engine. Parsing splits each benchmark into what a
// user of engram would have (turns with speakers, times and their own ids;
// questions) and what only a grader has (evidence ids, has_answer flags,
// answer sessions, answers, categories). The first half is ingested and
// searched; the second half is read only by the scorer. Ids the benchmark
// wrote (haystack ids, session ids, dia_ids) can carry labels — LongMemEval
// names evidence sessions "answer_…" — so the engine gets them only as
// salted hashes (namespace user and session, metadata); the harness keeps
// the originals for scoring.
//
// Time. Every search passes the question's date as SearchRequest.Now, as a
// client asking at that moment would; LoCoMo gives no question date, so its
// searches pass the time of the conversation's latest turn. report.json's
// run.now says which.
//
// Units and citations. A LoCoMo unit is a dialog turn (its dia_id); a
// LongMemEval unit is a turn ("<session_id>#<i>") or, at session level, a
// session. A hit cites the units of the episodes in its Memory.Sources.
//
// Metrics, per level (turn; and session for LongMemEval), overall and by
// category, averaged over scored questions:
//
//   - recall@K (K = 1, 5, 10, 20): fraction of the question's evidence units
//     cited by the top K hits; all@K: fraction of questions with every unit
//     cited in the top K.
//   - ndcg@10: binary gains, where a hit gains 1 when it cites an evidence
//     unit no higher hit cited, so a question's ideal DCG is reached by
//     putting one new unit per rank first.
//   - mrr: reciprocal rank of the first hit citing any evidence unit, 0 when
//     none of the top K does.
//   - recall_tokens@B (B = 500, 1000, 2000, 4000): hits of a deeper search
//     (PoolK) are rendered in rank order and appended to a context while it
//     stays within B cl100k tokens; the first hit that would overflow stops
//     assembly. A turn is found when its full text is a substring of an
//     assembled hit; a session is found when an assembled hit cites one of
//     its turns and contains that turn's full text. Each rendered hit costs
//     its own token count plus one for the newline separating it.
//   - context_tokens_mean@B: mean tokens of that assembled context;
//     context_tokens_mean: mean tokens of the top 10 hits without a budget
//     (for "full", of the whole history); hit_tokens_mean: mean tokens of one
//     rendered hit in the top K.
//
// Rendering. A hit enters a context as "[YYYY-MM-DD HH:MM] who: value",
// from the memory's valid_from and its "speaker" (else "role") metadata; a
// history turn for "full" is rendered the same way from the turn itself.
//
// Systems: "engram" (default Search), "bm25" and "dense" (Search restricted
// to one channel; a channel the engine refuses or ignores makes the system
// "unavailable" with the reason), and "full", the whole history in order as
// the context. For "full" at budget B the context keeps the most recent
// turns that fit in B tokens (oldest dropped first), as a chat agent with a
// B-token window would.
//
// All search systems query the same namespaces, filled once, so they share
// one ingest_per_s. Only engram's searches count as reads (a memory's
// access count and last read feed its rank); the ablations, the channel
// probe and the untimed warm-up search after an ingest search under
// engram.WithoutAccess, and engram asks each question last, so every
// system sees the reads of engram's earlier questions and a system's
// rankings do not depend on which others run. Search latency is timed on the ranked (K) search; the
// deeper pool search is reported apart as pool_latency_ms.
//
// Questions left out of recall: LoCoMo category 5 (adversarial), LongMemEval
// abstention questions (id ending in "_abs"), and questions with no valid
// evidence after parsing. Every question is still searched, so rankings do
// not depend on labels.
package eval

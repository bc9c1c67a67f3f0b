package eval

import (
	"crypto/sha256"
	"encoding/hex"
)

// opaqueSalt is fixed so that a run is reproducible and two runs of one
// file send the engine the same names.
const opaqueSalt = "engram-eval/opaque/v1\x00"

// opaque turns a benchmark's own identifier (a session id, a haystack id,
// a dia_id) into the name the engine sees: the first 16 hex digits of the
// salted SHA-256. Benchmark ids can carry labels — LongMemEval names its
// evidence sessions "answer_…" — so none reaches the engine as written.
// The harness keeps the original ids for scoring.
func opaque(id string) string {
	sum := sha256.Sum256([]byte(opaqueSalt + id))
	return hex.EncodeToString(sum[:8])
}

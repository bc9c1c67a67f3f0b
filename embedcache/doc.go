// Package embedcache caches embeddings by content hash so that no text is
// embedded twice by the same model: not within a call, not across calls,
// and, with a disk store, not across process restarts or re-imports.
//
// A Cache wraps an engram.Embedder and is one itself, with the same Name and
// Dim. Each text's key is sha256(inner.Name() + "\x00" + text), so vectors of
// different models (or of one model at different dimensions, whose Names
// differ) never mix; Options.Variant joins the name for vectors one model
// computes in different ways (the int8 and fp32 USE-lite encoders). Lookups go to an in-memory LRU, then to a SQLite file,
// then to the inner embedder, which receives one batched call with only the
// texts found nowhere. Concurrent calls missing the same text share one
// inner call.
//
// The disk store is a cache, not a record: failures to read or write it are
// logged and counted in Stats, and the call proceeds as if the entries were
// missing. A damaged entry is treated as a miss and overwritten.
package embedcache

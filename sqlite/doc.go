// Package sqlite is engram's embedded storage backend: one SQLite database
// file, written through modernc.org/sqlite (pure Go), implementing
// engram.Store.
//
// The file runs in WAL mode with synchronous=FULL, so an Update that returned
// nil survives a killed process and a power loss. All writes go through one
// connection, in BEGIN IMMEDIATE transactions, so they are serialised in
// this process and wait up to ten seconds for a writer in another process
// before failing with EUNAVAILABLE; reads use a separate pool and never wait
// for the writer. Updates queued while a transaction commits share the next
// one (group commit), so one sync to disk covers them; each runs in its
// own savepoint, so a failing update undoes only its own writes, and each
// returns only after the commit that holds it.
//
// Memories and episodes are indexed with FTS5 (unicode61, diacritics
// removed) and ranked by BM25. Runs of Chinese, Japanese and Korean
// characters are indexed as overlapping bigrams, since the tokenizer would
// otherwise keep a whole sentence as one token and no word inside it could be
// found. Free-text queries are tokenised in Go and every term is quoted, so a
// query can never be read as FTS5 syntax. One index serves every tenant, so
// each memory's row also holds a token derived from a hash of its tenant and
// user, and every search ANDs its scope's tokens into the MATCH: FTS5 then
// walks only the caller's rows, whatever the other tenants hold. BM25's
// document frequencies remain those of the whole file.
//
// Embeddings are rows of little-endian float32s, one per memory, field and
// embedder, so that the vectors of two models coexist while a store is
// re-embedded. The store does no similarity search: ScanVectors streams a
// scope's vectors to the caller, which indexes them.
package sqlite

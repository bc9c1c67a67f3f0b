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
// Memories are indexed with FTS5 (unicode61, diacritics removed) and
// ranked by BM25; episodes are not, since nothing searches their words. Runs of Chinese, Japanese and Korean
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
//
// Resources (engram.ResourceReader) keep their content in the database, as
// rows of resource_chunks of at most 1 MiB. A blob directory beside the
// file is faster (BenchmarkResourceStorage, write then read: 65 MB/s in
// the database against 158 MB/s in files for 1 MB, 46 MB/s against 352
// MB/s for 50 MB, on a shared 2-core machine), since every chunk goes
// through the WAL and then the database. The database was chosen anyway:
// a resource's bytes, its memories and a purge of its scope commit in the
// same transactions as every other record, secure_delete and the scrub
// cover them like other rows (the residue test checks), and a backup,
// migrate-store or crash leaves no file without its row or row without its
// file.
package sqlite

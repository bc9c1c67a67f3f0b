// Package postgres is engram's storage backend for PostgreSQL, written on
// pgx (pgxpool), implementing engram.Store with the same behaviour as the
// embedded SQLite store: both pass the storetest and enginetest suites. It
// is what several stateless engram servers share when one machine is
// outgrown.
//
// Open connects, then applies the embedded migrations it has not seen under
// an advisory lock, so several servers may start at once. Update is one
// READ COMMITTED transaction in which GetMemory locks the row it returns
// (read-modify-write is safe without retries, since fn may have side
// effects); View is one REPEATABLE READ READ ONLY transaction, a snapshot.
// Every connection carries a statement timeout. An unreachable database, a
// timeout or a standby that cannot write is EUNAVAILABLE with a sentence
// naming the database's address; a failed Update leaves nothing behind.
//
// Full text: each memory's value, abstraction and cues are reduced by the
// program to lower-case words with CJK runs split into bigrams (package
// textsearch, shared with the SQLite store) and stored; a generated tsvector
// column builds on them with the 'simple' configuration (no stemming, no
// stop words, so text in any language is indexed as written), weighted A
// (abstraction), B (cues), C (value), under a GIN index. A query is cut into
// terms by the same rules as in SQLite, each term quoted, and the terms
// ORed for websearch_to_tsquery; hits are ranked by ts_rank_cd. Vectors are
// little-endian float32s in a bytea column: no extension is needed.
//
// Several servers stay fresh through Reader.Changes: every transaction that
// inserts, replaces or purges a memory, or writes its vectors, takes the
// next sequence number of the memory's (tenant, user) from a counter row
// just before it commits and logs the memory's id under it. The counter row
// stays locked until the commit, so the numbers of one partition become
// visible in order.
//
// # Sharding
//
// Every table that holds tenant data has a tenant column, org || '/' ||
// project, and it leads every primary key and every index (the full-text
// index too, when the btree_gin extension is available). It is the
// distribution column: with Citus, distribute episodes, memories,
// memory_versions, audit, memory_vectors, change_counters and changes by
// tenant, co-located, and make meta a reference table. Every call that names
// a Scope or a Namespace (all reads, searches, exports, lists, inserts,
// replaces, purges, touches, vector writes and scans, and Changes) filters by
// one tenant and stays on a single shard, and so does an Update whose writes
// stay within one tenant, which is every request the engine serves. Only the
// maintenance calls cross shards: ScanMemories (re-embedding, store
// migration) and DeleteVectorsExcept (the end of a re-embedding), and
// Meta/SetMeta, which read and write the reference table.
package postgres

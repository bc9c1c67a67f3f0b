// Package textindex is engram's own in-memory full-text index: BM25 over a
// memory's value, abstraction and cues (weighted as the SQLite store weighs
// its columns), with the analysis the stores' indexes apply (lower case,
// Latin diacritics folded, CJK runs as bigrams; see textsearch), and block-max
// WAND pruning (bounds per list and per run of 16 postings) so that a query
// with a common word does not score every posting.
//
// An Index holds one namespace's documents and its own statistics (document
// count, average length, document frequencies); Search combines the
// statistics of exactly the indexes it is given, so a score never depends
// on documents outside them. The engine keeps one Index per (tenant, user),
// derived from the store and kept fresh through its change log.
package textindex

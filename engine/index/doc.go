// Package index keeps the engine's derived indexes of a store's memories,
// one per (tenant, user): the vector indexes (Vectors, with the memories
// still waiting for their embed job), the full-text indexes (Texts) and
// the memories they cache for searches (the row cache), their files in an
// index directory and the warm-up after a load. Everything here is
// rebuilt from the store: a partition loads on first use, from its file
// when one fits the store, and catches up from the store's change log
// before every search, so writes by other servers on the same database
// are seen. The engine attaches them to a store (NewVectors, NewTexts,
// SetUpFiles), applies each committed write (Batch), hands a search the
// index of its scope (Vectors.Open, Texts.Attach) and saves them
// (SaveAll, Close). The package knows nothing of the engine: it reads
// the store through engram's interfaces and is told of the rest (logger,
// embed observer) when made.
package index

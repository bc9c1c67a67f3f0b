// Package engine implements engram.Service over an engram.Store: it checks
// input, fills defaults, runs memory formation, and turns each request into
// one store transaction that writes the records, their history versions and
// the audit log together. The rules of the domain (version numbering,
// status transitions, supersede, rollback, import conflicts) live here once,
// so every storage backend behaves the same.
//
// Engine is an assembly of capability services over a shared core (see
// services.go): writer applies memory operations in a transaction;
// memories reads and changes memories and their history; ingest stores
// episodes and forms memories, now or in background jobs; searcher runs
// the retrieval pipeline and agentic searches; graphs serves the entity
// graph and communities; media keeps resources, documents and identities;
// admin exports, imports, audits, purges and sweeps. A service calls
// another only through a field it names.
package engine

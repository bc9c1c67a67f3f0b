// Package engine implements engram.Service over an engram.Store: it checks
// input, fills defaults, runs memory formation, and turns each request into
// one store transaction that writes the records, their history versions and
// the audit log together. The rules of the domain (version numbering,
// status transitions, supersede, rollback, import conflicts) live here once,
// so every storage backend behaves the same.
package engine

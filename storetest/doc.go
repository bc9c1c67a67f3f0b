// Package storetest is the conformance suite every engram.Store backend
// runs: call Run from the backend's tests with a function that opens a fresh,
// empty store. The suite uses only the engram.Store, engram.Reader and
// engram.Tx interfaces and the optional capabilities (engram.VectorReader
// and the others, which it requires), so the embedded SQLite store and
// PostgreSQL are held to the same behaviour.
//
// Scope checks derive their expectations from engram.Scope.Contains, the
// reference rule, rather than from hand-written lists. The fixture helpers
// (Episode, Memory, Version, Audit, Put) are exported for other packages'
// tests.
package storetest

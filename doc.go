// Package engram is the domain vocabulary of the engram memory engine: the
// records it keeps (Episode, Memory, Version, AuditEntry), the scope every
// read and write names (Namespace, Scope), the requests and results of its
// operations, the coded errors they fail with, and the small interfaces that
// the subpackages implement (Service, Store, Former).
//
// Data flows one way: episodes are stored losslessly, a Former turns them
// into memory operations, memories are indexed, and retrieval reads them
// back. This package imports nothing of the project.
package engram

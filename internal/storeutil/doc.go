// Package storeutil holds the backend-neutral pieces shared by the storage
// backends (sqlite and postgres): record and input checks, list cursors,
// the little-endian vector layout, JSON decoding that keeps numbers exact,
// and the listing of embedded migration files. Everything here is pure Go
// with no I/O beyond reading an fs.FS, so both backends answer bad input
// with the same errors.
package storeutil

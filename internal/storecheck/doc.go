// Package storecheck puts the checks of the store contract (scopes,
// namespaces, ids, limits, records handed to a write) in front of a
// backend's transactions, once for every backend: sqlite and postgres hand
// the function of Update, View and ReadFresh their transaction wrapped by
// NewTx or NewReader, and their own methods hold only what is theirs (the
// SQL, and the few limits of their column types, given as Options).
//
// A wrapped method checks its arguments in the order the contract reports
// them and returns the first failure, an EINVALID *engram.Error, without
// calling the backend; otherwise it calls the backend with the same
// arguments, or with a limit replaced by the value it stands for (0 by the
// default page size), which the backend's documentation then says.
package storecheck

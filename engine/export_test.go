package engine

import (
	"github.com/engramhq/engram"
)

// WaitRowWarming waits until the row caches e began to warm in the
// background are warm (see index.Texts.WaitWarming).
func WaitRowWarming(e *Engine) {
	e.text.WaitWarming()
}

// CachedRows returns how many memories the row cache of n's user holds,
// and the bytes all row caches of e hold together.
func CachedRows(e *Engine, n engram.Namespace) (int, int64) {
	return e.text.CachedRows(n)
}

// KeepNoGraph makes e keep no entity graph, as over a store without
// engram.GraphWriter, so benchmarks can show what the graph costs a write
// with every other capability of the store in use.
func KeepNoGraph(e *Engine) { e.noGraph = true }

package engine

import (
	"github.com/engramhq/engram"
)

// WaitRowWarming waits until the row caches e began to warm in the
// background are warm (see texts.warm).
func WaitRowWarming(e *Engine) {
	if e.text != nil {
		e.text.warming.Wait()
	}
}

// CachedRows returns how many memories the row cache of n's user holds,
// and the bytes all row caches of e hold together.
func CachedRows(e *Engine, n engram.Namespace) (int, int64) {
	if e.text == nil {
		return 0, 0
	}
	e.text.mu.Lock()
	p := e.text.parts[partKey{n.Org, n.Project, n.User}]
	e.text.mu.Unlock()
	if p == nil {
		return 0, e.text.rowTotal.Load()
	}
	p.rows.mu.RLock()
	defer p.rows.mu.RUnlock()
	return len(p.rows.m), e.text.rowTotal.Load()
}

// KeepNoGraph makes e keep no entity graph, as over a store without
// engram.GraphWriter, so benchmarks can show what the graph costs a write
// with every other capability of the store in use.
func KeepNoGraph(e *Engine) { e.noGraph = true }

package index

import (
	"github.com/engramhq/engram"
	"github.com/engramhq/engram/textindex"
)

// earlyRead is the result of reading a partition's file, once done is
// closed.
type earlyRead struct {
	done  chan struct{}
	idx   *textindex.Index[memAttr]
	seq   int64
	names map[string]string
	err   error
}

// ReadEarly begins reading, in the background, the files of the text
// partitions of scope s that are not loaded, so that a search's load
// finds them read: a search loads its vector index before it opens its
// transaction and loads its text index in it, and after a restart both
// come from files (reading a 1M-memory text index took 6.6 s, the graph
// 16.8 s). It reads only files, holds no connection and waits for no
// lock: a partition some search holds is left to it.
func (t *Texts) ReadEarly(s engram.Scope) {
	if t == nil || t.files == nil {
		return
	}
	keys := []partKey{{s.Org, s.Project, s.User}}
	if s.IncludeShared && s.User != "" {
		keys = append(keys, partKey{s.Org, s.Project, ""})
	}
	for _, k := range keys {
		t.mu.Lock()
		p := t.parts[k]
		if p == nil {
			p = &textPart{}
			t.parts[k] = p
		}
		closed := t.closed
		t.mu.Unlock()
		if closed || !p.mu.TryRLock() {
			continue
		}
		// Under p.mu no load can begin, so the load after this one takes
		// the read begun here.
		if !p.loaded {
			p.earlyMu.Lock()
			if p.early == nil {
				e := &earlyRead{done: make(chan struct{})}
				p.early = e
				go t.readInto(k, e)
			}
			p.earlyMu.Unlock()
		}
		p.mu.RUnlock()
	}
}

// readInto reads partition k's file into e and closes e.done.
func (t *Texts) readInto(k partKey, e *earlyRead) {
	defer close(e.done)
	e.names = map[string]string{}
	e.idx, e.seq, e.err = t.files.read(k, interner(e.names))
}

// readFile returns partition k's file as files.read does, with the names
// of its attributes: the read readEarly began for p when there is one,
// else a read now. The caller holds p.mu.
func (t *Texts) readFile(k partKey, p *textPart) (*textindex.Index[memAttr], int64, map[string]string, error) {
	p.earlyMu.Lock()
	e := p.early
	p.early = nil
	p.earlyMu.Unlock()
	if e == nil {
		e = &earlyRead{done: make(chan struct{})}
		t.readInto(k, e)
	}
	<-e.done
	return e.idx, e.seq, e.names, e.err
}

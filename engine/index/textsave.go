package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/engramhq/engram"
)

// SetUpFiles makes t keep its indexes in dir/<store id>, beside the vector
// index files: a namespace's index is loaded from its file on first use
// and caught up from the change log, and saved after a load from the
// store, every interval while it changes, and on close. A store without
// an id (no engram.MetaWriter) or a directory that cannot be written is
// logged and the indexes are built from the store at each start. It fails
// only when the store cannot be read or written.
func (t *Texts) SetUpFiles(ctx context.Context, st engram.Store, dir string, every time.Duration, log *slog.Logger) error {
	if t == nil {
		return nil
	}
	id, err := storeID(ctx, st)
	if engram.ErrorCode(err) == engram.EINVALID {
		log.WarnContext(ctx, "engine: text indexes will not be saved: the store keeps no id", "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the store's id for the index files: %w", err)
	}
	f := &textFiles{dir: filepath.Join(dir, id), store: id}
	if err := probeDir(f.dir); err != nil {
		log.WarnContext(ctx, "engine: text indexes will not be saved; they are built at each start", "dir", f.dir, "err", err)
		return nil
	}
	removeTemps(ctx, f.dir, textExt, log)
	t.files, t.store, t.log = f, st, log
	if every <= 0 {
		every = DefaultIndexSaveEvery
	}
	t.stop = make(chan struct{})
	t.wg.Go(func() { t.saveLoop(every) })
	return nil
}

// saveLoop saves the changed indexes every interval until t.stop closes.
func (t *Texts) saveLoop(every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			if err := t.SaveAll(context.Background()); err != nil {
				t.log.Warn("engine: saving the text indexes failed", "err", err)
			}
		}
	}
}

// saveSoon saves partition k in the background, unless the engine is
// closing: a load from the store is what the file saves at the next
// start.
func (t *Texts) saveSoon(k partKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.wg.Go(func() {
		if err := t.save(context.Background(), []partKey{k}); err != nil {
			t.log.Warn("engine: saving a text index failed", "err", err)
		}
	})
}

// SaveAll saves every loaded index that changed since its last save.
func (t *Texts) SaveAll(ctx context.Context) error {
	if t == nil || t.files == nil {
		return nil
	}
	t.mu.Lock()
	keys := make([]partKey, 0, len(t.parts))
	for k := range t.parts {
		keys = append(keys, k)
	}
	t.mu.Unlock()
	return t.save(ctx, keys)
}

// save catches the loaded indexes of keys up with the change log and
// writes those that changed since their last save. Catching up first, in
// the same hold of t.saveMu that dropFile takes, means a file never
// brings back a memory deleted before the save began. It fails with the
// store's or the file system's error.
func (t *Texts) save(ctx context.Context, keys []partKey) error {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	return t.store.View(ctx, func(r engram.Reader) error {
		var errs []error
		for _, k := range keys {
			t.mu.Lock()
			p := t.parts[k]
			t.mu.Unlock()
			if p != nil {
				errs = append(errs, t.saveOne(ctx, r, k, p))
			}
		}
		return errors.Join(errs...)
	})
}

func (t *Texts) saveOne(ctx context.Context, r engram.Reader, k partKey, p *textPart) error {
	p.mu.Lock()
	if !p.loaded || p.tooLarge {
		p.mu.Unlock()
		return nil
	}
	_, err := t.catchUp(ctx, r, p, engram.Scope{Org: k.org, Project: k.project, User: k.user})
	if engram.ErrorCode(err) == engram.ECONFLICT {
		p.loaded = false // the next search reloads it
		err = nil
	}
	if err != nil || !p.loaded || !p.dirty {
		p.mu.Unlock()
		return err
	}
	p.mu.Unlock()
	p.mu.RLock() // searches go on while the file is written
	defer p.mu.RUnlock()
	if p.idx == nil || !p.dirty {
		return nil
	}
	start := time.Now()
	if err := t.files.write(k, p.seq, p.idx); err != nil {
		return fmt.Errorf("save the text index of %s/%s: %w", k.org, k.project, err)
	}
	p.dirty = false
	t.log.Debug("engine: saved a text index", "tenant", k.org+"/"+k.project, "memories", p.idx.Len(), "took", time.Since(start))
	return nil
}

// loadFile fills the empty partition p from its saved file and catches it
// up with the change log that r reads. It reports false, leaving p empty,
// when there is no usable file: none, one made for another store or
// partition or format, a damaged one, one newer than the store, or one the
// change log can no longer bring up to date; such a file is logged and
// removed. It fails only with the store's error. The caller holds p.mu.
func (t *Texts) loadFile(ctx context.Context, r engram.Reader, p *textPart, k partKey) (bool, error) {
	if t.files == nil {
		return false, nil
	}
	idx, seq, names, err := t.readFile(k, p)
	p.names = names
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.discard(ctx, k, "unreadable", err)
		}
		return false, nil
	}
	scope := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	_, now, err := r.Changes(ctx, scope, -1)
	if err != nil {
		return false, err
	}
	if seq > now {
		t.discard(ctx, k, "newer than the store (was it restored from a backup?)", nil)
		return false, nil
	}
	p.idx, p.seq, p.loaded, p.tooLarge, p.dirty = idx, seq, true, false, false
	_, err = t.catchUp(ctx, r, p, scope)
	over := false
	if err == nil {
		over, err = t.tooMany(ctx, r, p, p.idx.Len())
	}
	switch {
	case engram.ErrorCode(err) == engram.ECONFLICT:
		t.discard(ctx, k, "older than the change log keeps", err)
	case err != nil:
		p.idx, p.loaded = nil, false
		t.count(p)
		return false, err
	case over:
		// The limit was lowered since: load marks the namespace too large.
	default:
		t.count(p)
		t.log.DebugContext(ctx, "engine: loaded a saved text index", "tenant", k.org+"/"+k.project, "memories", p.idx.Len(), "seq", seq, "caught_up_to", p.seq)
		return true, nil
	}
	p.idx, p.seq, p.loaded = nil, 0, false
	t.count(p)
	return false, nil
}

// discard logs why partition k's file is not used and removes it.
func (t *Texts) discard(ctx context.Context, k partKey, why string, err error) {
	t.log.WarnContext(ctx, "engine: a saved text index is "+why+"; rebuilding it from the store", "tenant", k.org+"/"+k.project, "file", t.files.path(k), "err", err)
	if err := t.files.remove(k); err != nil {
		t.log.WarnContext(ctx, "engine: removing a saved text index failed", "file", t.files.path(k), "err", err)
	}
}

// DropFile removes the saved index of n's (tenant, user) after a hard
// delete or purge, so that no deleted memory's words stay on disk; the
// index in memory, caught up with the delete, is saved again later. It
// waits for a save in progress. It fails with the file system's error.
func (t *Texts) DropFile(n engram.Namespace) error {
	if t == nil || t.files == nil {
		return nil
	}
	k := partKey{n.Org, n.Project, n.User}
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	if err := t.files.remove(k); err != nil {
		return err
	}
	t.mu.Lock()
	p := t.parts[k]
	t.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.dirty = p.loaded && !p.tooLarge
		p.mu.Unlock()
	}
	return nil
}

// Close stops the saver and saves the indexes that changed.
func (t *Texts) Close() error {
	if t == nil || t.stop == nil {
		return nil
	}
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	close(t.stop)
	t.wg.Wait()
	return t.SaveAll(context.Background())
}

package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vector"
)

// DefaultIndexSaveEvery is how often, by default, the vector indexes that
// changed since they were last saved are written to the index directory.
const DefaultIndexSaveEvery = 10 * time.Minute

// setUpIndexFiles makes v keep its approximate indexes in dir: it reads or
// records the store's id (MetaIndexStore), creates dir/<store id> and
// starts the periodic saver. A directory that cannot be created or
// written is logged and persistence stays off: the engine works as
// without it. It fails only when the store cannot be read or written.
func (v *Vectors) SetUpFiles(ctx context.Context, dir string, every time.Duration, log *slog.Logger) error {
	id, err := storeID(ctx, v.store)
	if err != nil {
		return fmt.Errorf("read the store's id for the index files: %w", err)
	}
	f := &annFiles{dir: filepath.Join(dir, id), store: id, emb: v.emb.Name(), dim: v.emb.Dim()}
	if err := probeDir(f.dir); err != nil {
		log.WarnContext(ctx, "engine: vector indexes will not be saved; they are built at each start", "dir", f.dir, "err", err)
		return nil
	}
	removeTemps(ctx, f.dir, annExt, log)
	v.files, v.log = f, log
	if every <= 0 {
		every = DefaultIndexSaveEvery
	}
	v.stop = make(chan struct{})
	v.wg.Go(func() { v.saveLoop(every) })
	return nil
}

// storeID returns the store's MetaIndexStore, recording a new one first
// when it has none.
func storeID(ctx context.Context, st engram.Store) (string, error) {
	var id string
	err := st.Update(ctx, func(tx engram.Tx) error {
		var err error
		if id, err = tx.Meta(ctx, MetaIndexStore); err != nil || id != "" {
			return err
		}
		id = newStoreID()
		return tx.SetMeta(ctx, MetaIndexStore, id)
	})
	return id, err
}

// removeTemps removes the temporary files with extension ext a save cut
// short (a crash) left in dir: they may hold memories deleted since.
func removeTemps(ctx context.Context, dir, ext string, log *slog.Logger) {
	tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"+ext))
	for _, t := range tmps {
		if err := os.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.WarnContext(ctx, "engine: removing an unfinished index file failed", "file", t, "err", err)
		}
	}
}

// probeDir creates dir and checks that a file can be written in it.
func probeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// saveLoop catches up and saves the changed indexes every interval until
// v.stop closes. Catching up first means that a delete another server made
// (sharing a PostgreSQL database, not this directory) leaves this
// server's files within one interval.
func (v *Vectors) saveLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			ctx := context.Background()
			v.Refresh(ctx)
			if err := v.SaveAll(ctx, false); err != nil {
				v.log.WarnContext(ctx, "engine: saving the vector indexes failed", "err", err)
			}
		}
	}
}

// refresh catches every loaded index up with the store's change log.
func (v *Vectors) Refresh(ctx context.Context) {
	v.mu.Lock()
	keys := make([]partKey, 0, len(v.parts))
	for k := range v.parts {
		keys = append(keys, k)
	}
	v.mu.Unlock()
	for _, k := range keys {
		if _, err := v.partition(ctx, k); err != nil {
			v.log.WarnContext(ctx, "engine: catching a vector index up failed", "tenant", k.org+"/"+k.project, "err", err)
		}
	}
}

// SaveAll saves every loaded index that changed since its last save. With
// wait set it first waits for background graph builds (or ctx).
func (v *Vectors) SaveAll(ctx context.Context, wait bool) error {
	v.mu.Lock()
	parts := make(map[partKey]*partition, len(v.parts))
	for k, p := range v.parts {
		parts[k] = p
	}
	v.mu.Unlock()
	var errs []error
	for k, p := range parts {
		if wait {
			if a, ok := p.index().(*vector.Auto); ok {
				if err := a.Wait(ctx); err != nil {
					return err
				}
			}
		}
		errs = append(errs, v.save(k, p))
	}
	return errors.Join(errs...)
}

// saveAfterBuild saves p once the graph its index builds in the
// background is ready, unless the engine closes first.
func (v *Vectors) saveAfterBuild(k partKey, p *partition, a *vector.Auto) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	v.wg.Go(func() {
		defer cancel()
		go func() {
			select {
			case <-v.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		if a.Wait(ctx) == nil {
			if err := v.save(k, p); err != nil {
				v.log.Warn("engine: saving a vector index failed", "err", err)
			}
		}
	})
}

// save writes p's graph to its file when p changed since its last save
// and its index answers from a graph (an exact index is as quick to
// rebuild as to load). Saves run one at a time; searches go on meanwhile
// but writes to p wait, and with them the searches queued behind a write
// (about a second per 400 MB written).
func (v *Vectors) save(k partKey, p *partition) error {
	if v.files == nil {
		return nil
	}
	v.saveMu.Lock()
	defer v.saveMu.Unlock()
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.loaded || p.gone || !p.dirty {
		return nil
	}
	a, ok := p.idx.(*vector.Auto)
	if !ok || a.Graph() == nil {
		return nil
	}
	start := time.Now()
	if err := v.files.write(k, p.seq, a.Graph(), p.ns); err != nil {
		return fmt.Errorf("save the vector index of %s/%s: %w", k.org, k.project, err)
	}
	p.dirty = false
	v.log.Debug("engine: saved a vector index", "tenant", k.org+"/"+k.project, "vectors", a.Len(), "took", time.Since(start))
	return nil
}

// loadFile fills the empty partition p from its saved file and catches it
// up with the store's change log. It reports false, leaving p empty, when
// there is no usable file: none, one made for something else, a damaged
// one, or one the change log cannot bring up to date; such a file is
// logged and removed. It reads the store through r. It fails only with
// the store's error. The caller holds p.mu.
func (v *Vectors) loadFile(ctx context.Context, r engram.Reader, k partKey, p *partition) (bool, error) {
	if v.files == nil {
		return false, nil
	}
	a, ok := v.newIndex(v.emb.Dim()).(*vector.Auto)
	if !ok {
		return false, nil
	}
	f, err := v.files.read(k, 0)
	if err == nil {
		err = a.Adopt(f.graph)
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			v.discard(ctx, k, "unreadable", err)
		}
		return false, nil
	}
	p.idx, p.ns, p.seq, p.loaded = a, f.ns, f.seq, true
	err = v.catchUp(ctx, r, p, engram.Scope{Org: k.org, Project: k.project, User: k.user})
	switch {
	case engram.ErrorCode(err) == engram.ECONFLICT:
		v.discard(ctx, k, "older than the change log keeps", err)
	case err != nil:
		p.loaded = false
		return false, err
	case p.seq < f.seq:
		v.discard(ctx, k, "newer than the store (was it restored from a backup?)", nil)
	default:
		v.log.DebugContext(ctx, "engine: loaded a saved vector index", "tenant", k.org+"/"+k.project, "vectors", p.idx.Len(), "seq", f.seq, "caught_up_to", p.seq)
		return true, nil
	}
	p.idx, p.ns, p.seq, p.loaded = nil, nil, 0, false
	return false, nil
}

// discard logs why partition k's file is not used and removes it.
func (v *Vectors) discard(ctx context.Context, k partKey, why string, err error) {
	v.log.WarnContext(ctx, "engine: a saved vector index is "+why+"; rebuilding it from the store", "tenant", k.org+"/"+k.project, "file", v.files.path(k), "err", err)
	if err := v.files.remove(k); err != nil {
		v.log.WarnContext(ctx, "engine: removing a saved vector index failed", "file", v.files.path(k), "err", err)
	}
}

// DropFile removes the saved index of n's (tenant, user) after a hard
// delete or purge, so that no deleted vector stays on disk, and catches
// the index in memory up with the change log before any save may run
// again: a save that started from an index still holding the deleted
// vector (a graph finishing its build in the background) would otherwise
// write it back. The index is saved again later. It waits for a save in
// progress. It fails with the file system's or the store's error.
func (v *Vectors) DropFile(ctx context.Context, n engram.Namespace) error {
	if v == nil || v.files == nil {
		return nil
	}
	k := partKey{n.Org, n.Project, n.User}
	v.saveMu.Lock()
	defer v.saveMu.Unlock()
	if err := v.files.remove(k); err != nil {
		return err
	}
	v.mu.Lock()
	p := v.parts[k]
	v.mu.Unlock()
	if p == nil {
		return nil
	}
	// The transaction first, then p.mu, as partitionIn takes them.
	return v.store.View(ctx, func(r engram.Reader) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.dirty = true
		if !p.loaded || p.gone {
			return nil
		}
		return v.catchUp(ctx, r, p, engram.Scope{Org: k.org, Project: k.project, User: k.user})
	})
}

// Close stops the saver and saves the indexes that changed, without
// waiting for graphs still being built.
func (v *Vectors) Close() error {
	if v == nil || v.stop == nil {
		return nil
	}
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
	close(v.stop)
	v.wg.Wait()
	return v.SaveAll(context.Background(), false)
}

// index returns p's index under its lock.
func (p *partition) index() vector.Index {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.idx
}

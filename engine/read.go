package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/engramhq/engram"
)

// unmarshal decodes JSON keeping numbers as json.Number, so metadata
// round-trips without float rounding.
func unmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// GetEpisode implements engram.Service.
func (e *Engine) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := engram.CheckID("episode", id); err != nil {
		return nil, err
	}
	var out *engram.Episode
	err = e.store.View(ctx, func(r engram.Reader) error {
		out, err = r.GetEpisode(ctx, s, id)
		return err
	})
	return out, err
}

// GetMemory implements engram.Service. It counts as an access. A vault
// memory is not found unless ctx carries engram.WithVault; then it is
// returned decrypted, and the read audited.
func (e *Engine) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := engram.CheckID("memory", id); err != nil {
		return nil, err
	}
	var out *engram.Memory
	err = e.store.View(ctx, func(r engram.Reader) error {
		out, err = visible(ctx, r, s, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := e.reveal(ctx, s, "get", out); err != nil {
		return nil, err
	}
	e.access.record(out.Namespace, e.clock(), out.ID)
	return out, nil
}

// ListEpisodes implements engram.Service.
func (e *Engine) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) (*engram.EpisodePage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	page := &engram.EpisodePage{}
	err = e.store.View(ctx, func(r engram.Reader) error {
		page.Episodes, page.Next, err = r.ListEpisodes(ctx, s, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if page.Episodes == nil {
		page.Episodes = []engram.Episode{}
	}
	return page, nil
}

// ListMemories implements engram.Service. Vault memories are left out
// unless ctx carries engram.WithVault; then they are listed decrypted, and
// the read audited.
func (e *Engine) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if !engram.VaultFrom(ctx) {
		if f, err = hideVault(f); err != nil {
			return nil, err
		}
	}
	page := &engram.MemoryPage{}
	err = e.store.View(ctx, func(r engram.Reader) error {
		page.Memories, page.Next, err = r.ListMemories(ctx, s, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if page.Memories == nil {
		page.Memories = []engram.Memory{}
	}
	ms := make([]*engram.Memory, len(page.Memories))
	for i := range page.Memories {
		ms[i] = &page.Memories[i]
	}
	return page, e.reveal(ctx, s, "list", ms...)
}

// History implements engram.Service. The history of a vault memory is not
// found unless ctx carries engram.WithVault; then it is decrypted, and the
// read audited.
func (e *Engine) History(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := engram.CheckID("memory", id); err != nil {
		return nil, err
	}
	var out []engram.Version
	err = e.store.View(ctx, func(r engram.Reader) error {
		out, err = r.Versions(ctx, s, id)
		return err
	})
	if err == nil && !engram.VaultFrom(ctx) && slices.ContainsFunc(out, isVaultVersion) {
		err = engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	var ms []*engram.Memory
	for i := range out {
		ms = append(ms, out[i].Old, out[i].New)
	}
	return out, e.reveal(ctx, s, "history", ms...)
}

// Export implements engram.Service. Vault memories and their versions are
// left out unless ctx carries engram.WithVault; then they are exported
// decrypted, and the read audited (Import refuses them: see Import).
func (e *Engine) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	s, err := readScope(s)
	if err != nil {
		return err
	}
	fn, audit := e.exportVault(ctx, s, fn)
	err = e.store.View(ctx, func(r engram.Reader) error { return r.Export(ctx, s, fn) })
	return audit(err)
}

// Audit implements engram.Service.
func (e *Engine) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) (*engram.AuditPage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if _, err := engram.ClampLimit(f.Limit); err != nil {
		return nil, err
	}
	page := &engram.AuditPage{}
	err = e.store.View(ctx, func(r engram.Reader) error {
		page.Entries, page.Next, err = r.Audit(ctx, s, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if page.Entries == nil {
		page.Entries = []engram.AuditEntry{}
	}
	return page, nil
}

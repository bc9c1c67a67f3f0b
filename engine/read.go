package engine

import (
	"bytes"
	"context"
	"encoding/json"

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

// GetMemory implements engram.Service. It counts as an access.
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
		out, err = r.GetMemory(ctx, s, id)
		return err
	})
	if err != nil {
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

// ListMemories implements engram.Service.
func (e *Engine) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	f = asOf(f)
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
	return page, nil
}

// asOf returns f reading as of its ValidAt: a filter with an event time
// and no statuses sees what was current then, the memories superseded
// since included. Without ValidAt reads default to what is current.
func asOf(f engram.MemoryFilter) engram.MemoryFilter {
	if f.ValidAt != nil && len(f.Statuses) == 0 {
		f.Statuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded}
	}
	return f
}

// History implements engram.Service.
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
	return out, err
}

// Export implements engram.Service.
func (e *Engine) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	s, err := readScope(s)
	if err != nil {
		return err
	}
	return e.store.View(ctx, func(r engram.Reader) error { return r.Export(ctx, s, fn) })
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

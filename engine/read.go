package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

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

// DefaultK is the number of hits a search returns when K is zero.
const DefaultK = 10

// Search implements engram.Service: BM25 over value, abstraction and cues.
// Every hit counts as an access.
func (e *Engine) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	s, err := readScope(req.Scope)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query is required")
	}
	if len(req.Query) > engram.MaxContentBytes {
		return nil, engram.Errorf(engram.EINVALID, "query is %d bytes, longer than the limit of %d", len(req.Query), engram.MaxContentBytes)
	}
	k := req.K
	switch {
	case k < 0:
		return nil, engram.Errorf(engram.EINVALID, "k %d is negative", k)
	case k == 0:
		k = DefaultK
	case k > engram.MaxK:
		return nil, engram.Errorf(engram.EINVALID, "k %d is above the maximum of %d", k, engram.MaxK)
	}
	if err := req.Filter.Validate(); err != nil {
		return nil, err
	}
	var hits []engram.TextHit
	err = e.store.View(ctx, func(r engram.Reader) error {
		hits, err = r.SearchText(ctx, s, req.Query, req.Filter, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := &engram.SearchResult{Hits: make([]engram.Hit, len(hits))}
	ids := make([]string, len(hits))
	for i, h := range hits {
		res.Hits[i] = engram.Hit{Memory: h.Memory, Score: h.Score}
		if req.Explain {
			res.Hits[i].Explain = []engram.ChannelHit{{Channel: "bm25", Rank: i + 1, Score: h.Score}}
		}
		ids[i] = h.Memory.ID
	}
	e.access.record(s.Namespace(), e.clock(), ids...)
	return res, nil
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

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

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
func (e *memories) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	s, err := readTarget(s, "episode", id)
	if err != nil {
		return nil, err
	}
	var out *engram.Episode
	err = e.store.View(ctx, func(r engram.Reader) error {
		out, err = r.GetEpisode(ctx, s, id)
		return err
	})
	return out, err
}

// GetMemory implements engram.Service. It counts as an access. A memory
// whose TTL has passed is returned as expired (see engram.Memory.Lapse). A
// vault memory is not found unless ctx carries engram.WithVault; then it is
// returned decrypted, and the read audited.
func (e *memories) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	s, err := readTarget(s, "memory", id)
	if err != nil {
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
	now := e.clock()
	out.Lapse(now)
	e.access.record(ctx, out.Namespace, now, out.ID)
	return out, nil
}

// ListEpisodes implements engram.Service.
func (e *memories) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) (*engram.EpisodePage, error) {
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

// ListMemories implements engram.Service. TTLs are judged at the engine's
// clock (at ValidAt for an as-of read): a memory past its expires_at is
// listed only when the filter asks for expired ones, as expired.
//
// Vault memories are left out
// unless ctx carries engram.WithVault; then they are listed decrypted, and
// the read audited.
func (e *memories) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	f = asOf(f)
	if !engram.VaultFrom(ctx) {
		if f, err = hideVault(f); err != nil {
			return nil, err
		}
	}
	page := &engram.MemoryPage{}
	f.Now = e.clock()
	err = e.store.View(ctx, func(r engram.Reader) error {
		page.Memories, page.Next, err = r.ListMemories(ctx, s, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range page.Memories {
		page.Memories[i].Lapse(f.Now)
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

// asOf returns f reading as of its ValidAt: a filter with an event time
// and no statuses sees what was current then, the memories superseded
// since included. Without ValidAt reads default to what is current.
func asOf(f engram.MemoryFilter) engram.MemoryFilter {
	if f.ValidAt != nil && len(f.Statuses) == 0 {
		f.Statuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded}
	}
	return f
}

// History implements engram.Service. The history of a vault memory is not
// found unless ctx carries engram.WithVault; then it is decrypted, and the
// read audited.
func (e *memories) History(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	s, err := readTarget(s, "memory", id)
	if err != nil {
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

// Export implements engram.Service. It reads exportPage records at a
// time (engram.ExportPager), each page in its own short read transaction that ends before fn sees the page, so a caller
// that stops consuming (a client that stops reading) holds no store
// connection; each page's read is bounded by exportPageTimeout.
//
// It is not one snapshot: a record that exists throughout the export
// comes exactly once, in its state when its page was read; one added,
// changed or removed meanwhile may or may not come, and at most once.
// Versions stop at the last memory the export gave, so a memory added after
// the memories were read never comes as versions alone (which an import
// refuses).
//
// It writes every record as stored, a memory past its TTL too (its
// expires_at says so), so an import restores the scope exactly. The
// resources of the scope come last, each followed by its content in
// chunk records (see exportResources), and then, for a user's scope, the
// user's identity records (see exportIdentities).
//
// Vault memories and their versions are left out unless ctx carries
// engram.WithVault; then they are exported decrypted, and the read audited
// (Import refuses them: see Import).
func (e *admin) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	s, err := readScope(s)
	if err != nil {
		return err
	}
	fn, audit := e.exportVault(ctx, s, fn)
	err = e.exportPaged(ctx, s, fn)
	if err == nil {
		err = e.media.exportResources(ctx, s, fn)
	}
	if err == nil {
		err = e.media.exportIdentities(ctx, s, fn)
	}
	return audit(err)
}

// exportPaged is Export's records after the scope check, page by page.
// It fails with fn's or the store's error.
func (e *admin) exportPaged(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	lastMemory := ""
	for _, kind := range []string{engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion, engram.RecordAudit} {
		if err := e.exportKind(ctx, s, kind, &lastMemory, fn); err != nil {
			return err
		}
	}
	return nil
}

// Export's page size, and the bound on reading one page.
const (
	exportPage        = 500
	exportPageTimeout = 30 * time.Second
)

// exportKind gives fn every record of kind in s, a page per read
// transaction. It records the id of the last memory in *lastMemory and
// ends the versions after it.
func (e *admin) exportKind(ctx context.Context, s engram.Scope, kind string, lastMemory *string, fn func(engram.Record) error) error {
	for after := ""; ; {
		page, next, err := e.exportPage(ctx, s, kind, after)
		if err != nil {
			return err
		}
		for _, r := range page {
			switch {
			case kind == engram.RecordMemory:
				*lastMemory = r.Memory.ID
			case kind == engram.RecordVersion && r.Version.MemoryID > *lastMemory:
				return nil
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// exportPage reads one page of exportKind in its own read transaction.
func (e *admin) exportPage(ctx context.Context, s engram.Scope, kind, after string) ([]engram.Record, string, error) {
	ctx, cancel := context.WithTimeout(ctx, exportPageTimeout)
	defer cancel()
	var (
		page []engram.Record
		next string
	)
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		page, next, err = r.ExportPage(ctx, s, kind, after, exportPage)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("export %ss: %w", kind, err)
	}
	return page, next, nil
}

// Audit implements engram.Service.
func (e *admin) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) (*engram.AuditPage, error) {
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

// allStatuses is every status a memory may have: a filter with it reads
// memories whatever their status.
var allStatuses = []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}

package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/document"
)

var _ engram.ResourceService = (*Engine)(nil)

// AddResource implements engram.ResourceService. The content is read and
// stored one chunk at a time, each chunk in its own short transaction
// under a resource that reads cannot see yet; the memories of a document
// and the resource's completion are committed together at the end. On
// any error the partial upload is removed. Content the namespace already
// holds (the same SHA-256 and size) is kept once: the new upload is
// removed and the stored resource returned.
func (e *media) AddResource(ctx context.Context, r engram.Resource, body io.Reader) (*engram.Resource, error) {
	if err := e.newResource(&r); err != nil {
		return nil, err
	}
	if err := e.checkQuota(ctx, r.Namespace, 0); err != nil {
		return nil, err
	}
	err := e.store.Update(ctx, func(tx engram.Tx) error {
		return tx.InsertResource(ctx, &r)
	})
	if err != nil {
		return nil, err
	}
	if err = e.fillResource(ctx, &r, body); err != nil {
		e.dropResource(ctx, r)
		return nil, err
	}
	return &r, nil
}

// newResource validates r and gives it an id and a creation time.
func (e *media) newResource(r *engram.Resource) error {
	s, err := writeScope(engram.ScopeOf(r.Namespace))
	if err != nil {
		return err
	}
	r.Namespace = s.Namespace()
	r.ID, r.CreatedAt, r.Size, r.SHA256, r.Memories = engram.NewID(), e.clock(), 0, "", 0
	return r.Validate()
}

// fillResource stores body's content under the pending resource r, its
// findings treated when it is text (see treatContent), makes memories of
// a document's sections and completes r.
func (e *media) fillResource(ctx context.Context, r *engram.Resource, body io.Reader) error {
	content := e.treatContent(ctx, r, body)
	sum, err := e.storeContent(ctx, r, content)
	if err != nil {
		return err
	}
	sealed, err := content.done(ctx, e)
	if err != nil {
		return err
	}
	r.SHA256 = sum
	if dup, err := e.findDuplicate(ctx, r); err != nil {
		return err
	} else if dup != nil {
		// The same bytes are stored already in this namespace: keep
		// them once and answer with the stored resource.
		e.dropResource(ctx, *r)
		*r = *dup
		return nil
	}
	ms, err := e.resourceMemories(ctx, r)
	if err != nil {
		return err
	}
	r.Memories = len(ms)
	return e.completeResource(ctx, r, ms, sealed)
}

// findDuplicate returns the completed resource of r's namespace with r's
// content, nil when there is none. It fails with the store's error.
func (e *media) findDuplicate(ctx context.Context, r *engram.Resource) (*engram.Resource, error) {
	var dup *engram.Resource
	err := e.store.View(ctx, func(tx engram.Reader) error {
		var err error
		dup, err = tx.FindResource(ctx, r.Namespace, r.SHA256, r.Size)
		if engram.ErrorCode(err) == engram.ENOTFOUND {
			dup, err = nil, nil
		}
		return err
	})
	return dup, err
}

// storeContent copies body into chunks of r and returns the hex SHA-256
// of the content; ETOOLARGE as soon as the tenant's quota would be passed.
func (e *media) storeContent(ctx context.Context, r *engram.Resource, body io.Reader) (string, error) {
	h := sha256.New()
	buf := make([]byte, engram.ResourceChunkBytes)
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(body, buf)
		if n > 0 {
			if err := e.putChunk(ctx, r, h, seq, buf[:n]); err != nil {
				return "", err
			}
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return hex.EncodeToString(h.Sum(nil)), nil
		case err != nil:
			return "", fmt.Errorf("resource: read the upload: %w", err)
		}
	}
}

// putChunk checks the quota and stores one chunk.
func (e *media) putChunk(ctx context.Context, r *engram.Resource, h hash.Hash, seq int, data []byte) error {
	if err := e.checkQuota(ctx, r.Namespace, int64(len(data))); err != nil {
		return err
	}
	h.Write(data)
	r.Size += int64(len(data))
	return e.store.Update(ctx, func(tx engram.Tx) error {
		return tx.PutResourceChunk(ctx, r.Namespace, r.ID, seq, data)
	})
}

// checkQuota returns ETOOLARGE naming the quota when adding more bytes
// would take the tenant of n over it.
func (e *media) checkQuota(ctx context.Context, n engram.Namespace, more int64) error {
	var used int64
	err := e.store.View(ctx, func(tx engram.Reader) error {
		var err error
		used, err = tx.ResourceBytes(ctx, n)
		return err
	})
	if err != nil || e.resourceQuota <= 0 {
		return err
	}
	if used+more > e.resourceQuota || (more == 0 && used >= e.resourceQuota) {
		return engram.Errorf(engram.ETOOLARGE, "resource: tenant %s stores %d bytes of resources; this upload would pass its quota of %d bytes (engram serve --resource-quota)",
			n.Tenant(), used, e.resourceQuota)
	}
	return nil
}

// resourceMemories splits a document resource into memories of kind
// resource; other resources make none.
func (e *media) resourceMemories(ctx context.Context, r *engram.Resource) ([]engram.Memory, error) {
	format := document.Format(r.MIMEType, r.Name)
	if format == "" || r.Size == 0 {
		return nil, nil
	}
	var ms []engram.Memory
	ra := &chunkReaderAt{ctx: ctx, store: e.store, tenant: r.Namespace, id: r.ID, size: r.Size, cached: -1}
	err := document.Split(ctx, format, ra, r.Size, func(s document.Section) error {
		m, err := sectionMemory(r, s, len(ms))
		if err == nil {
			ms = append(ms, m)
		}
		return err
	})
	if err != nil {
		return nil, prefixed("resource "+r.Name, err)
	}
	return ms, nil
}

// sectionMemory makes the memory of one section of a document.
func sectionMemory(r *engram.Resource, s document.Section, index int) (engram.Memory, error) {
	cite := engram.ResourceCitation{
		ResourceID: r.ID, Start: s.Start, End: s.End, CharStart: s.CharStart, CharEnd: s.CharEnd,
		Page: s.Page, Headings: s.Headings, Index: index, Name: r.Name,
	}
	var meta map[string]any // as a store reads it back
	b, err := json.Marshal(cite)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		err = d.Decode(&meta)
	}
	if err != nil {
		return engram.Memory{}, err
	}
	abstraction := strings.Join(append([]string{r.Name}, s.Headings...), " › ")
	return engram.Memory{
		Namespace: r.Namespace, Kind: engram.KindResource, Value: s.Text,
		Abstraction: clipBytes(abstraction, engram.MaxShortBytes),
		Metadata:    map[string]any{engram.MetaResourceID: r.ID, engram.MetaResource: meta},
	}, nil
}

// completeResource stores the memories of r, the spans sealed from its
// content and from them, and makes r visible, in one transaction.
func (e *media) completeResource(ctx context.Context, r *engram.Resource, ms []engram.Memory, sc *treated) error {
	ops := make([]engram.MemoryOp, len(ms))
	for i, m := range ms {
		ops[i] = engram.MemoryOp{Op: engram.OpAdd, Memory: m}
	}
	inMemories, err := e.treatMemories(ctx, r.Namespace, ops)
	if err != nil {
		return err
	}
	sc.merge(inMemories)
	vb := e.vec.Batch()
	if err := vb.Prepare(ctx, opMemories(ops)); err != nil {
		return err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		if len(ops) > 0 {
			if _, err := e.applyOps(ctx, tx, vb, inNamespace(r.Namespace), ops, actor, now); err != nil {
				return err
			}
		}
		if err := e.storeSeals(ctx, tx, vb, r.Namespace, sc, actor, now); err != nil {
			return err
		}
		if err := tx.CompleteResource(ctx, r.Namespace, r.ID, r.SHA256, len(ms)); err != nil {
			return err
		}
		// The name is the client's text: the detail, which a purge keeps,
		// does not hold it.
		detail := fmt.Sprintf("%s, %d bytes, %d memories", r.MIMEType, r.Size, len(ms))
		return tx.InsertAudit(ctx, e.audit(r.Namespace, actor, "resource.add", []string{r.ID}, detail, now))
	})
	if err = vb.Done(err); err == nil {
		e.coverage.note(r.Namespace, opMemories(ops))
	}
	return err
}

// dropResource removes what a failed upload stored, whatever ctx's state.
func (e *media) dropResource(ctx context.Context, r engram.Resource) {
	ctx = context.WithoutCancel(ctx)
	err := e.store.Update(ctx, func(tx engram.Tx) error {
		return tx.PurgeResource(ctx, r.Namespace, r.ID)
	})
	if err != nil {
		e.log.WarnContext(ctx, "engine: removing a failed upload failed", "tenant", r.Namespace.Tenant(), "resource", r.ID, "err", err)
		return
	}
	e.afterPurge(ctx, r.Namespace, nil, false)
}

// GetResource implements engram.ResourceService.
func (e *media) GetResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, error) {
	s, err := readTarget(s, "resource", id)
	if err != nil {
		return nil, err
	}
	var r *engram.Resource
	err = e.store.View(ctx, func(tx engram.Reader) error {
		r, err = tx.GetResource(ctx, s, id)
		return err
	})
	return r, err
}

// ListResources implements engram.ResourceService.
func (e *media) ListResources(ctx context.Context, s engram.Scope, f engram.ResourceFilter) (*engram.ResourcePage, error) {
	s, err := readScope(s)
	if err != nil {
		return nil, err
	}
	page := &engram.ResourcePage{}
	err = e.store.View(ctx, func(tx engram.Reader) error {
		page.Resources, page.Next, err = tx.ListResources(ctx, s, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if page.Resources == nil {
		page.Resources = []engram.Resource{}
	}
	return page, nil
}

// OpenResource implements engram.ResourceService.
func (e *media) OpenResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, io.ReadCloser, error) {
	r, err := e.GetResource(ctx, s, id)
	if err != nil {
		return nil, nil, err
	}
	ra := &chunkReaderAt{ctx: ctx, store: e.store, tenant: r.Namespace, id: r.ID, size: r.Size, cached: -1}
	return r, io.NopCloser(io.NewSectionReader(ra, 0, r.Size)), nil
}

// DeleteResource implements engram.ResourceService: the resource, its
// content, every memory made from it (with their versions and vectors)
// and the spans sealed from it are purged in one transaction, then the store is treated.
func (e *media) DeleteResource(ctx context.Context, s engram.Scope, id string) error {
	s, err := writeTarget(s, "resource", id)
	if err != nil {
		return err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	vb := e.vec.Batch()
	var r *engram.Resource
	var texts []string
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		if r, err = tx.GetResource(ctx, s, id); err != nil {
			return err
		}
		if texts, err = purgeResourceMemories(ctx, tx, vb, r); err != nil {
			return err
		}
		if err := purgeResourceSeals(ctx, tx, vb, r); err != nil {
			return err
		}
		if err := tx.PurgeResource(ctx, r.Namespace, id); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, e.audit(r.Namespace, actor, "resource.purge", []string{id}, "", now))
	})
	if err = vb.Done(err); err == nil {
		e.afterPurge(ctx, r.Namespace, texts, false)
	}
	return err
}

// purgeResourceMemories purges every memory, in any status, that cites r,
// and returns the texts they held (for the embedding cache to forget).
func purgeResourceMemories(ctx context.Context, tx engram.Tx, vb *vecBatch, r *engram.Resource) ([]string, error) {
	f := engram.MemoryFilter{
		Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired},
		Metadata: map[string]any{engram.MetaResourceID: r.ID}, Limit: engram.MaxLimit,
	}
	s := engram.ScopeOf(r.Namespace)
	var texts []string
	for {
		ms, next, err := tx.ListMemories(ctx, s, f)
		if err != nil {
			return nil, err
		}
		for i := range ms {
			t, err := historyTexts(ctx, tx, s, &ms[i])
			if err != nil {
				return nil, err
			}
			texts = append(texts, t...)
			if err := tx.PurgeMemory(ctx, ms[i].Namespace, ms[i].ID); err != nil {
				return nil, err
			}
			vb.Purged(ms[i].Namespace, ms[i].ID)
		}
		if next == "" {
			return texts, nil
		}
		f.Cursor = next
	}
}

// chunkReaderAt reads a stored resource's content at any offset, one
// chunk (one short read transaction) at a time, keeping the last chunk.
type chunkReaderAt struct {
	ctx    context.Context
	store  engram.Store
	tenant engram.Namespace
	id     string
	size   int64
	cached int
	chunk  []byte
}

// ReadAt implements io.ReaderAt; a chunk missing from the store (deleted
// meanwhile) is an error.
func (c *chunkReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		if off >= c.size {
			return n, io.EOF
		}
		seq := int(off / engram.ResourceChunkBytes)
		if seq != c.cached {
			if err := c.load(seq); err != nil {
				return n, err
			}
		}
		k := copy(p[n:], c.chunk[off%engram.ResourceChunkBytes:])
		if k == 0 {
			return n, io.ErrUnexpectedEOF
		}
		n += k
		off += int64(k)
	}
	return n, nil
}

func (c *chunkReaderAt) load(seq int) error {
	return c.store.View(c.ctx, func(tx engram.Reader) error {
		var err error
		if c.chunk, err = tx.ResourceChunk(c.ctx, c.tenant, c.id, seq); err != nil {
			return err
		}
		c.cached = seq
		return nil
	})
}

// clipBytes cuts s to at most max bytes on a character boundary.
func clipBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// UploadTimeout is how old an upload that never completed must be before
// SweepUploads removes it.
const UploadTimeout = time.Hour

// SweepUploads removes, across tenants, uploads that started more than
// UploadTimeout ago and never completed (their server stopped mid-way),
// with their chunks, and says how many. The store's error is returned as
// is.
func (e *media) SweepUploads(ctx context.Context) (int, error) {
	var stale []engram.Resource
	err := e.store.View(ctx, func(tx engram.Reader) error {
		var err error
		stale, err = tx.AbandonedUploads(ctx, e.clock().Add(-UploadTimeout), DefaultSweepBatch)
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, r := range stale {
		err := e.store.Update(ctx, func(tx engram.Tx) error {
			return tx.PurgeResource(ctx, r.Namespace, r.ID)
		})
		if err != nil {
			return 0, err
		}
	}
	if len(stale) > 0 {
		e.afterPurge(ctx, engram.Namespace{}, nil, false)
	}
	return len(stale), nil
}

package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/engramhq/engram"
)

// Resources in exports and imports. An export gives each resource of the
// scope as a resource record followed by its content in resource_chunk
// records, one per stored chunk, each read in its own short transaction
// so that an export holds one chunk in memory however large the file.
// An import takes a resource only with all its chunks in the same call,
// checks their size and SHA-256 against the resource record before it
// stores anything, and stores the content chunk by chunk.

// exportResources gives fn every completed resource of s with its chunks,
// a page of resources or one chunk per read transaction. It fails with
// fn's or the store's error.
func (e *media) exportResources(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	f := engram.ResourceFilter{Limit: engram.MaxLimit}
	for {
		var (
			page []engram.Resource
			next string
		)
		err := e.store.View(ctx, func(r engram.Reader) error {
			var err error
			page, next, err = r.ListResources(ctx, s, f)
			return err
		})
		if err != nil {
			return fmt.Errorf("export resources: %w", err)
		}
		for i := range page {
			if err := e.exportResource(ctx, &page[i], fn); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		f.Cursor = next
	}
}

// exportResource gives fn one resource's record and its chunks.
func (e *media) exportResource(ctx context.Context, res *engram.Resource, fn func(engram.Record) error) error {
	if err := fn(engram.Record{Type: engram.RecordResource, Resource: res}); err != nil {
		return err
	}
	for seq := 0; ; seq++ {
		var data []byte
		err := e.store.View(ctx, func(r engram.Reader) error {
			var err error
			data, err = r.ResourceChunk(ctx, res.Namespace, res.ID, seq)
			return err
		})
		switch {
		case engram.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("export resource %s chunk %d: %w", res.ID, seq, err)
		}
		chunk := &engram.ResourceChunk{ResourceID: res.ID, Namespace: res.Namespace, Seq: seq, Data: data}
		if err := fn(engram.Record{Type: engram.RecordResourceChunk, Chunk: chunk}); err != nil {
			return err
		}
	}
}

// importedResource is a resource of an import with the indexes of its
// chunk records, in order.
type importedResource struct {
	rec    int // index of the resource record
	chunks []int
}

// checkResources refuses, naming the record, a resource whose chunks are
// not all in recs right after it, in order, or whose chunks do not hold
// its size and SHA-256 (a tampered chunk), and a chunk without its
// resource. It returns the resources in the order of recs.
func checkResources(recs []engram.Record) ([]importedResource, error) {
	var out []importedResource
	for i := 0; i < len(recs); i++ {
		switch recs[i].Type {
		case engram.RecordResourceChunk:
			c := recs[i].Chunk
			return nil, engram.Errorf(engram.EINVALID, "record %d: chunk %d of resource %s does not follow that resource's record and its earlier chunks; an import takes a resource with all its chunks", i+1, c.Seq, c.ResourceID)
		case engram.RecordResource:
		default:
			continue
		}
		r := recs[i].Resource
		ir := importedResource{rec: i}
		h := sha256.New()
		var size int64
		for j := i + 1; j < len(recs) && recs[j].Type == engram.RecordResourceChunk && recs[j].Chunk.ResourceID == r.ID; j++ {
			c := recs[j].Chunk
			switch {
			case c.Seq != len(ir.chunks):
				return nil, engram.Errorf(engram.EINVALID, "record %d: chunk %d of resource %s comes where chunk %d belongs", j+1, c.Seq, r.ID, len(ir.chunks))
			case c.Namespace != r.Namespace:
				return nil, engram.Errorf(engram.EINVALID, "record %d: chunk %d of resource %s is in another namespace than the resource", j+1, c.Seq, r.ID)
			case len(c.Data) == 0 || len(c.Data) > engram.ResourceChunkBytes:
				return nil, engram.Errorf(engram.EINVALID, "record %d: resource_chunk.data holds %d bytes, want 1 to %d", j+1, len(c.Data), engram.ResourceChunkBytes)
			}
			h.Write(c.Data)
			size += int64(len(c.Data))
			ir.chunks = append(ir.chunks, j)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		if size != r.Size || sum != r.SHA256 {
			return nil, engram.Errorf(engram.EINVALID, "record %d: resource %s says %d bytes with SHA-256 %s, but its %d chunk records (records %d to %d) hold %d bytes with SHA-256 %s: a chunk is missing or altered",
				i+1, r.ID, r.Size, r.SHA256, len(ir.chunks), i+2, i+1+len(ir.chunks), size, sum)
		}
		out = append(out, ir)
		i += len(ir.chunks)
	}
	return out, nil
}

// checkResource validates an imported resource's record.
func checkResource(r *engram.Resource) error {
	if !engram.ValidID(r.ID) {
		return engram.Errorf(engram.EINVALID, "resource: id %q is not a valid id", r.ID)
	}
	if r.Size < 0 || r.Memories < 0 {
		return engram.Errorf(engram.EINVALID, "resource: size and memories must not be negative")
	}
	r.CreatedAt = norm(r.CreatedAt)
	return r.Validate()
}

// claimResources settles the id of every resource of the import before the
// memories are stored, so that the memories made from a resource stored
// under a fresh id cite that id. It stores each resource whose id is free
// with its content, and compares one the scope holds.
func (im *importer) claimResources(ctx context.Context, recs []engram.Record, rs []importedResource) error {
	if len(rs) == 0 {
		return nil
	}
	for _, ir := range rs {
		r := recs[ir.rec].Resource
		if err := im.resource(ctx, r, recs, ir.chunks); err != nil {
			return prefixed(fmt.Sprintf("record %d", ir.rec+1), err)
		}
	}
	return nil
}

// resource stores one resource under its id, or a fresh one when another
// scope has the id, unless the scope holds it (then it must be the same).
func (im *importer) resource(ctx context.Context, r *engram.Resource, recs []engram.Record, chunks []int) error {
	c := *r
	id, held, err := place(r.ID, r.Namespace, func(id string) error {
		c.ID = id
		if err := im.tx.InsertResource(ctx, &c); err != nil {
			return err
		}
		// The new resource has no content yet, so the tenant's bytes
		// are what it stored before.
		return im.a.media.checkQuotaTx(ctx, im.tx, r.Namespace, r.Size)
	}, func(id string) (bool, error) {
		old, err := im.tx.GetResource(ctx, im.s, id)
		if err == nil {
			return true, skipIfSame(old, &c, "resource", id, &im.res)
		}
		return false, notFound(err)
	})
	if err != nil || held {
		return err
	}
	if id != r.ID {
		im.resources[r.ID] = id
	}
	for _, j := range chunks {
		if err := im.tx.PutResourceChunk(ctx, r.Namespace, id, recs[j].Chunk.Seq, recs[j].Chunk.Data); err != nil {
			return err
		}
	}
	im.res.Resources++
	return im.tx.CompleteResource(ctx, r.Namespace, id, r.SHA256, r.Memories)
}

// checkQuotaTx is checkQuota inside a transaction: ETOOLARGE when storing
// more bytes would take the tenant of n over its resource quota.
func (e *media) checkQuotaTx(ctx context.Context, tx engram.Tx, n engram.Namespace, more int64) error {
	if e.resourceQuota <= 0 {
		return nil
	}
	used, err := tx.ResourceBytes(ctx, n)
	if err != nil {
		return err
	}
	if used+more > e.resourceQuota {
		return engram.Errorf(engram.ETOOLARGE, "resource: tenant %s stores %d bytes of resources; this import would pass its quota of %d bytes (engram serve --resource-quota)",
			n.Tenant(), used, e.resourceQuota)
	}
	return nil
}

// rewriteResource replaces, in a memory's metadata, the id of a resource
// this import stored under a fresh id. It reports whether it changed c.
func (im *importer) rewriteResource(c *engram.Memory) bool {
	if len(im.resources) == 0 {
		return false
	}
	changed := false
	if id, ok := c.Metadata[engram.MetaResourceID].(string); ok {
		if n, ok := im.resources[id]; ok {
			c.Metadata[engram.MetaResourceID], changed = n, true
		}
	}
	if cit, ok := c.Metadata[engram.MetaResource].(map[string]any); ok {
		if id, ok := cit["resource_id"].(string); ok {
			if n, ok := im.resources[id]; ok {
				cc := make(map[string]any, len(cit))
				for k, v := range cit {
					cc[k] = v
				}
				cc["resource_id"] = n
				c.Metadata[engram.MetaResource], changed = cc, true
			}
		}
	}
	return changed
}

// rewriteMedia returns ms with the ids of resources this import stored
// under a fresh id replaced, or ms itself when it names none.
func (im *importer) rewriteMedia(ms []engram.Media) []engram.Media {
	var out []engram.Media
	for i, m := range ms {
		if n, ok := im.resources[m.ResourceID]; ok {
			if out == nil {
				out = slices.Clone(ms)
			}
			out[i].ResourceID = n
		}
	}
	if out == nil {
		return ms
	}
	return out
}

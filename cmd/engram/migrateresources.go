package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/engramhq/engram"
)

// listResources returns the completed resources of every tenant of st.
func listResources(ctx context.Context, st engram.Store) ([]engram.Resource, error) {
	var out []engram.Resource
	err := st.View(ctx, func(r engram.Reader) error {
		return r.DumpResources(ctx, func(res engram.Resource) error {
			out = append(out, res)
			return nil
		})
	})
	return out, err
}

// copyResources copies every completed resource of src, with its content,
// into dst one chunk per transaction (a resource is invisible in dst
// until its last chunk is in), then reads each back from dst and checks
// its size and SHA-256. It returns how many resources and bytes it copied.
func copyResources(ctx context.Context, src, dst engram.Store) (int, int64, error) {
	rs, err := listResources(ctx, src)
	if err != nil || len(rs) == 0 {
		return 0, 0, err
	}
	var total int64
	for i := range rs {
		if err := copyResource(ctx, src, dst, &rs[i]); err != nil {
			return 0, 0, fmt.Errorf("resource %s of %s: %w", rs[i].ID, rs[i].Namespace.Tenant(), err)
		}
		total += rs[i].Size
	}
	copied, err := listResources(ctx, dst)
	if err != nil {
		return 0, 0, err
	}
	if len(copied) != len(rs) {
		return 0, 0, fmt.Errorf("the copy holds %d resources, the source %d", len(copied), len(rs))
	}
	for i := range copied {
		sum, size, err := hashContent(ctx, dst, &copied[i])
		if err != nil {
			return 0, 0, err
		}
		if r := rs[i]; copied[i].ID != r.ID || sum != r.SHA256 || size != r.Size || copied[i].Size != r.Size {
			return 0, 0, fmt.Errorf("resource %s: the copy has %d bytes with SHA-256 %s, the source %d bytes with %s", r.ID, size, sum, r.Size, r.SHA256)
		}
	}
	return len(rs), total, nil
}

// copyResource copies one resource's metadata and content.
func copyResource(ctx context.Context, src, dst engram.Store, r *engram.Resource) error {
	err := dst.Update(ctx, func(tx engram.Tx) error {
		return tx.InsertResource(ctx, r)
	})
	if err != nil {
		return err
	}
	err = eachChunk(ctx, src, r, nil, func(seq int, data []byte) error {
		return dst.Update(ctx, func(tx engram.Tx) error {
			return tx.PutResourceChunk(ctx, r.Namespace, r.ID, seq, data)
		})
	})
	if err != nil {
		return err
	}
	return dst.Update(ctx, func(tx engram.Tx) error {
		return tx.CompleteResource(ctx, r.Namespace, r.ID, r.SHA256, r.Memories)
	})
}

// hashContent returns the hex SHA-256 and the length of a resource's
// content as st holds it.
func hashContent(ctx context.Context, st engram.Store, r *engram.Resource) (string, int64, error) {
	h := sha256.New()
	var n int64
	err := eachChunk(ctx, st, r, h, func(_ int, data []byte) error {
		n += int64(len(data))
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// eachChunk calls fn with every chunk of r's content in st, in order, each
// read in its own transaction, writing it to h too when h is not nil.
func eachChunk(ctx context.Context, st engram.Store, r *engram.Resource, h hash.Hash, fn func(seq int, data []byte) error) error {
	for seq := 0; ; seq++ {
		var data []byte
		err := st.View(ctx, func(rd engram.Reader) error {
			var err error
			data, err = rd.ResourceChunk(ctx, r.Namespace, r.ID, seq)
			return err
		})
		switch {
		case engram.ErrorCode(err) == engram.ENOTFOUND:
			return nil
		case err != nil:
			return err
		}
		if h != nil {
			h.Write(data)
		}
		if err := fn(seq, data); err != nil {
			return err
		}
	}
}

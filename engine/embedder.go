package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram"
)

// MetaEmbedder is the store meta key recording which embedder made the
// stored vectors, as JSON {"name": ..., "dim": ...}.
const MetaEmbedder = "embedder"

// EmbedderInfo identifies the embedder whose vectors a store holds.
type EmbedderInfo struct {
	Name string `json:"name"`
	Dim  int    `json:"dim"`
}

// StoredEmbedder returns the embedder recorded in the store, or nil if the
// store has none recorded yet. It fails if the store cannot be read or the
// record is not valid JSON.
func StoredEmbedder(ctx context.Context, st engram.Store) (*EmbedderInfo, error) {
	var raw string
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		raw, err = r.Meta(ctx, MetaEmbedder)
		return err
	})
	if err != nil || raw == "" {
		return nil, err
	}
	var info EmbedderInfo
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return nil, fmt.Errorf("read the recorded embedder %q: %w", raw, err)
	}
	return &info, nil
}

// checkEmbedder records emb as the store's embedder if none is recorded and
// refuses an embedder other than the recorded one (EINVALID).
func checkEmbedder(ctx context.Context, st engram.Store, emb engram.Embedder) error {
	info, err := StoredEmbedder(ctx, st)
	if err != nil {
		return err
	}
	if emb == nil {
		if info != nil {
			return engram.Errorf(engram.EMISMATCH, "this store holds vectors made by %s (%d dimensions) but no embedder is configured; configure %s, or run `engram reembed` to move to another embedder", info.Name, info.Dim, info.Name)
		}
		return nil
	}
	want := EmbedderInfo{Name: emb.Name(), Dim: emb.Dim()}
	if info == nil {
		var ms []engram.Memory
		if err := st.View(ctx, func(r engram.Reader) error {
			ms, err = r.ScanMemories(ctx, engram.MemoryKey{}, 1)
			return err
		}); err != nil {
			return err
		}
		if len(ms) > 0 {
			return engram.Errorf(engram.EMISMATCH, "this store holds memories stored without an embedder; run `engram reembed` to embed them with %s, or keep using no embedder", want.Name)
		}
		b, _ := json.Marshal(want)
		return st.Update(ctx, func(tx engram.Tx) error {
			return tx.SetMeta(ctx, MetaEmbedder, string(b))
		})
	}
	if *info != want {
		return engram.Errorf(engram.EMISMATCH, "this store holds vectors made by %s (%d dimensions), not by the configured %s (%d dimensions); configure %s again, or run `engram reembed` to re-embed every memory with the new one",
			info.Name, info.Dim, want.Name, want.Dim, info.Name)
	}
	return nil
}

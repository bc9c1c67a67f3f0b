package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine/index"
)

// metaReembed holds the progress of an interrupted re-embedding as JSON
// {"target": EmbedderInfo, "after": MemoryKey}.
const metaReembed = "reembed"

type reembedState struct {
	Target EmbedderInfo     `json:"target"`
	After  engram.MemoryKey `json:"after"`
	Done   int              `json:"done"`
}

// ReembedStats says what a re-embedding did.
type ReembedStats struct {
	From     *EmbedderInfo // the embedder recorded before; nil if none
	To       EmbedderInfo
	Memories int  // active memories embedded by this run
	Resumed  bool // the run continued an interrupted one
	Removed  int  // vectors of other embedders removed at the end
}

// ReembedBatch is how many memories one step of Reembed embeds and commits.
const ReembedBatch = 256

// Reembed moves a store to the embedder emb: it embeds every active
// memory's abstraction and value with emb, then removes the vectors of any
// other embedder and records emb as the store's embedder. Progress is
// committed after every batch, so an interrupted run (error, cancel, kill)
// resumes where it stopped when called again with the same embedder.
// Engines must not serve the store meanwhile. progress, when not nil, is
// called with the number of memories scanned so far. A store whose
// transactions lack a capability re-embedding needs (engram.Dumper,
// engram.MetaReader, engram.MetaWriter, engram.VectorWriter) is refused with
// an EINVALID error naming it.
func Reembed(ctx context.Context, st engram.Store, emb engram.Embedder, progress func(scanned int)) (*ReembedStats, error) {
	if emb == nil {
		return nil, engram.Errorf(engram.EINVALID, "reembed needs an embedder")
	}
	stats := &ReembedStats{To: EmbedderInfo{Name: emb.Name(), Dim: emb.Dim()}}
	var err error
	if stats.From, err = StoredEmbedder(ctx, st); err != nil {
		return nil, err
	}
	state, err := reembedStart(ctx, st, stats)
	if err != nil {
		return nil, err
	}
	vb := index.NewVectors(emb, st, nil, nil).Batch()
	for {
		ms, err := reembedScan(ctx, st, state.After)
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			break
		}
		n, err := reembedBatch(ctx, st, vb, ms, &state)
		if err != nil {
			return nil, err
		}
		stats.Memories += n
		if progress != nil {
			progress(state.Done)
		}
	}
	if stats.Removed, err = reembedFinish(ctx, st, emb.Name(), stats.To); err != nil {
		return nil, err
	}
	return stats, nil
}

// reembedStart returns the progress to start from: that of an interrupted
// run towards the same embedder (setting stats.Resumed), else the
// beginning. It fails with the store's error, or when the recorded
// progress is not valid JSON.
func reembedStart(ctx context.Context, st engram.Store, stats *ReembedStats) (reembedState, error) {
	state := reembedState{Target: stats.To}
	var raw string
	if err := st.View(ctx, func(r engram.Reader) error {
		var err error
		raw, err = r.Meta(ctx, metaReembed)
		return err
	}); err != nil {
		return state, err
	}
	if raw == "" {
		return state, nil
	}
	var prev reembedState
	if err := json.Unmarshal([]byte(raw), &prev); err != nil {
		return state, fmt.Errorf("read re-embedding progress: %w", err)
	}
	if prev.Target == stats.To {
		state, stats.Resumed = prev, true
	}
	return state, nil
}

// reembedScan reads the next ReembedBatch memories after key, of every
// status. It fails with the store's error.
func reembedScan(ctx context.Context, st engram.Store, after engram.MemoryKey) ([]engram.Memory, error) {
	var ms []engram.Memory
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		ms, err = r.ScanMemories(ctx, after, ReembedBatch)
		return err
	})
	return ms, err
}

// reembedBatch embeds the active memories of ms and, in one transaction,
// writes their vectors and the progress past the last of ms; on success it
// advances state and returns how many memories it embedded. A memory
// purged since the scan is skipped. It fails with the embedder's or the
// store's error, leaving state as it was.
func reembedBatch(ctx context.Context, st engram.Store, vb *vecBatch, ms []engram.Memory, state *reembedState) (int, error) {
	var active []engram.Memory
	for _, m := range ms {
		if m.Status == engram.StatusActive {
			active = append(active, m)
		}
	}
	vb.Reset()
	if err := vb.Prepare(ctx, active); err != nil {
		return 0, err
	}
	last := ms[len(ms)-1]
	next := *state
	next.After = engram.MemoryKey{Org: last.Namespace.Org, Project: last.Namespace.Project, User: last.Namespace.User, ID: last.ID}
	next.Done += len(ms)
	b, _ := json.Marshal(next)
	if err := st.Update(ctx, func(tx engram.Tx) error {
		for i := range active {
			err := vb.Stage(ctx, tx, &active[i])
			if engram.IsNotFound(err) {
				continue // purged since the scan
			} else if err != nil {
				return err
			}
		}
		return tx.SetMeta(ctx, metaReembed, string(b))
	}); err != nil {
		return 0, err
	}
	*state = next
	return len(active), nil
}

// reembedFinish removes the vectors of embedders other than name, records
// to as the store's embedder and clears the progress, in one transaction,
// and returns how many vectors it removed. It fails with the store's
// error.
func reembedFinish(ctx context.Context, st engram.Store, name string, to EmbedderInfo) (int, error) {
	info, _ := json.Marshal(to)
	var removed int
	err := st.Update(ctx, func(tx engram.Tx) error {
		var err error
		if removed, err = tx.DeleteVectorsExcept(ctx, name); err != nil {
			return err
		}
		if err := tx.SetMeta(ctx, MetaEmbedder, string(info)); err != nil {
			return err
		}
		return tx.SetMeta(ctx, metaReembed, "")
	})
	return removed, err
}

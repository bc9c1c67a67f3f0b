package index

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/engramhq/engram"
)

// Reading your writes by meaning. An add that leaves embedding to an
// embed job (engram.JobEmbed) answers before its memories have vectors,
// so the vector index cannot find them until the job ran. The index of a
// (tenant, user) therefore keeps, as it catches up with the store's
// change log, the memories that changed without vectors (pending), and
// the dense channel embeds the newest MaxPendingEmbeds of those its
// search's scope holds on the fly, through the engine's embedder, and
// ranks them with the index's hits. Nothing is stored: the job still
// applies its held update, stages the graph and stores the vectors, and
// with the embedding cache in front of the model (engram serve) it finds
// the texts embedded already, or joins the search's call while it runs.
// A search reads only its own partition's pending memories, so another
// tenant's or user's pending work neither slows it nor shows in it.

// MaxPendingEmbeds is the most memories whose vectors are pending that
// one search embeds on the fly, the newest first; older ones wait for
// their job. A one-turn add leaves two to four.
const MaxPendingEmbeds = 32

// maxPendingKept bounds the pending memories a partition remembers; past
// it the oldest are forgotten (their jobs still run).
const maxPendingKept = 8 * MaxPendingEmbeds

// seedPending records as pending in p, which was just loaded, the
// memories that the open embed jobs of partition k name: the change log
// tells only of later changes. It fails with the store's error.
func seedPending(ctx context.Context, r engram.Reader, k partKey, p *partition) error {
	s := engram.Scope{Org: k.org, Project: k.project, User: k.user}
	jobs, _, err := r.ListJobs(ctx, s, engram.JobFilter{States: []engram.JobState{engram.JobQueued, engram.JobRunning, engram.JobRetrying}, Limit: engram.MaxLimit})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Kind != engram.JobEmbed || j.Namespace.User != k.user {
			continue // the shared partition's scope holds every user's jobs
		}
		for _, id := range j.Memories {
			p.notePending(id, true)
		}
	}
	return nil
}

// notePending records, the caller holding p.mu, whether memory id changed
// without vectors (and may be waiting for its embed job) or has vectors
// or left the index.
func (p *partition) notePending(id string, pending bool) {
	if !pending {
		delete(p.pending, id)
		return
	}
	if p.pending == nil {
		p.pending = map[string]bool{}
	}
	p.pending[id] = true
	if len(p.pending) > maxPendingKept {
		ids := slices.Sorted(func(yield func(string) bool) {
			for id := range p.pending {
				if !yield(id) {
					return
				}
			}
		})
		for _, old := range ids[:len(ids)-maxPendingKept] {
			delete(p.pending, old)
		}
	}
}

// pendingIDs returns, for each of ps's partitions, its newest pending
// memories, at most n in all (ids grow with time).
func (ps Parts) PendingIDs(n int) [][]string {
	out := make([][]string, len(ps))
	var all []string
	for i, pt := range ps {
		pt.p.mu.RLock()
		for id := range pt.p.pending {
			all = append(all, id)
			out[i] = append(out[i], id)
		}
		pt.p.mu.RUnlock()
	}
	if len(all) <= n {
		return out
	}
	sort.Sort(sort.Reverse(sort.StringSlice(all)))
	keep := map[string]bool{}
	for _, id := range all[:n] {
		keep[id] = true
	}
	for i := range out {
		out[i] = slices.DeleteFunc(out[i], func(id string) bool { return !keep[id] })
	}
	return out
}

// pendingHits embeds the texts of the pending memories ids (by partition
// of ps) that are active and in the partition's part of the search's
// scope, and returns their scores against the queries qs, as the index
// scores its own (the best field and query). Ids no longer active or
// gone are forgotten. It fails with the store's or the embedder's error.
func (v *Vectors) PendingHits(ctx context.Context, s engram.Scope, ps Parts, ids [][]string, qs [][]float32) ([]Hit, error) {
	var hits []Hit
	for i, pt := range ps {
		if len(ids[i]) == 0 {
			continue
		}
		ms, err := v.readPending(ctx, s, pt, ids[i])
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			continue
		}
		var texts []string
		for j := range ms {
			for _, ft := range FieldTexts(&ms[j]) {
				texts = append(texts, ft[1])
			}
		}
		vs, err := v.emb.Embed(engram.WithEmbedPartition(ctx, partitionOf(ms[0].Namespace)), texts)
		if err != nil {
			return nil, fmt.Errorf("embed memories waiting for their embed job: %w", err)
		}
		for j := range ms {
			n := len(FieldTexts(&ms[j]))
			hits = append(hits, Hit{ID: ms[j].ID, Score: bestDot(qs, vs[:n])})
			vs = vs[n:]
		}
	}
	return hits, nil
}

// readPending reads the pending memories ids of partition pt, forgets
// those no longer active (or vault memories, never embedded), and returns
// those in scope s.
func (v *Vectors) readPending(ctx context.Context, s engram.Scope, pt scopePart, ids []string) ([]engram.Memory, error) {
	var ms []engram.Memory
	err := engram.ReadFresh(ctx, v.store, func(r engram.Reader) error {
		var err error
		ms, _, err = r.ListMemories(ctx, s, engram.MemoryFilter{IDs: ids, Limit: len(ids)})
		return err
	})
	if err != nil {
		return nil, err
	}
	ms = slices.DeleteFunc(ms, func(m engram.Memory) bool {
		return m.Kind == engram.KindVault || (pt.keep != nil && !pt.keep(m.Namespace))
	})
	// Only what the whole partition no longer holds active is forgotten:
	// a narrower scope's search does not see the rest of it.
	if s.AllAgents() && s.Session == "" {
		found := map[string]bool{}
		for _, m := range ms {
			found[m.ID] = true
		}
		pt.p.mu.Lock()
		for _, id := range ids {
			if !found[id] {
				delete(pt.p.pending, id)
			}
		}
		pt.p.mu.Unlock()
	}
	return ms, nil
}

// bestDot is the best dot product of any query in qs with any of vs (unit
// vectors: their cosine).
func bestDot(qs, vs [][]float32) float32 {
	best := float32(-2)
	for _, q := range qs {
		for _, v := range vs {
			var d float32
			for i := range min(len(q), len(v)) {
				d += q[i] * v[i]
			}
			best = max(best, d)
		}
	}
	return best
}

// WithPending adds the pending memories' hits to the index's and returns
// the best k, as Parts.search ranks them.
func WithPending(hits, pending []Hit, k int) []Hit {
	if len(pending) == 0 {
		return hits
	}
	best := map[string]float32{}
	for _, h := range slices.Concat(hits, pending) {
		if sc, ok := best[h.ID]; !ok || h.Score > sc {
			best[h.ID] = h.Score
		}
	}
	return rankHits(best, k)
}

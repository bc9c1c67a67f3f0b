package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// DeleteEpisode implements engram.Service. In one transaction it purges
// the episode and every memory of its user, in any status, whose only
// source it is, and forms again the memories that quote it with other
// sources (see unquote), each as a new version; the embedding cache then
// forgets the purged memories' texts. It fails with ENOTFOUND for an
// episode outside s, or the store's or the embedder's error, and then
// changes nothing.
func (e *memories) DeleteEpisode(ctx context.Context, s engram.Scope, id string) (*engram.EpisodeDeleteResult, error) {
	s, err := writeTarget(s, "episode", id)
	if err != nil {
		return nil, err
	}
	actor, now := engram.ActorFrom(ctx), e.clock()
	vb := e.vec.Batch()
	var ns engram.Namespace
	var texts []string
	var res *engram.EpisodeDeleteResult
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		ep, err := tx.GetEpisode(ctx, s, id)
		if err != nil {
			return err
		}
		ns = ep.Namespace
		res = &engram.EpisodeDeleteResult{Episode: id, Removed: []string{}, Reformed: []string{}}
		if texts, err = e.dropQuotes(ctx, tx, vb, ep, res, actor, now); err != nil {
			return err
		}
		if err := tx.PurgeEpisode(ctx, ep.Namespace, id); err != nil {
			return err
		}
		detail := fmt.Sprintf("removed %d memories, formed %d again", len(res.Removed), len(res.Reformed))
		return tx.InsertAudit(ctx, e.audit(ep.Namespace, actor, "episode.purge", []string{id}, detail, now))
	})
	if err = vb.Done(err); err != nil {
		return nil, err
	}
	e.afterPurge(ctx, ns, texts, false)
	return res, nil
}

// dropQuotes purges in tx the memories of ep's user whose only source is
// ep and forms again those that have others, noting both in res, and
// returns the texts of the purged ones (and of their earlier versions).
func (e *memories) dropQuotes(ctx context.Context, tx engram.Tx, vb *vecBatch, ep *engram.Episode, res *engram.EpisodeDeleteResult, actor string, now time.Time) ([]string, error) {
	user := engram.Scope{Org: ep.Namespace.Org, Project: ep.Namespace.Project, User: ep.Namespace.User}
	ms, err := quoting(ctx, tx, user, ep.ID)
	if err != nil {
		return nil, err
	}
	var texts []string
	for i := range ms {
		m := &ms[i]
		if len(m.Sources) > 1 {
			if err := e.reform(ctx, tx, vb, m, ep, actor, now); err != nil {
				return nil, err
			}
			res.Reformed = append(res.Reformed, m.ID)
			continue
		}
		t, err := historyTexts(ctx, tx, user, m)
		if err != nil {
			return nil, err
		}
		texts = append(texts, t...)
		if err := tx.PurgeMemory(ctx, m.Namespace, m.ID); err != nil {
			return nil, err
		}
		vb.Purged(m.Namespace, m.ID)
		res.Removed = append(res.Removed, m.ID)
	}
	return texts, nil
}

// quoting lists the memories of s, in any status, that name episode id
// as a source.
func quoting(ctx context.Context, r engram.Reader, s engram.Scope, id string) ([]engram.Memory, error) {
	f := engram.MemoryFilter{Sources: []string{id}, Limit: engram.MaxLimit, Statuses: []engram.Status{
		engram.StatusActive, engram.StatusSuperseded, engram.StatusDeleted, engram.StatusExpired}}
	var out []engram.Memory
	for {
		ms, next, err := r.ListMemories(ctx, s, f)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
		if next == "" {
			return out, nil
		}
		f.Cursor = next
	}
}

// reform writes, as a new version of m, m without episode ep: ep leaves
// its sources and, when its text quotes ep's turn (a memory of a run of
// turns), the turn leaves its value and abstraction, and the cues and
// metadata are derived again from what remains (see rederive). A memory
// that only states what its other sources state too (a fact said twice)
// keeps its text.
func (e *memories) reform(ctx context.Context, tx engram.Tx, vb *vecBatch, old *engram.Memory, ep *engram.Episode, actor string, now time.Time) error {
	m := clone(old)
	k := slices.Index(m.Sources, ep.ID)
	m.Sources = slices.Delete(m.Sources, k, k+1)
	if value, ok := withoutTurn(old.Value, ep); ok && old.Kind != engram.KindVault {
		abs := withoutLine(old.Abstraction, k, len(old.Sources))
		p := engram.MemoryPatch{Value: &value}
		if abs != old.Abstraction {
			p.Abstraction = &abs
		}
		applyPatch(m, rederive(old, p))
	}
	m.Version, m.UpdatedAt = old.Version+1, now
	return e.writeVersion(ctx, tx, vb, old, m, engram.OpUpdate, actor, "episode "+ep.ID+" deleted", now)
}

// withoutTurn returns value without the line that quotes ep's turn (its
// speaker or role, then its content), and whether it had one.
func withoutTurn(value string, ep *engram.Episode) (string, bool) {
	if strings.TrimSpace(ep.Content) == "" {
		return value, false
	}
	lines := strings.Split(value, "\n")
	for _, who := range []string{ep.Speaker, ep.Role, ""} {
		line := ep.Content
		if who != "" {
			line = who + ": " + ep.Content
		}
		if i := slices.Index(lines, line); i >= 0 && len(lines) > 1 {
			return strings.Join(slices.Delete(lines, i, i+1), "\n"), true
		}
		if who != "" && strings.Contains(value, line) {
			rest := strings.TrimSpace(strings.ReplaceAll(value, line, ""))
			return rest, rest != ""
		}
	}
	return value, false
}

// withoutLine returns abs without its k-th line when it has one line for
// each of n sources (an abstraction of a run of turns), else abs.
func withoutLine(abs string, k, n int) string {
	lines := strings.Split(abs, "\n")
	if len(lines) != n || k < 0 || k >= n {
		return abs
	}
	return strings.Join(slices.Delete(lines, k, k+1), "\n")
}

package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/formation"
)

// DefaultFormer returns the former an engine uses when Options.Former is
// nil: the rule-based formation.DefaultRules, which forms a memory of each
// turn (attributed to its speaker, relative dates resolved, cue anchors
// extracted, indexed with the turns around it, linked to its neighbours)
// and consolidates them with the scope: repeats merge, newer facts
// supersede older ones, requests to forget delete what they name.
func DefaultFormer() engram.Former { return formation.DefaultRules() }

// EpisodeFormer is the plainest former: each episode becomes one episodic
// memory that cites it, valid from the episode's event time, its
// abstraction the first sentence and its cue the speaker. It never fails
// and never looks at existing memories.
type EpisodeFormer struct{}

// Needs implements engram.Former: nothing besides the batch.
func (EpisodeFormer) Needs() engram.FormNeeds { return engram.FormNeeds{} }

// Form implements engram.Former.
func (EpisodeFormer) Form(_ context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	ops := make([]engram.MemoryOp, 0, len(req.Episodes))
	for _, e := range req.Episodes {
		at := e.OccurredAt
		m := engram.Memory{
			Namespace:   e.Namespace,
			Kind:        engram.KindEpisodic,
			Abstraction: abstractOf(e.Content, 120),
			Value:       e.Content,
			ValidFrom:   &at,
			Sources:     []string{e.ID},
		}
		if e.Speaker != "" {
			m.Cues = []string{e.Speaker}
		}
		if e.Role != "" || e.Speaker != "" {
			m.Metadata = map[string]any{}
			if e.Role != "" {
				m.Metadata[engram.MetaRole] = e.Role
			}
			if e.Speaker != "" {
				m.Metadata[engram.MetaSpeaker] = e.Speaker
			}
		}
		ops = append(ops, engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "formed from episode"})
	}
	return ops, nil
}

// abstractOf returns the first sentence of s, cut at a word boundary to at
// most max bytes, as a short primary abstraction.
func abstractOf(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.IndexAny(s, ".!?。！？\n"); i > 0 {
		_, w := utf8.DecodeRuneInString(s[i:])
		s = s[:i+w]
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > max/2 {
		cut = sp
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// formerActor is the actor formed operations are recorded under: the
// former's own name when its FormNeeds give one, else the caller's.
func formerActor(f engram.Former, caller string) string {
	if a := f.Needs().Actor; a != "" {
		return a
	}
	return caller
}

// formed is what the former made of a batch of episodes.
type formed struct {
	ops     []engram.MemoryOp
	prevMem *engram.Memory // the memory of the turn before, as read, when the former continued it
	by      engram.Former  // who formed ops, when not the engine's former
}

// form runs the former fm over eps with what its FormNeeds ask for (the
// turn stored just before them, a read view of the namespace's scope);
// then over the captions and transcripts of their media (formMedia; gen
// names those the model made). It fails with the former's or the store's
// error.
func (e *ingest) form(ctx context.Context, fm engram.Former, ns engram.Namespace, eps []engram.Episode, gen map[mediaKey]bool) (formed, error) {
	needs := fm.Needs()
	req := engram.FormRequest{Episodes: eps}
	var err error
	if req.Prev, req.PrevMemory, err = e.earlier(ctx, ns, eps, needs.ContinueWithin); err != nil {
		return formed{}, fmt.Errorf("find the turn before: %w", err)
	}
	if needs.ReadsScope {
		req.View = e.formView(ns)
	}
	f := formed{prevMem: req.PrevMemory, by: fm}
	if f.ops, err = fm.Form(ctx, req); err != nil {
		return f, fmt.Errorf("form memories: %w", err)
	}
	media, err := e.formMedia(ctx, eps, gen)
	f.ops = append(f.ops, media...)
	return f, err
}

// formView is a former's view of what turns said in ns may change
// (formScope): vault memories left out, and each read in its own short
// read transaction, so a former that takes seconds between reads (a
// model call) holds no store connection or snapshot meanwhile.
func (e *ingest) formView(ns engram.Namespace) engram.ScopeReader {
	return withoutVault{viewScope{e.store, formScope(ns)}}
}

// viewScope is an engram.ScopeReader over a store whose
// every call runs in a read transaction of its own and returns only what
// o holds. The store reads o.reach(), which admits exactly what o holds
// (an agent-less namespace's reach admits no agent's memories), so a read
// with a limit is filled; what is read is checked against o once more.
type viewScope struct {
	st engram.Store
	o  opScope
}

func (v viewScope) Scope() engram.Scope { return v.o.reach() }

// GetMemory fails with ENOTFOUND for a memory the view does not hold.
func (v viewScope) GetMemory(ctx context.Context, id string) (m *engram.Memory, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		m, err = r.GetMemory(ctx, v.o.reach(), id)
		return err
	})
	if err == nil && !v.o.holds(m.Namespace) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	return m, err
}

func (v viewScope) ListMemories(ctx context.Context, f engram.MemoryFilter) (ms []engram.Memory, next string, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		ms, next, err = r.ListMemories(ctx, v.o.reach(), f)
		return err
	})
	return v.o.keep(ms), next, err
}

func (v viewScope) SearchText(ctx context.Context, query string, f engram.MemoryFilter, limit int) (hs []engram.TextHit, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		hs, err = r.SearchText(ctx, v.o.reach(), query, f, limit)
		return err
	})
	return slices.DeleteFunc(hs, func(h engram.TextHit) bool { return !v.o.holds(h.Memory.Namespace) }), err
}

// CurrentProfile implements engram.ScopeReader: the profile of the
// view's user, read in its own transaction.
func (v viewScope) CurrentProfile(ctx context.Context) (m *engram.Memory, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		m, err = engram.UserProfile(ctx, r, engram.ScopeOf(v.o.home))
		return err
	})
	return m, err
}

func (v viewScope) ListEpisodes(ctx context.Context, f engram.EpisodeFilter) (eps []engram.Episode, next string, err error) {
	err = v.st.View(ctx, func(r engram.Reader) error {
		eps, next, err = r.ListEpisodes(ctx, v.o.reach(), f)
		return err
	})
	return slices.DeleteFunc(eps, func(ep engram.Episode) bool { return !v.o.holds(ep.Namespace) }), next, err
}

// earlier returns the latest episode stored in exactly namespace n (not
// in one of its sessions or agents) that occurred within d before the
// first of eps, and the active memory formed from that episode alone (nil
// if none), so that a conversation added a turn at a time is formed as if
// it had come in one batch. It returns nil, nil when there is no such
// episode; an error only when the store fails.
func (e *writer) earlier(ctx context.Context, n engram.Namespace, eps []engram.Episode, d time.Duration) (*engram.Episode, *engram.Memory, error) {
	if len(eps) == 0 || d <= 0 {
		return nil, nil, nil
	}
	first := eps[0].OccurredAt
	for i := range eps {
		if eps[i].OccurredAt.Before(first) {
			first = eps[i].OccurredAt
		}
	}
	s := engram.ScopeOf(n)
	var prev *engram.Episode
	var mem *engram.Memory
	err := e.store.View(ctx, func(r engram.Reader) error {
		// Episodes list oldest first, so the look back widens in steps
		// rather than reading a whole busy conversation every turn.
		for _, w := range []time.Duration{min(d, time.Minute), min(d, 15*time.Minute), d} {
			from := first.Add(-w)
			f := engram.EpisodeFilter{OccurredAfter: &from, OccurredBefore: &first, Limit: engram.MaxLimit}
			for {
				page, next, err := r.ListEpisodes(ctx, s, f)
				if err != nil {
					return err
				}
				for i := range page {
					if page[i].Namespace == n {
						prev = &page[i]
					}
				}
				if next == "" {
					break
				}
				f.Cursor = next
			}
			if prev != nil || w == d {
				break
			}
		}
		if prev == nil {
			return nil
		}
		ms, _, err := r.ListMemories(ctx, s, engram.MemoryFilter{Sources: []string{prev.ID}, Kinds: []engram.Kind{engram.KindEpisodic}})
		if err != nil {
			return err
		}
		for i := range ms {
			if len(ms[i].Sources) == 1 && ms[i].Namespace == n {
				mem = &ms[i]
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return prev, mem, nil
}

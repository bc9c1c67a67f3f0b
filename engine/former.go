package engine

import (
	"context"
	"strings"
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

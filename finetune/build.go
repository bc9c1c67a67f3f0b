package finetune

import (
	"context"
	"slices"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// builder turns a snapshot into records.
type builder struct {
	o      Options
	user   string
	snap   *snapshot
	counts Counts
}

// current reports whether m may be taught as true now: active, not past
// its TTL, valid now, not in an open conflict, stating no replaced
// fact, and the user's own (not
// an assistant's turn, not a scene of several parties).
func (b *builder) current(m *engram.Memory) bool {
	now := b.o.Now
	switch {
	case m == nil, m.Status != engram.StatusActive, m.Kind == engram.KindVault, m.Lapsed(now):
		return false
	case m.ValidTo != nil && !m.ValidTo.After(now), m.ValidFrom != nil && m.ValidFrom.After(now):
		return false
	case m.Metadata[engram.MetaConflict] != nil, len(m.StaleTerms()) > 0:
		// In an open conflict, or stating a fact a newer memory replaced.
		return false
	case m.Metadata[engram.MetaFactAttribute] == nil && b.snap.factTurns[sourceKey(m)]:
		// A turn that states a fact: the fact's own memory speaks for it,
		// and when that was deleted or replaced, the turn is no more true.
		return false
	}
	return voiced(m)
}

// sourceKey identifies the episodes a memory was formed from.
func sourceKey(m *engram.Memory) string { return strings.Join(m.Sources, ",") }

// voiced reports whether m is in the user's voice: formed from the user's
// turns, or stored as is by a client (no role).
func voiced(m *engram.Memory) bool {
	if r := m.Role(); r != "" && r != "user" {
		return false
	}
	return m.Metadata[engram.MetaGranularity] != engram.GranularityScene
}

// sft builds one record per pair of every current memory, the profile's
// first, in id order.
func (b *builder) sft(ctx context.Context) []any {
	var out []any
	mems := make([]*engram.Memory, len(b.snap.memories))
	for i := range b.snap.memories {
		mems[i] = &b.snap.memories[i]
	}
	slices.SortStableFunc(mems, func(x, y *engram.Memory) int { return boolCmp(engram.IsProfile(y), engram.IsProfile(x)) })
	for _, m := range mems {
		if !b.current(m) {
			continue
		}
		tag := langOf(m)
		pairs := b.pairs(ctx, m)
		if len(pairs) == 0 {
			continue
		}
		b.counts.Memories++
		for _, p := range pairs {
			out = append(out, SFTRecord{Messages: []Message{
				{Role: "system", Content: systemPrompt(tag, b.user)},
				{Role: "user", Content: p.Question},
				{Role: "assistant", Content: p.Answer},
			}})
		}
	}
	return out
}

// pairs asks the Asker for m's pairs, falling back to the templates.
func (b *builder) pairs(ctx context.Context, m *engram.Memory) []Pair {
	if b.o.Asker != nil && !engram.IsProfile(m) {
		ps, err := b.o.Asker.Pairs(ctx, m)
		if err == nil {
			return ps
		}
		b.counts.Fallbacks++
		b.o.Logger.Warn("finetune: the model's pairs are unusable, using templates", "memory", m.ID, "err", err)
	}
	return templatePairs(m)
}

// dpo builds preference pairs: for each memory a current one replaced
// (through a chain of supersedes) or an earlier version of a current
// memory (the profile included), the current answer is chosen and the
// replaced one rejected.
func (b *builder) dpo() []any {
	var out []any
	byHead := b.supersededByHead()
	for i := range b.snap.memories {
		cur := &b.snap.memories[i]
		if !b.current(cur) {
			continue
		}
		olds := b.replaced(cur, byHead[cur.ID])
		n := len(out)
		out = append(out, b.prefer(cur, olds)...)
		if len(out) > n {
			b.counts.Memories++
		}
	}
	return out
}

// supersededByHead groups the superseded memories in the user's voice,
// in id order, by the id of the memory that ends their supersede chain.
func (b *builder) supersededByHead() map[string][]*engram.Memory {
	out := map[string][]*engram.Memory{}
	for i := range b.snap.memories {
		m := &b.snap.memories[i]
		if m.Status != engram.StatusSuperseded || !voiced(m) {
			continue
		}
		if h := b.head(m); h != nil {
			out[h.ID] = append(out[h.ID], m)
		}
	}
	return out
}

// replaced lists what cur replaced: the memories whose supersede chain
// ends at cur (superseded), then the earlier contents of cur's own
// versions, oldest first.
func (b *builder) replaced(cur *engram.Memory, superseded []*engram.Memory) []*engram.Memory {
	out := slices.Clone(superseded)
	for _, v := range b.snap.versions[cur.ID] {
		if v.Old != nil && v.Old.Kind != engram.KindVault {
			out = append(out, v.Old)
		}
	}
	return out
}

// head follows m's supersede chain to the memory that ends it, nil when
// the chain breaks (a replacement deleted, purged or outside the scope)
// or loops.
func (b *builder) head(m *engram.Memory) *engram.Memory {
	seen := map[string]bool{}
	for m != nil && m.Status == engram.StatusSuperseded {
		if seen[m.ID] {
			return nil
		}
		seen[m.ID] = true
		m = b.snap.byID[m.SupersededBy]
	}
	return m
}

// prefer builds the records preferring cur's answer to each of olds',
// each rejected answer once and never one equal to the chosen.
func (b *builder) prefer(cur *engram.Memory, olds []*engram.Memory) []any {
	tag := langOf(cur)
	chosen := preferencePair(tag, cur)
	if chosen.Answer == "" {
		return nil
	}
	seen := map[string]bool{chosen.Answer: true}
	var out []any
	for _, old := range olds {
		// The old fact or profile is phrased in the current one's
		// language, as the answer to the same question; one that is asked
		// otherwise (a profile without traits, a fact of another
		// attribute) is no pair.
		rej := preferencePair(tag, old)
		structured := engram.IsProfile(old) || old.Metadata[engram.MetaFactAttribute] != nil
		if rej.Answer == "" || seen[rej.Answer] || (structured && rej.Question != chosen.Question) {
			continue
		}
		seen[rej.Answer] = true
		out = append(out, DPORecord{
			Prompt:   []Message{{Role: "system", Content: systemPrompt(tag, b.user)}, {Role: "user", Content: chosen.Question}},
			Chosen:   []Message{{Role: "assistant", Content: chosen.Answer}},
			Rejected: []Message{{Role: "assistant", Content: rej.Answer}},
		})
	}
	return out
}

// preferencePair is m's first template pair in language tag.
func preferencePair(tag string, m *engram.Memory) Pair {
	ps := templatePairsIn(tag, m)
	if len(ps) == 0 {
		return Pair{}
	}
	return ps[0]
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// langOf is the base language of m, "en" when unknown.
func langOf(m *engram.Memory) string {
	tag := strings.ToLower(m.Language)
	if i := strings.IndexAny(tag, "-_"); i > 0 {
		tag = tag[:i]
	}
	if tag == "" {
		tag = lang.Detect(m.Value)
	}
	if tag == "" {
		return "en"
	}
	return tag
}

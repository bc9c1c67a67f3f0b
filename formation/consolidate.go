package formation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// facts adds, for every fact the turns state, its fact memory and what it
// does to the facts of the same subject and attribute held before it (see
// Rules).
func (c *consolidation) facts(ctx context.Context, said []engram.Episode) error {
	order := slices.Clone(said)
	slices.SortStableFunc(order, func(a, b engram.Episode) int { return a.OccurredAt.Compare(b.OccurredAt) })
	for i := range order {
		e := &order[i]
		tag := lang.Detect(e.Content)
		stops := stopsOf(tag, e.Content)
		for _, f := range withoutStopped(factsOf(tag, e.Content), stops) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := c.fact(ctx, e, f.tag, f); err != nil {
				return err
			}
		}
		if err := c.stops(ctx, e, stops); err != nil {
			return err
		}
	}
	return nil
}

// subjectOf names whom a first-person episode is about: its speaker, else
// its role, else "user".
func subjectOf(e *engram.Episode) string {
	if p := party(e); p != "" {
		return p
	}
	return "user"
}

// fact decides what fact f, stated by e, does: merge into the same value,
// supersede an older one, conflict with one that is not older, or add.
func (c *consolidation) fact(ctx context.Context, e *engram.Episode, tag string, f fact) error {
	m := factMemory(e, tag, f)
	olds, err := c.current(ctx, subjectOf(e), f.attr)
	if err != nil {
		return err
	}
	if done, err := c.change(ctx, e, f, m, olds); done || err != nil {
		return err
	}
	if len(olds) == 0 {
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "a fact the turn states"})
		return nil
	}
	old := olds[0] // the latest
	switch {
	case slices.Contains(old.Sources, e.ID):
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpNoop, TargetID: old.ID, Reason: "the fact is already held from this turn"})
	case strings.EqualFold(factValue(&old), f.value):
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpMerge, TargetID: old.ID, Memory: engram.Memory{Sources: m.Sources},
			Reason: "the same fact stated again"})
	case old.ValidFrom == nil || e.OccurredAt.After(*old.ValidFrom):
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpSupersede, TargetID: old.ID, Memory: m,
			Reason: fmt.Sprintf("%s: %q replaces %q", f.attr, f.value, factValue(&old))})
		return c.stale(ctx, &old, termsOf(f), e.OccurredAt)
	default:
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpConflict, TargetID: old.ID, Memory: m,
			Reason: fmt.Sprintf("%s: %q, said no later than %q", f.attr, f.value, factValue(&old))})
	}
	return nil
}

// factMemory is the short memory of fact f that e states.
func factMemory(e *engram.Episode, tag string, f fact) engram.Memory {
	at := e.OccurredAt
	subj := subjectOf(e)
	text := subj + " " + f.label + " " + f.value
	md := map[string]any{engram.MetaFactSubject: subj, engram.MetaFactAttribute: f.attr, engram.MetaFactValue: f.value,
		engram.MetaFactTerms: termsOf(f)}
	if e.Speaker != "" {
		md[engram.MetaSpeaker] = e.Speaker
	}
	if e.Role != "" {
		md[engram.MetaRole] = e.Role
	}
	return engram.Memory{
		ID: engram.NewID(), Namespace: e.Namespace, Kind: engram.KindSemantic,
		Abstraction: clip(text, engram.MaxShortBytes), Value: text, Language: tag,
		Cues: []string{subj, f.value}, ValidFrom: &at, Sources: []string{e.ID}, Metadata: md,
	}
}

func factValue(m *engram.Memory) string {
	v, _ := m.Metadata[engram.MetaFactValue].(string)
	return v
}

// current returns the active facts of subject and attribute, the batch's
// own (added or superseding) and the stored ones, latest valid first.
func (c *consolidation) current(ctx context.Context, subject, attr string) ([]engram.Memory, error) {
	var out []engram.Memory
	replaced := map[string]bool{}
	for _, op := range c.ops {
		switch op.Op {
		case engram.OpAdd, engram.OpSupersede, engram.OpConflict:
			md := op.Memory.Metadata
			if md[engram.MetaFactSubject] == subject && md[engram.MetaFactAttribute] == attr {
				out = append(out, op.Memory)
			}
		}
		if op.Op == engram.OpSupersede {
			replaced[op.TargetID] = true
		}
	}
	if c.sr != nil {
		stored, _, err := c.sr.ListMemories(ctx, engram.MemoryFilter{Limit: 20,
			Metadata: map[string]any{engram.MetaFactSubject: subject, engram.MetaFactAttribute: attr}})
		if err != nil {
			return nil, err
		}
		out = append(out, stored...)
	}
	out = slices.DeleteFunc(out, func(m engram.Memory) bool { return replaced[m.ID] })
	slices.SortStableFunc(out, func(a, b engram.Memory) int { return validFrom(b).Compare(validFrom(a)) })
	return out, nil
}

func validFrom(m engram.Memory) time.Time {
	if m.ValidFrom == nil {
		return time.Time{}
	}
	return *m.ValidFrom
}

// stale marks the memories formed from the turns that stated the replaced
// fact old with terms, the words of a question about it, stale from event
// time at, when the newer fact was said (engram.MetaStaleSince): an update
// of a stored one, or a change to the batch's own ADD or UPDATE of it.
func (c *consolidation) stale(ctx context.Context, old *engram.Memory, terms []string, at time.Time) error {
	mark := func(md map[string]any) map[string]any { return markStale(md, terms, at) }
	done := map[string]bool{}
	for i := range c.ops {
		op := &c.ops[i]
		if (op.Op == engram.OpAdd || op.Op == engram.OpUpdate) && !isFact(&op.Memory) && sharesSource(op.Memory.Sources, old.Sources) {
			op.Memory.Metadata = mark(op.Memory.Metadata)
			done[op.Memory.ID], done[op.TargetID] = true, true
		}
	}
	if c.sr == nil {
		return nil
	}
	ms, _, err := c.sr.ListMemories(ctx, engram.MemoryFilter{Sources: old.Sources, Kinds: []engram.Kind{engram.KindEpisodic}, Limit: 20})
	if err != nil {
		return err
	}
	for _, m := range ms {
		if done[m.ID] || isFact(&m) {
			continue
		}
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpUpdate, TargetID: m.ID, Memory: engram.Memory{Metadata: mark(m.Metadata), Sources: m.Sources},
			Reason: "states a fact a newer one replaced"})
	}
	return nil
}

// markStale returns a copy of md with terms among its stale terms, each
// stale from the earliest time it was replaced at.
func markStale(md map[string]any, terms []string, at time.Time) map[string]any {
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	cur := (&engram.Memory{Metadata: md}).StaleTerms()
	since := map[string]any{}
	if old, ok := md[engram.MetaStaleSince].(map[string]any); ok {
		maps.Copy(since, old)
	}
	stamp := at.UTC().Format(time.RFC3339Nano)
	for _, t := range terms {
		if !slices.Contains(cur, t) {
			cur = append(cur, t)
		}
		if prev, ok := since[t].(string); !ok || laterStamp(prev, at) {
			since[t] = stamp
		}
	}
	md[engram.MetaStaleTerms] = cur
	md[engram.MetaStaleSince] = since
	return md
}

// laterStamp reports whether the RFC 3339 time prev is after at, or no
// time at all.
func laterStamp(prev string, at time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, prev)
	return err != nil || t.After(at)
}

func isFact(m *engram.Memory) bool { return m.Metadata[engram.MetaFactAttribute] != nil }

func sharesSource(a, b []string) bool {
	return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}

// forget adds, for every request to forget, a soft delete of each memory
// that holds what it names: the scope's full-text matches that cover its
// content words, and the batch's own earlier memories that do. A request
// that names nothing deletes nothing (a NOOP says so).
func (c *consolidation) forget(ctx context.Context, asks []request) error {
	deleted := map[string]bool{}
	for _, a := range asks {
		reason := fmt.Sprintf("forgotten at the user's request: %q", clip(a.ep.Content, 160))
		if len(a.topic) == 0 {
			c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpNoop, Reason: "a request to forget that names nothing: " + clip(a.ep.Content, 160)})
			continue
		}
		targets, err := c.forgotten(ctx, a)
		if err != nil {
			return err
		}
		for _, m := range targets {
			if !deleted[m.ID] {
				deleted[m.ID] = true
				c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpDelete, TargetID: m.ID, Reason: reason})
				if err := c.scrub(ctx, m, deleted); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// scrub removes the text of gone, a forgotten turn, from the context the
// abstractions of its neighbours carry (see Former.Context), so that
// search no longer finds it through them: the batch's own memories are
// changed, stored ones updated.
func (c *consolidation) scrub(ctx context.Context, gone engram.Memory, deleted map[string]bool) error {
	said := strings.Join(strings.Fields(gone.Value), " ")
	if sp := partyOf(&gone); sp != "" {
		said = sp + ": " + said
	}
	for _, id := range gone.Neighbours() {
		if deleted[id] {
			continue
		}
		if i := slices.IndexFunc(c.ops, func(op engram.MemoryOp) bool { return op.Op == engram.OpAdd && op.Memory.ID == id }); i >= 0 {
			c.ops[i].Memory.Abstraction = withoutContext(c.ops[i].Memory.Abstraction, said)
			continue
		}
		if c.sr == nil {
			continue
		}
		n, err := c.sr.GetMemory(ctx, id)
		if engram.ErrorCode(err) == engram.ENOTFOUND {
			continue
		} else if err != nil {
			return err
		}
		if abs := withoutContext(n.Abstraction, said); abs != n.Abstraction && n.Status == engram.StatusActive {
			c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpUpdate, TargetID: id, Memory: engram.Memory{Abstraction: abs},
				Reason: "the context of a neighbour forgotten at the user's request removed"})
		}
	}
	return nil
}

// withoutContext returns abs without its context lines (all but the
// first) that quote said, whole or cut short.
func withoutContext(abs, said string) string {
	lines := strings.Split(abs, "\n")
	out := lines[:1]
	for _, l := range lines[1:] {
		if p := strings.TrimSuffix(l, "…"); p != "" && strings.HasPrefix(said, strings.TrimSpace(p)) {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// MaxForget is the most memories one request to forget deletes.
const MaxForget = 20

// forgotten returns the memories request a is about.
func (c *consolidation) forgotten(ctx context.Context, a request) ([]engram.Memory, error) {
	var ms []engram.Memory
	for _, op := range c.ops {
		if op.Op == engram.OpAdd && validFrom(op.Memory).Compare(a.ep.OccurredAt) <= 0 && covers(a.tag, op.Memory.Value, a.topic) {
			ms = append(ms, op.Memory)
		}
	}
	if c.sr != nil {
		hits, err := c.sr.SearchText(ctx, a.text, engram.MemoryFilter{}, MaxForget)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if covers(a.tag, h.Memory.Value, a.topic) {
				ms = append(ms, h.Memory)
			}
		}
	}
	return ms[:min(len(ms), MaxForget)], nil
}

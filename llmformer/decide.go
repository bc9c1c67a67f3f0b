package llmformer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

const decidePrompt = `You keep a memory store current. You get one NEW memory and the EXISTING memories most like it, numbered [n].
Decide one operation and reply with one JSON object {"decision": ..., "target": n, "reason": ..., "abstraction": ..., "value": ..., "cues": [...]}:
- ADD: the new memory is about something none of them says (target 0).
- MERGE: it says the same as [target] with more detail; give the merged abstraction, value and cues.
- UPDATE: it corrects or completes [target] without the old one ever having been true for a different time; give the updated abstraction, value and cues.
- SUPERSEDE: it states a newer value of the same attribute of the same subject as [target] (moved, changed job, changed mind); the old one stays as history.
- DELETE: the new memory is a request to forget [target].
- NOOP: [target] already says it; nothing is stored.
- CONFLICT: it contradicts [target] and it is unclear which is true now.
Changes of a fact, in every language:
- Stopping is a change: when the new memory says the subject stopped, quit, gave up, switched from or no longer does or is what [target] says ("stopped drinking coffee", "quit teaching", "nicht mehr", "aufgehört", "ya no", "dejé de", "ne ... plus", "j'ai arrêté", "不再", "戒了"), or what they do instead now ("now I only drink green tea", "jetzt nur noch", "改喝", "现在只"), SUPERSEDE [target].
- A new job stated with title and employer replaces the old job and the old employer: SUPERSEDE the [target] of the old job or employer.
- A refinement is not a change: when the new value lies within or is more exact than [target]'s (a district or street of the city [target] names, a more exact date or time), MERGE and give a value that keeps the broader one answerable ("lives in Schwabing, Munich"; "on Friday 12 May at 3pm").
- A contradiction is a change: another city or country, another employer: SUPERSEDE.
- When you cannot tell whether a new place lies within [target]'s or elsewhere, ADD: never SUPERSEDE a fact that may still be true on a guess.
Keep abstraction, value and cues in the language of the memories; never translate. Use "" and [] where a field does not apply.`

var decideSchema = json.RawMessage(`{"type":"object","additionalProperties":false,
"required":["decision","target","reason","abstraction","value","cues"],"properties":{
"decision":{"type":"string","enum":["ADD","MERGE","UPDATE","SUPERSEDE","DELETE","NOOP","CONFLICT"]},
"target":{"type":"integer"},"reason":{"type":"string"},"abstraction":{"type":"string"},
"value":{"type":"string"},"cues":{"type":"array","items":{"type":"string"}}}}`)

type decideReply struct {
	Decision    string   `json:"decision"`
	Target      int      `json:"target"`
	Reason      string   `json:"reason"`
	Abstraction string   `json:"abstraction"`
	Value       string   `json:"value"`
	Cues        []string `json:"cues"`
}

// consolidate decides, for each candidate, what to do with it given the
// active memories of the scope most like it. A candidate without
// neighbours (or without a reader) is added without asking.
func (f *Former) consolidate(ctx context.Context, r engram.ScopeReader, cands []cand) ([]engram.MemoryOp, error) {
	var ops []engram.MemoryOp
	taken := map[string]bool{} // targets an earlier candidate already changes
	for i, cd := range cands {
		c := cd.Memory
		near, err := f.neighbours(ctx, r, c)
		if err != nil {
			return nil, err
		}
		if len(near) == 0 {
			ops = append(ops, engram.MemoryOp{Op: engram.OpAdd, Memory: c, Reason: "new: nothing like it stored"})
			continue
		}
		op, err := f.decide(ctx, cd, near)
		if err != nil {
			return nil, fmt.Errorf("memories[%d]: %w", i, err)
		}
		if op.TargetID != "" && op.Op != engram.OpNoop && op.Op != engram.OpConflict {
			if taken[op.TargetID] {
				op = engram.MemoryOp{Op: engram.OpAdd, Memory: c, Reason: "added: its target is already changed in this batch"}
			}
			taken[op.TargetID] = true
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// neighbours returns the scope's active memories most like c by text,
// without the profile memory, at most Config.Neighbours.
func (f *Former) neighbours(ctx context.Context, r engram.ScopeReader, c engram.Memory) ([]engram.Memory, error) {
	if r == nil {
		return nil, nil
	}
	q := strings.Join(append([]string{c.Abstraction, c.Value}, c.Cues...), " ")
	hits, err := r.SearchText(ctx, q, engram.MemoryFilter{}, f.cfg.Neighbours+1)
	if err != nil {
		return nil, fmt.Errorf("llm former: find memories like a candidate: %w", err)
	}
	var out []engram.Memory
	for _, h := range hits {
		if isProfile(h.Memory) || h.Memory.Status != engram.StatusActive || len(out) == f.cfg.Neighbours {
			continue
		}
		out = append(out, h.Memory)
	}
	return out, nil
}

// decide asks the model what c means for near and validates the answer.
func (f *Former) decide(ctx context.Context, cd cand, near []engram.Memory) (engram.MemoryOp, error) {
	c := cd.Memory
	var rep decideReply
	if err := f.ask(ctx, "decision", decidePrompt, renderDecision(c, near), decideSchema, &rep); err != nil {
		return engram.MemoryOp{}, err
	}
	op := engram.Op(strings.ToUpper(strings.TrimSpace(rep.Decision)))
	reason := strings.TrimSpace(rep.Reason)
	if reason == "" {
		reason = strings.ToLower(string(op)) + " (no reason given)"
	}
	switch op {
	case engram.OpAdd:
		return engram.MemoryOp{Op: op, Memory: c, Reason: reason}, nil
	case engram.OpMerge, engram.OpUpdate, engram.OpSupersede, engram.OpDelete, engram.OpNoop, engram.OpConflict:
	default:
		return engram.MemoryOp{}, invalid("decision", "decision %q is not one of ADD, MERGE, UPDATE, SUPERSEDE, DELETE, NOOP, CONFLICT", rep.Decision)
	}
	if rep.Target < 1 || rep.Target > len(near) {
		return engram.MemoryOp{}, invalid("decision", "%s target %d is not one of the memories shown, 1..%d", op, rep.Target, len(near))
	}
	t := near[rep.Target-1]
	out := engram.MemoryOp{Op: op, TargetID: t.ID, Memory: c, Reason: reason}
	switch op {
	case engram.OpMerge, engram.OpUpdate:
		out.Memory = merged(t, c, rep)
	case engram.OpDelete, engram.OpNoop:
		out.Memory = engram.Memory{}
	case engram.OpSupersede:
		if out.Memory.ValidFrom == nil {
			at := cd.at // the change holds from when it was said
			out.Memory.ValidFrom = &at
		}
	}
	return out, nil
}

// merged is the content t takes when c is merged into it or updates it:
// the model's abstraction, value and cues where it gave them, else c's,
// with c's sources.
func merged(t, c engram.Memory, rep decideReply) engram.Memory {
	m := c
	m.ID, m.Namespace = "", t.Namespace
	if s := strings.TrimSpace(rep.Value); s != "" {
		m.Value = s
	}
	if s := strings.TrimSpace(rep.Abstraction); s != "" {
		m.Abstraction = s
	}
	if len(rep.Cues) > 0 {
		m.Cues = rep.Cues
	} else {
		m.Cues = append(append([]string{}, t.Cues...), c.Cues...)
	}
	if m.ValidFrom == nil {
		m.ValidFrom = t.ValidFrom
	}
	return m
}

// renderDecision shows the candidate and its neighbours, numbered from 1;
// ids never reach the model.
func renderDecision(c engram.Memory, near []engram.Memory) string {
	var b strings.Builder
	b.WriteString("NEW memory:\n")
	writeMemory(&b, c)
	b.WriteString("\nEXISTING memories:\n")
	for i, m := range near {
		fmt.Fprintf(&b, "[%d] ", i+1)
		writeMemory(&b, m)
	}
	return b.String()
}

func writeMemory(b *strings.Builder, m engram.Memory) {
	fmt.Fprintf(b, "(%s", m.Kind)
	if m.ValidFrom != nil {
		fmt.Fprintf(b, ", from %s", m.ValidFrom.Format("2006-01-02"))
	}
	if m.ValidTo != nil {
		fmt.Fprintf(b, ", until %s", m.ValidTo.Format("2006-01-02"))
	}
	fmt.Fprintf(b, ") %s: %s\n", m.Abstraction, m.Value)
}

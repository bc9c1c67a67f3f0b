package llmformer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

const profilePrompt = `You maintain a short profile of a user for a memory system.
You get the CURRENT profile (stable traits and transient states) and NEW facts about the user.
Rewrite the profile: keep what still holds, drop what the new facts make untrue or outdated, add what is new.
Traits are stable (name, home, job, family, diet, lasting preferences); states are transient (mood, current project, temporary situation).
Reply with one JSON object {"traits": [...], "states": [...]}: each entry one short sentence, in the user's own language, most important first, at most %d traits and %d states.`

var profileSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["traits","states"],"properties":{
"traits":{"type":"array","items":{"type":"string"}},"states":{"type":"array","items":{"type":"string"}}}}`)

type profileReply struct {
	Traits *[]string `json:"traits"`
	States *[]string `json:"states"`
}

// profile rewrites the profile memory of the batch's user (see
// engram.ProfileNamespace; the engine stores it there) when a
// candidate is a trait or state of the user or a core memory: an UPDATE of
// the stored profile, or an ADD when there is none. It returns nil when
// no candidate bears on the profile.
func (f *Former) profile(ctx context.Context, r engram.ScopeReader, ns engram.Namespace, cands []cand) (*engram.MemoryOp, error) {
	var facts []string
	for _, c := range cands {
		if c.Metadata[MetaProfilePart] != nil || c.Kind == engram.KindCore {
			facts = append(facts, c.Value)
		}
	}
	if len(facts) == 0 {
		return nil, nil
	}
	cur, err := currentProfile(ctx, r)
	if err != nil {
		return nil, err
	}
	var rep profileReply
	prompt := fmt.Sprintf(profilePrompt, f.cfg.Traits, f.cfg.States)
	if err := f.ask(ctx, "profile", prompt, renderProfile(cur, facts), profileSchema, &rep); err != nil {
		return nil, err
	}
	if rep.Traits == nil || rep.States == nil {
		return nil, invalid("profile", "traits or states is missing")
	}
	m := engram.ProfileMemory(engram.ProfileNamespace(ns), bounded(*rep.Traits, f.cfg.Traits), bounded(*rep.States, f.cfg.States))
	if err := m.Validate(); err != nil {
		return nil, invalid("profile", "%v", err)
	}
	if cur == nil {
		return &engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "profile created"}, nil
	}
	return &engram.MemoryOp{Op: engram.OpUpdate, TargetID: cur.ID, Memory: m, Reason: "profile rewritten on consolidation"}, nil
}

// currentProfile returns the active profile memory of the view's user
// (kept per user, outside a session's scope), nil when there is no view or
// no profile.
func currentProfile(ctx context.Context, r engram.ScopeReader) (*engram.Memory, error) {
	if r == nil {
		return nil, nil
	}
	m, err := r.CurrentProfile(ctx)
	if err != nil {
		return nil, fmt.Errorf("llm former: read the profile: %w", err)
	}
	return m, nil
}

func renderProfile(cur *engram.Memory, facts []string) string {
	var b strings.Builder
	traits, states := engram.ProfileOf(cur)
	b.WriteString("CURRENT traits:\n")
	for _, t := range traits {
		fmt.Fprintf(&b, "- %s\n", t)
	}
	b.WriteString("CURRENT states:\n")
	for _, s := range states {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	b.WriteString("\nNEW facts:\n")
	for _, f := range facts {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String()
}

// bounded returns the first n non-empty entries of ss, trimmed.
func bounded(ss []string, n int) []string {
	out := []string{}
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" && len(out) < n {
			out = append(out, s)
		}
	}
	return out
}

func isProfile(m engram.Memory) bool { return m.Metadata[engram.MetaProfile] == true }

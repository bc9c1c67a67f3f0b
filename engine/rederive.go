package engine

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/formation"
	"github.com/engramhq/engram/lang"
)

// Edits re-derive. A patch that changes a memory's value or abstraction
// (UpdateMemory: PATCH, MCP update, the Mem0 update) leaves nothing of the
// old text behind where the request did not say otherwise: the
// abstraction that repeated or summarised the old value, the cues taken
// from the old text, the fact's value (engram.MetaFactValue), the dates it
// names and its fingerprint are derived from the new text, and so are the
// full-text terms and the vectors, which follow from those. A field the
// request sets is taken as given.

// rederive returns p with the fields it leaves unset derived from the new
// text it gives old, when it changes old's value or abstraction; else p.
func rederive(old *engram.Memory, p engram.MemoryPatch) engram.MemoryPatch {
	valueChanged := p.Value != nil && *p.Value != old.Value
	absChanged := p.Abstraction != nil && *p.Abstraction != old.Abstraction
	if old.Kind == engram.KindVault || (!valueChanged && !absChanged) {
		return p
	}
	value := old.Value
	if p.Value != nil {
		value = *p.Value
	}
	if p.Abstraction == nil {
		a := derivedAbstraction(old, value)
		p.Abstraction = &a
	}
	var at time.Time
	if old.ValidFrom != nil {
		at = *old.ValidFrom
	}
	mentions := lang.ResolveLang(old.Language, value, at)
	if p.Metadata == nil {
		p.Metadata = derivedMetadata(old, value, mentions)
	}
	if p.Cues == nil {
		cues := derivedCues(old, value, *p.Abstraction, p.Metadata, mentions)
		p.Cues = &cues
	}
	return p
}

// derivedAbstraction is old's abstraction for the new value: the value
// itself where the abstraction was the value, the old value (or the old
// fact's value) replaced where the abstraction quoted it. An abstraction
// that quotes neither is a summary of its own (a client's "Ann's
// coffee"), and stays as it was, as does an empty one.
func derivedAbstraction(old *engram.Memory, value string) string {
	a := old.Abstraction
	switch {
	case strings.TrimSpace(a) == "":
		return a
	case strings.TrimSpace(a) == strings.TrimSpace(old.Value):
		return value
	case old.Value != "" && strings.Contains(a, old.Value):
		return strings.ReplaceAll(a, old.Value, value)
	}
	if fv, ok := newFactValue(old, value); ok && strings.Contains(a, factValue(old)) {
		return strings.ReplaceAll(a, factValue(old), fv)
	}
	return a
}

// derivedMetadata is old's metadata for the new value: the fact's value
// where it can be told (see newFactValue), else left out; the dates the
// new text names; the fingerprint of the new text.
func derivedMetadata(old *engram.Memory, value string, mentions []lang.Mention) map[string]any {
	md := maps.Clone(old.Metadata)
	if md == nil {
		return nil
	}
	if _, ok := md[engram.MetaFactValue]; ok {
		if fv, ok := newFactValue(old, value); ok {
			md[engram.MetaFactValue] = fv
		} else {
			delete(md, engram.MetaFactValue)
		}
	}
	if _, ok := md[engram.MetaEventFrom]; ok || len(mentions) > 0 {
		delete(md, engram.MetaEventFrom)
		delete(md, engram.MetaEventTo)
		if len(mentions) > 0 {
			md[engram.MetaEventFrom] = mentions[0].From.Format(time.DateOnly)
			md[engram.MetaEventTo] = mentions[0].To.Format(time.DateOnly)
		}
	}
	if _, ok := md[engram.MetaFingerprint]; ok {
		md[engram.MetaFingerprint] = formation.Fingerprint(value)
	}
	return md
}

// newFactValue tells the fact's value in the new text of a fact memory:
// the part of it between the words that stood before and after the old
// value in the old text ("Bob lives in Munich" → "Bob lives in Berlin":
// Berlin). It fails when old holds no fact value or the new text does not
// keep those words.
func newFactValue(old *engram.Memory, value string) (string, bool) {
	fv := factValue(old)
	i := strings.Index(old.Value, fv)
	if fv == "" || i < 0 {
		return "", false
	}
	before, after := old.Value[:i], old.Value[i+len(fv):]
	if len(before)+len(after) > len(value) || !strings.HasPrefix(value, before) || !strings.HasSuffix(value, after) {
		return "", false
	}
	nv := strings.TrimSpace(value[len(before) : len(value)-len(after)])
	return nv, nv != ""
}

func factValue(m *engram.Memory) string {
	v, _ := m.Metadata[engram.MetaFactValue].(string)
	return v
}

// derivedCues is old's cues for the new texts: those the old texts did
// not contain (a speaker, a context) or the new ones still do, then the
// anchors of the new value (its speaker, names, titles and dates, see
// formation.Cues) and the fact's new value, each once, at most
// engram.MaxCues.
func derivedCues(old *engram.Memory, value, abstraction string, md map[string]any, mentions []lang.Mention) []string {
	oldText := strings.ToLower(old.Value + "\n" + old.Abstraction)
	newText := strings.ToLower(value + "\n" + abstraction)
	var out []string
	add := func(c string) {
		c = strings.TrimSpace(c)
		if c != "" && len(out) < engram.MaxCues && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, c) }) {
			out = append(out, c)
		}
	}
	for _, c := range old.Cues {
		if lc := strings.ToLower(c); !strings.Contains(oldText, lc) || strings.Contains(newText, lc) {
			add(c)
		}
	}
	speaker, _ := old.Metadata[engram.MetaSpeaker].(string)
	for _, c := range formation.Cues(old.Language, speaker, value, mentions, nil) {
		add(c)
	}
	if fv, _ := md[engram.MetaFactValue].(string); fv != "" {
		add(fv)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

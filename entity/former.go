package entity

import (
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Metadata keys under which the LLM former (package llmformer) leaves the
// entities and relations it read in a memory: a list of {"name", "type"}
// and a list of {"source", "label", "target", "valid_from", "valid_to"}
// (names, and RFC 3339 times or "").
const (
	MetaEntities  = "entities"
	MetaRelations = "relations"
)

// Labelled is a relation a model read in a memory, between two of its
// entities by name, with its event-time validity when the model gave one.
type Labelled struct {
	Source, Label, Target string
	ValidAt, InvalidAt    *time.Time
}

// maxLabelled bounds the entities and relations read from one memory.
const maxLabelled = 16

// FromFormer returns the entities (as candidates with their types) and
// the labelled relations the former left on m. Malformed entries are
// skipped: a name without letters, a type or label too long, a relation
// whose ends are not among the entities or are one entity, the label of
// the co-occurrence relations. Labels are folded to lower snake case.
func FromFormer(m *engram.Memory) ([]Candidate, []Labelled) {
	var cands []Candidate
	byKey := map[string]string{} // normalised name → name as listed
	for _, x := range list(m.Metadata[MetaEntities]) {
		name, typ := str(x, "name"), strings.ToLower(str(x, "type"))
		k := engram.NormalizeName(name)
		if k == "" || len(name) > engram.MaxShortBytes || len(typ) > 64 || byKey[k] != "" || len(cands) == maxLabelled {
			continue
		}
		if typ == "" {
			typ = engram.EntityThing
		}
		byKey[k] = name
		cands = append(cands, Candidate{Name: name, Type: typ})
	}
	var rels []Labelled
	for _, x := range list(m.Metadata[MetaRelations]) {
		src, tgt := byKey[engram.NormalizeName(str(x, "source"))], byKey[engram.NormalizeName(str(x, "target"))]
		label := foldLabel(str(x, "label"))
		if src == "" || tgt == "" || src == tgt || label == "" || label == engram.RelationCoOccurs || len(rels) == maxLabelled {
			continue
		}
		r := Labelled{Source: src, Label: label, Target: tgt, ValidAt: when(str(x, "valid_from")), InvalidAt: when(str(x, "valid_to"))}
		if r.ValidAt != nil && r.InvalidAt != nil && r.InvalidAt.Before(*r.ValidAt) {
			r.InvalidAt = nil
		}
		rels = append(rels, r)
	}
	return cands, rels
}

func list(v any) []map[string]any {
	xs, _ := v.([]any)
	var out []map[string]any
	for _, x := range xs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return strings.TrimSpace(s)
}

func when(s string) *time.Time {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t
		}
	}
	return nil
}

// foldLabel folds a label to lower snake case ("Lives in" → "lives_in"),
// "" when it has no letters or is longer than 64 bytes.
func foldLabel(s string) string {
	f := strings.Join(strings.Fields(strings.ToLower(strings.NewReplacer("-", " ", "_", " ").Replace(s))), "_")
	if len(f) > 64 || engram.NormalizeName(f) == "" {
		return ""
	}
	return f
}

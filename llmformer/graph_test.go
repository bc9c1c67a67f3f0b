package llmformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// TestFormKeepsEntitiesAndRelations: the entities and labelled relations
// of the model's reply are kept on the formed memory where
// entity.FromFormer reads them, an unreadable date dropped (German
// here); a reply without them forms the same memory without.
func TestFormKeepsEntitiesAndRelations(t *testing.T) {
	f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{})
	srv.QueueChat(extraction(
		fact("semantic", "Anas Umzug", "Ana wohnt seit letztem Monat in Lissabon.",
			"entities", `[{"name": "Ana", "type": "person"}, {"name": "Lissabon", "type": "place"}, {"name": 7}]`,
			"relations", `[{"source": "Ana", "label": "lives_in", "target": "Lissabon", "valid_from": "2024-05-01", "valid_to": "bald"}]`),
		fact("semantic", "weather", "It rains.")),
		`{"traits": [], "states": []}`)
	ops, err := f.Form(context.Background(), engram.FormRequest{View: &reader{}, Episodes: episodes("Ana wohnt seit letztem Monat in Lissabon. Es regnet.")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 2 {
		t.Fatalf("ops = %+v", ops)
	}
	cands, rels := entity.FromFormer(&ops[0].Memory)
	if len(cands) != 2 || cands[0] != (entity.Candidate{Name: "Ana", Type: engram.EntityPerson}) || cands[1].Type != engram.EntityPlace {
		t.Errorf("entities = %+v, want Ana (person) and Lissabon (place), the nameless one dropped", cands)
	}
	if len(rels) != 1 || rels[0].Label != "lives_in" || rels[0].Source != "Ana" || rels[0].Target != "Lissabon" || rels[0].InvalidAt != nil {
		t.Fatalf("relations = %+v", rels)
	}
	if rels[0].ValidAt == nil || !rels[0].ValidAt.Equal(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("valid_from = %v, want 2024-05-01 (and the unreadable valid_to dropped)", rels[0].ValidAt)
	}
	if _, ok := ops[1].Memory.Metadata[entity.MetaEntities]; ok {
		t.Errorf("a memory without entities got %v", ops[1].Memory.Metadata)
	}
}

package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// TestSplitTooManyRelations: a split reads at most MaxEntityLimit of the
// entity's relations to divide; an entity with more is refused, as a
// merge of one is, rather than split with the rest of its relations left
// behind (their evidence still the moved memory's), and the store is as
// it was.
func TestSplitTooManyRelations(t *testing.T) {
	ctx := context.Background()
	e := openAgent(t, engine.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	sc := engram.ScopeOf(ns)
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{
		{Value: "Last summer I went hiking with Melanie."}, {Value: "Yesterday I cooked dinner with Melanie."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := e.ListEntities(ctx, sc, engram.EntityFilter{Prefix: "Melanie"})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].Mentions != 2 {
		t.Fatalf("Melanie: %+v, %v", page, err)
	}
	mel := page.Entities[0].ID

	// Melanie knows MaxEntityLimit+1 others, each on the second memory's
	// word.
	now := time.Now().UTC()
	err = e.Store().Update(ctx, func(tx engram.Tx) error {
		for i := range engram.MaxEntityLimit + 1 {
			name := fmt.Sprintf("Person %d", i)
			other := &engram.Entity{ID: engram.NewID(), Namespace: ns, Name: name, Norm: engram.NormalizeName(name),
				Type: engram.EntityPerson, Status: engram.EntityActive, CreatedAt: now, UpdatedAt: now}
			if err := tx.PutEntity(ctx, other); err != nil {
				return err
			}
			r := &engram.Relation{ID: engram.NewID(), Namespace: ns, Source: mel, Target: other.ID, Label: "knows",
				CreatedAt: now, Evidence: []engram.Evidence{{MemoryID: ms[1].ID, Weight: 1}}}
			if err := tx.PutRelation(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		n := 0
		for f := (engram.EntityFilter{Limit: engram.MaxEntityLimit}); ; {
			page, err := e.ListEntities(ctx, sc, f)
			if err != nil {
				t.Fatal(err)
			}
			n += len(page.Entities)
			if f.Cursor = page.Next; f.Cursor == "" {
				return n
			}
		}
	}
	before := count()

	_, err = e.SplitEntity(ctx, sc, mel, engram.SplitRequest{Name: "Mel", Memories: []string{ms[1].ID}})
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "relations") {
		t.Errorf("split of an entity with %d relations: %v, want EINVALID saying it has too many relations", engram.MaxEntityLimit+1, err)
	}
	if after := count(); after != before {
		t.Errorf("the refused split left %d entities, want the %d before it", after, before)
	}
	d, err := e.GetEntity(ctx, sc, mel)
	if err != nil || d.Entity.Mentions != 2 {
		t.Errorf("Melanie after the refused split: %+v, %v; want both mentions kept", d, err)
	}
}

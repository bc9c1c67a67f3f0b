package enginetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// weightTo returns the weight of d's current relation to other, 0 when
// there is none.
func weightTo(d *engram.EntityDetail, other string) float64 {
	if r := relationTo(d, other); r != nil {
		return r.Weight
	}
	return 0
}

func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), field) {
		t.Errorf("%s: %v, want EINVALID naming %s", what, err, field)
	}
}

// testGraphMergeSplit: a merge moves mentions and relations to the
// target (joining duplicate relations, dropping the self-loop), takes the
// merged names as aliases and hides the merged entity but for its
// history; a split moves the listed memories' mentions and their share of
// the relations to a new entity. Both refuse bad input naming the field
// and another tenant's ids as unknown.
func testGraphMergeSplit(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	ctx := engram.WithActor(ctx, "curator")
	m1 := mustAddMemory(t, e, nsA, "Then Caroline went hiking in Yosemite with Melanie.")
	m2 := mustAddMemory(t, e, nsA, "Then Caroline camped in Yosemite with Mel.")
	m3 := mustAddMemory(t, e, nsA, "Then Caroline painted a sunrise with Mel and Melanie.")
	melanie, mel := entityByName(t, e, scA, "Melanie"), entityByName(t, e, scA, "Mel")
	caroline, yosemite := entityByName(t, e, scA, "Caroline"), entityByName(t, e, scA, "Yosemite")

	// Bad input and other scopes change nothing.
	_, err := e.MergeEntities(ctx, scA, melanie.ID, nil)
	wantField(t, "merge without from", err, "from")
	_, err = e.MergeEntities(ctx, scA, melanie.ID, []string{melanie.ID})
	wantField(t, "merge into itself", err, "from")
	_, err = e.MergeEntities(ctx, scA, melanie.ID, []string{"bad id!"})
	wantField(t, "merge of a malformed id", err, "from")
	for _, s := range []engram.Scope{scB, {Org: "other", Project: "p", User: "alice"}} {
		if _, err := e.MergeEntities(ctx, s, melanie.ID, []string{mel.ID}); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("merge in %+v: %v, want ENOTFOUND", s, err)
		}
		if _, err := e.SplitEntity(ctx, s, melanie.ID, engram.SplitRequest{Name: "X", Memories: []string{m1.ID}}); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("split in %+v: %v, want ENOTFOUND", s, err)
		}
		if _, err := e.EntityHistory(ctx, s, melanie.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("history in %+v: %v, want ENOTFOUND", s, err)
		}
	}
	if _, err := e.MergeEntities(ctx, scA, melanie.ID, []string{mel.ID, engram.NewID()}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("merge of an unknown entity: %v, want ENOTFOUND", err)
	}
	if got := entityByName(t, e, scA, "Mel"); got.Mentions != 2 {
		t.Errorf("a failed merge moved Mel's mentions: %d left", got.Mentions)
	}

	got, err := e.MergeEntities(ctx, scA, melanie.ID, []string{mel.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Mentions != 3 || !slices.Contains(got.Aliases, "Mel") {
		t.Errorf("merged Melanie: %d mentions, aliases %v; want 3 and Mel", got.Mentions, got.Aliases)
	}
	if _, err := e.GetEntity(ctx, scA, mel.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("the merged entity is still read: %v", err)
	}
	page, _ := e.ListEntities(ctx, scA, engram.EntityFilter{Limit: engram.MaxEntityLimit})
	if slices.ContainsFunc(page.Entities, func(en engram.Entity) bool { return en.ID == mel.ID }) {
		t.Errorf("the merged entity is still listed")
	}
	d, err := e.GetEntity(ctx, scA, melanie.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w := weightTo(d, caroline.ID); w != 3 {
		t.Errorf("Melanie–Caroline weight %v after the merge, want 3 (m1, m2, m3 joined)", w)
	}
	if w := weightTo(d, yosemite.ID); w != 2 {
		t.Errorf("Melanie–Yosemite weight %v after the merge, want 2", w)
	}
	for _, r := range d.Relations {
		if r.Source == r.Target || r.Other(melanie.ID) == mel.ID {
			t.Errorf("a relation to the merged entity or a self-loop is left: %+v", r)
		}
	}
	if n := countCurrent(d, caroline.ID); n != 1 {
		t.Errorf("%d current relations Melanie–Caroline, want the duplicates joined into 1", n)
	}
	hist, err := e.EntityHistory(ctx, scA, mel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) == 0 || hist[len(hist)-1].Op != engram.EntityMerged || !slices.Equal(hist[len(hist)-1].Related, []string{melanie.ID}) ||
		hist[len(hist)-1].Actor != "curator" {
		t.Errorf("Mel's history = %+v, want it to end merged into Melanie by curator", hist)
	}

	// Split m2 and m3 back off Melanie.
	_, err = e.SplitEntity(ctx, scA, melanie.ID, engram.SplitRequest{Memories: []string{m2.ID}})
	wantField(t, "split without a name", err, "name")
	_, err = e.SplitEntity(ctx, scA, melanie.ID, engram.SplitRequest{Name: "Mel"})
	wantField(t, "split without memories", err, "memories")
	other := mustAddMemory(t, e, nsA, "Nothing named here.")
	_, err = e.SplitEntity(ctx, scA, melanie.ID, engram.SplitRequest{Name: "Mel", Memories: []string{other.ID}})
	wantField(t, "split of a memory that does not mention it", err, "memories")
	_, err = e.SplitEntity(ctx, scA, melanie.ID, engram.SplitRequest{Name: "Mel", Memories: []string{m1.ID, m2.ID, m3.ID}})
	wantField(t, "split of every mention", err, "memories")

	split, err := e.SplitEntity(ctx, scA, melanie.ID, engram.SplitRequest{Name: "Mel", Memories: []string{m2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if split.Mentions != 1 || split.Type != melanie.Type || split.ID == mel.ID {
		t.Errorf("split entity %+v, want a new one with 1 mention and Melanie's type", split)
	}
	d, _ = e.GetEntity(ctx, scA, melanie.ID)
	ds, _ := e.GetEntity(ctx, scA, split.ID)
	if d.Entity.Mentions != 2 || weightTo(d, caroline.ID) != 2 || weightTo(ds, caroline.ID) != 1 || weightTo(ds, yosemite.ID) != 1 || weightTo(d, yosemite.ID) != 1 {
		t.Errorf("after the split: Melanie %d mentions, –Caroline %v, –Yosemite %v; Mel –Caroline %v, –Yosemite %v; want 2, 2, 1; 1, 1",
			d.Entity.Mentions, weightTo(d, caroline.ID), weightTo(d, yosemite.ID), weightTo(ds, caroline.ID), weightTo(ds, yosemite.ID))
	}
	hist, _ = e.EntityHistory(ctx, scA, melanie.ID)
	ops := []string{}
	for _, v := range hist {
		ops = append(ops, v.Op)
	}
	if n := len(ops); n < 3 || ops[0] != engram.EntityCreated || ops[n-2] != engram.EntityMerge || ops[n-1] != engram.EntitySplit {
		t.Errorf("Melanie's history ops = %v, want create … merge, split", ops)
	}
}

func countCurrent(d *engram.EntityDetail, other string) int {
	n := 0
	for _, r := range d.Relations {
		if r.Current() && r.Other(d.Entity.ID) == other {
			n++
		}
	}
	return n
}

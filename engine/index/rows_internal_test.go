package index

import (
	"fmt"
	"testing"

	"github.com/engramhq/engram"
)

func rowMemory(i int, ns engram.Namespace) engram.Memory {
	return engram.Memory{ID: engram.NewID(), Namespace: ns, Kind: engram.KindSemantic, Status: engram.StatusActive,
		Value: fmt.Sprintf("memory number %d with some words in it", i), Cues: []string{"cue"}}
}

// rowTexts returns texts caching at most budget bytes of memories, with
// loaded partitions for keys.
func rowTexts(budget int64, keys ...partKey) (*Texts, []*textPart) {
	t := NewTexts(0, 0, budget, nil)
	var ps []*textPart
	for _, k := range keys {
		p := &textPart{loaded: true}
		t.parts[k] = p
		ps = append(ps, p)
	}
	return t, ps
}

// The cached memories stay within the budget: a partition over it gives
// up its own first, then the least recently searched partitions give up
// all of theirs.
func TestRowCacheBudget(t *testing.T) {
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	m := rowMemory(0, ns)
	per := rowBytes(&m)
	tx, ps := rowTexts(per*10, partKey{"o", "p", "old"}, partKey{"o", "p", "u"})
	old, cur := ps[0], ps[1]
	old.used.Store(1)
	cur.used.Store(2)
	for i := range 6 {
		m := rowMemory(i, engram.Namespace{Org: "o", Project: "p", User: "old"})
		tx.cacheRow(old, &m, 0)
	}
	for i := range 30 {
		m := rowMemory(i, ns)
		tx.cacheRow(cur, &m, 0)
		if got := tx.rowTotal.Load(); got > tx.rowBudget {
			t.Fatalf("after %d memories the cache holds %d bytes, over the budget of %d", i+1, got, tx.rowBudget)
		}
	}
	if len(old.rows.m) != 0 {
		t.Errorf("the least recently searched partition kept %d memories", len(old.rows.m))
	}
	if n := len(cur.rows.m); n < 7 {
		t.Errorf("the partition in use kept %d memories, want at least 7 of a budget for 10", n)
	}
	if got := old.rows.bytes + cur.rows.bytes; got != tx.rowTotal.Load() {
		t.Errorf("partitions hold %d bytes, the total says %d", got, tx.rowTotal.Load())
	}
	tx.forgetRows(cur, []string{"unknown"})
	tx.dropRows(cur)
	if tx.rowTotal.Load() != 0 || cur.rows.bytes != 0 {
		t.Errorf("after dropping everything %d bytes are counted", tx.rowTotal.Load())
	}
}

// A memory read by a search is not kept when an access flush came after
// the search began, or a change was applied to the partition after the
// sequence its transaction sees; and a view gives out only memories its
// scope contains.
func TestRowCacheKeepsOnlyCurrent(t *testing.T) {
	ns := engram.Namespace{Org: "o", Project: "p", User: "u", Agent: "a1"}
	tx, ps := rowTexts(1<<20, partKey{"o", "p", "u"})
	p := ps[0]
	view := func(s engram.Scope, seen, epoch int64) *textView {
		return &textView{scope: s, parts: ps, seen: []int64{seen}, t: tx, epoch: epoch}
	}
	user := engram.Scope{Org: "o", Project: "p", User: "u"}
	m := rowMemory(1, ns)

	p.changed = 5
	view(user, 4, 0).Remember([]engram.Memory{m})
	if len(p.rows.m) != 0 {
		t.Fatal("kept a memory read before the last change applied")
	}
	tx.Touched(engram.Namespace{Org: "o", Project: "p"}, nil)
	view(user, 5, 0).Remember([]engram.Memory{m})
	if len(p.rows.m) != 0 {
		t.Fatal("kept a memory read by a search that began before an access flush")
	}
	view(user, 5, tx.Epoch()).Remember([]engram.Memory{m})
	if len(p.rows.m) != 1 {
		t.Fatal("did not keep a current memory")
	}

	into := map[string]*engram.Memory{}
	other := user
	other.Agent = "a2"
	if miss := view(other, 5, tx.Epoch()).Memories([]string{m.ID}, into); len(miss) != 1 || len(into) != 0 {
		t.Fatalf("a scope of another agent got %v, missed %v", into, miss)
	}
	if miss := view(user, 5, tx.Epoch()).Memories([]string{m.ID, "unknown"}, into); len(miss) != 1 || miss[0] != "unknown" || into[m.ID] == nil {
		t.Fatalf("the user's scope got %v, missed %v", into, miss)
	}

	tx.Touched(engram.Namespace{Org: "o", Project: "p"}, []string{m.ID})
	if len(p.rows.m) != 0 {
		t.Fatal("an access flush did not drop the memory it touched")
	}
}
